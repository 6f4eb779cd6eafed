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

/**
 * After each full collection V8 lets the old generation grow to up to four times what survived
 * before the next one. Under load, with the young generation capped (--max-semi-space-size=2 in
 * production), requests in flight outlive two scavenges and are promoted, so the old generation
 * filled with garbage: one process grew from ~30 MB of live heap to ~78 MB before its first full
 * collection, the largest part of its peak RSS (docs/performance.md "Peak RSS of the compiled
 * service"). A growth of 30% (or V8's minimum step of a few MB) keeps the heap near
 * what is live: peak 131.7-138.6 MB against 145.8-146.3 MB for the same 40,000 requests, for more
 * full collections and no CPU per request measurable here. It is not a limit: a heap whose live
 * part grows (a burst that queues) still grows with it, so it cannot crash the process as
 * --max-old-space-size could. Set here, not on the command line: NODE_OPTIONS (the image) refuses
 * this flag, and V8 reads it at every full collection, so every entry point gets it from here.
 */
v8.setFlagsFromString('--heap-growing-percent=30');
