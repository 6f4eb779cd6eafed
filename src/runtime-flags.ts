import v8 from 'node:v8';

/**
 * Imported first by the entry points (src/main.ts, src/worker-main.ts).
 *
 * Prisma 7's query compiler is a large WebAssembly module. By default V8 compiles it twice
 * (Liftoff, then TurboFan in the background), and the optimised copy costs ~70 MB of resident
 * memory (service peak 276-283 MB -> 194-207 MB under the bench) with no measurable gain: the hot
 * paths run plain SQL, and operator API calls through Prisma measured the same (docs/performance.md).
 * V8 reads this flag when it compiles a module, which happens at the first Prisma query, after
 * this line.
 */
v8.setFlagsFromString('--liftoff-only');
