import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests that guard the ledger, the state tables and the provider-operation lifecycle, for
 * `npm run test:mutation` (Stryker): only these run against each mutant, so a run is minutes, not
 * hours (docs/testing.md). MUTATION_AREA (states, lifecycle, ledger; unset: all) picks the files
 * that kill the mutants of one area, fast files first (a mutant stops at its first failing test).
 * Not mergeConfig: it would append this include to the base one (the whole suite).
 */
const AREAS: Record<string, string[]> = {
  states: [
    'test/ledger/state-tables.test.ts',
    'test/api/bill-states.test.ts',
    'test/page/payment-states.test.ts',
    'test/reliability/state-guards.test.ts',
  ],
  lifecycle: [
    'test/providers/lifecycle-send.test.ts',
    'test/providers/conflict-rules.test.ts',
    'test/providers/conflicts.test.ts',
    'test/providers/lifecycle.test.ts',
    'test/payout/reconcile.test.ts',
    'test/refund/refund-reconcile.test.ts',
    'test/providers/payment-lifecycle.test.ts',
    'test/refund/refund-processing.test.ts',
  ],
  ledger: [
    'test/ledger/postings.test.ts',
    'test/ledger/ledger.test.ts',
    'test/ledger/double-entry.test.ts',
    'test/ledger/conflict-debt.test.ts',
    'test/ledger/one-writer.test.ts',
  ],
};
const area = process.env.MUTATION_AREA;
const include = area ? AREAS[area] : [...new Set(Object.values(AREAS).flat())];
if (!include) throw new Error(`MUTATION_AREA must be one of ${Object.keys(AREAS).join(', ')}`);

export default defineConfig({
  test: {
    ...base.test,
    include,
    maxWorkers: 1,
  },
});
