import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((n) => newest(join(path, n))));
}

/**
 * dist/ as `npm run build` makes it: built here when missing or older than the sources, so the
 * test works from a clean clone (.ci/run builds before `npm test`, so CI finds it fresh).
 */
export function ensureBuilt(): void {
  const stamp = 'dist/main.js';
  const inputs = Math.max(newest('src'), newest('scripts'), newest('tsconfig.build.json'), newest('tsconfig.json'));
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= inputs) return;
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit', timeout: 600_000 });
}
