import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // 2 cores, three files at a time, each on its own database: a file spends about a third of
    // its time importing the app (CPU) and much of the rest waiting on PostgreSQL, child
    // processes or Chromium, so a third file fills the cores (15.2 -> see docs/performance.md).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
