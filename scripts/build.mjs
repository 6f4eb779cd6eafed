// npm run build: compiles src/ (with the generated Prisma client) to dist/ and copies beside it
// the files the app reads at run time through import.meta.url (cabinet views and assets, the
// favicon...). Migrations are read from prisma/migrations at the project root, so they are not copied.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
cpSync('src', 'dist', {
  recursive: true,
  filter: (p) => statSync(p).isDirectory() || !p.endsWith('.ts'),
});
