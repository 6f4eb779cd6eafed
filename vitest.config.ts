import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Each worker process keeps its modules from one file to the next (isolate: false): importing
    // the app cost every file ~2 s of CPU (285 s of 900 in a full run; 19 s without). Files stay
    // independent because state lives in what each file builds (its own database, config and
    // app); nothing in src/ keeps module-level state a test relies on. Two files at a time: a
    // third made the CPU-bound ones (the CLI's child processes, bcrypt bursts) slower than it
    // saved (docs/adr/0055-tests-real-database-and-run-time.md).
    isolate: false,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
