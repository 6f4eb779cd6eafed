// Mutation testing of the money kernel (issue 28 item 8): `npm run test:mutation`, not in CI.
// Mutates the ledger and the state tables and runs only the tests that guard them
// (vitest.mutation.config.ts). Results: docs/testing.md; the HTML report in reports/mutation/.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  mutate: [
    'src/domain/ledger/**/*.ts',
    'src/domain/*/*.states.ts',
    'src/domain/transitions.ts',
  ],
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Two cores shared with others: one test process at a time.
  concurrency: 1,
  timeoutMS: 30000,
  ignorePatterns: ['.data', 'reports', 'dist', 'bench/results'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
