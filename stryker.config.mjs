// Mutation testing of the money kernel (issue 28 item 8): `npm run test:mutation`, not in CI.
// Mutates the ledger, the state tables and the provider-operation lifecycle (claim, reconcile,
// conflicts) and runs only the tests that guard them
// (vitest.mutation.config.ts). Results: docs/testing.md; the HTML report in reports/mutation/.
// MUTATION_AREA (states, lifecycle, ledger) picks that area's tests and keeps its reports apart.
const area = process.env.MUTATION_AREA ?? 'all';
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  mutate: [
    'src/domain/ledger/**/*.ts',
    'src/domain/*/*.states.ts',
    'src/kernel/transitions.ts',
    'src/domain/operations/lifecycle.ts',
    'src/domain/operations/reconcile.ts',
    'src/domain/providers/conflict.ts',
  ],
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${area}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${area}/mutation.json` },
  // Two cores shared with others: one test process at a time.
  concurrency: 1,
  timeoutMS: 30000,
  ignorePatterns: ['.data', 'reports', 'dist', 'bench/results', '.stryker-tmp*'],
  tempDirName: `.stryker-tmp-${area}`,
  cleanTempDir: true,
  // `--incremental` keeps results in this file so a re-run tests only the changed mutants.
  incrementalFile: `reports/mutation/${area}/stryker-incremental.json`,
};
