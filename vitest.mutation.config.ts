import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests that guard the ledger, the state tables and the provider-operation lifecycle, for `npm run test:mutation` (Stryker):
 * only these run against each mutant, so a run is minutes, not hours (docs/testing.md). Not
 * mergeConfig: it would append this include to the base one (the whole suite).
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/ledger/**/*.test.ts',
      'test/page/payment-states.test.ts',
      'test/api/bill-states.test.ts',
      'test/reliability/state-guards.test.ts',
      'test/refund/refund-processing.test.ts',
      'test/providers/lifecycle.test.ts',
      'test/providers/conflicts.test.ts',
      'test/refund/refund-reconcile.test.ts',
      'test/payout/reconcile.test.ts',
    ],
    maxWorkers: 1,
  },
});
