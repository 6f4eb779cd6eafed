import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { grantedMerchant, refundCount, refundPartial, refundedAmount, balance } from '../refund/helpers.js';
import { errorHandler } from '../../src/plugins/error-handler.js';
import {
  INPUT_CHECKS, INTERNAL_INVARIANTS, MONEY_FOREIGN_KEYS, MONEY_INVARIANTS, classifyDatabaseError,
} from '../../src/db/database-error.js';

/**
 * Errors that say whose fault (issue 28 item 6, src/db/database-error.ts): a write refused by a
 * rule that guards money is the service's fault, a 500 with an alert-level log line and a
 * metric; a value from the request that the database refused as a value stays a 422.
 */

const logs: string[] = [];
let t: TestApp;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  t = await setupTestApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line: string) => { logs.push(line); } } });
});
afterAll(async () => { await t.close(); });

async function violations(constraint: string): Promise<number> {
  const r = await t.app.inject({ method: 'GET', url: '/metrics', headers: admin });
  expect(r.statusCode).toBe(200);
  const line = r.body.split('\n').find((l) => l.startsWith(`payments_invariant_violations_total{constraint="${constraint}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The pg error a statement raises (a real one, from the test database). */
async function pgError(sql: string): Promise<unknown> {
  try {
    await t.db.pool.query(sql);
  } catch (e) {
    return e;
  }
  throw new Error(`no error from ${sql}`);
}

describe('a broken money invariant is the service\'s fault', () => {
  it('a refund that trips the payments CHECK (a row corrupted by hand) answers 500 general_error, logs an alert and counts it; nothing changes', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    // A hand edit that slipped past the CHECK (dropped, row changed, put back NOT VALID, as a
    // migration of old rows would): the row now breaks the rule, and the next write of it is refused.
    const c = await t.db.pool.connect();
    try {
      const def = (await c.query<{ def: string }>(
        `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'payments_amounts_check' AND conrelid = 'payments'::regclass`)).rows[0]!.def;
      await c.query('BEGIN');
      await c.query('ALTER TABLE payments DROP CONSTRAINT payments_amounts_check');
      await c.query('UPDATE payments SET amount_received = -1 WHERE id = $1', [p.paymentId]);
      await c.query(`ALTER TABLE payments ADD CONSTRAINT payments_amounts_check ${def} NOT VALID`);
      await c.query('COMMIT');
    } finally {
      c.release();
    }
    const before = await violations('payments_amounts_check');
    const balanceBefore = await balance(t, m.merchantId);
    logs.length = 0;

    const res = await refundPartial(t, m, p.paymentId, '10.00');

    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ success: false, message: 'api:error.general_error' });
    const alerts = logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.alert === true);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      level: 50, event: 'invariant_violation', constraint: 'payments_amounts_check', money: true, sqlstate: '23514',
      where: 'POST /api/v1/refund/partial/create',
    });
    expect(await violations('payments_amounts_check')).toBe(before + 1);
    // The transaction rolled back: no refund, nothing refunded, the balance as it was.
    expect(await refundCount(t, p.paymentId)).toBe(0);
    expect(await refundedAmount(t, p.paymentId)).toBe('0.00');
    expect(await balance(t, m.merchantId)).toEqual(balanceBefore);
  });

  it('an overdraft stays the service\'s own refusal (balance_not_enough), not an alert', async () => {
    const m = await grantedMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '100.00' });
    // The payment credited 100; spend most of it so the refund overdraws.
    const adj = await t.app.inject({
      method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/balance-adjustments`, headers: admin,
      payload: { currency: 'RUB', amount: '-95.00', reason: 'test: spend most of it' },
    });
    expect(adj.statusCode).toBe(201);
    logs.length = 0;
    const res = await refundPartial(t, m, p.paymentId, '50.00');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'api:error.balance_not_enough' });
    expect(logs.filter((l) => l.includes('"alert":true'))).toEqual([]);
  });
});

describe('a value from the request that the database refuses stays the client\'s fault', () => {
  it('too long, out of range, not a number, a NUL byte, a field-format CHECK: 422 with errors, no alert; a money CHECK: 500', async () => {
    const thrown = {
      long: await pgError(`DO $$ DECLARE v varchar(2); BEGIN v := 'abc'; END $$`),
      range: await pgError(`SELECT 1e12::numeric(10,2)`),
      nan: await pgError(`SELECT 'x'::int`),
      nul: await pgError(`SELECT convert_from('\\x610062'::bytea, 'UTF8')`),
      format: await pgError(`INSERT INTO fx_rates (currency, rub_per_unit, updated_at) VALUES ('USD', -1, now())`),
      money: await pgError(`DO $$ BEGIN RAISE EXCEPTION 'overdraft' USING ERRCODE = 'check_violation', CONSTRAINT = 'balances_non_negative_check'; END $$`),
    };
    const app = Fastify({ logger: { level: 'info', stream: { write: (l: string) => { logs.push(l); } } } });
    await app.register(errorHandler);
    app.get('/:which', async (req) => { throw thrown[(req.params as { which: keyof typeof thrown }).which]; });
    await app.ready();
    logs.length = 0;
    for (const which of ['long', 'range', 'nan', 'nul', 'format'] as const) {
      const r = await app.inject({ method: 'GET', url: `/${which}` });
      expect(r.statusCode, which).toBe(422);
      expect(r.json(), which).toEqual({ success: false, message: 'The given data was invalid.', errors: {} });
    }
    expect(logs.filter((l) => l.includes('"alert":true'))).toEqual([]);
    const r = await app.inject({ method: 'GET', url: '/money' });
    expect(r.statusCode).toBe(500);
    expect(r.json()).toEqual({ success: false, message: 'api:error.general_error' });
    expect(logs.filter((l) => l.includes('"alert":true'))).toHaveLength(1);
    await app.close();
  });
});

describe('classification', () => {
  it('every CHECK of the migrated database and every trigger guard is classified once: client input, money or internal', async () => {
    const r = await t.db.pool.query<{ conname: string }>(
      `SELECT DISTINCT c.conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE c.contype = 'c' AND n.nspname = 'public' AND c.conislocal`);
    // Trigger guards name their CONSTRAINT in the RAISE (prisma/migrations/*_live_test_walls).
    const fns = await t.db.pool.query<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE prosrc LIKE '%ERRCODE%check_violation%'`);
    const raised = fns.rows.flatMap((f) => [...f.src.matchAll(/CONSTRAINT\s*=\s*'([^']+)'/g)].map((m) => m[1]!));
    const names = [...new Set([...r.rows.map((x) => x.conname), ...raised])].sort();
    expect(raised).toContain('live_and_test_never_meet');
    const lists = [INPUT_CHECKS, MONEY_INVARIANTS, INTERNAL_INVARIANTS];
    const unclassified = names.filter((n) => !lists.some((l) => l.has(n)));
    const twice = names.filter((n) => lists.filter((l) => l.has(n)).length > 1);
    expect(unclassified).toEqual([]);
    expect(twice).toEqual([]);
    expect(names).toContain('balances_non_negative_check');
    // And no list names a constraint that no longer exists (the pseudo-names stand for SQLSTATEs).
    const stale = lists.flatMap((l) => [...l]).filter((n) => !names.includes(n) && n !== 'restrict_violation' && n !== 'raise_exception');
    expect(stale).toEqual([]);
  });

  it('the foreign keys that hold the books (a leg on an existing account) are money invariants, and exist', async () => {
    const r = await t.db.pool.query<{ conname: string }>(
      `SELECT c.conname FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid = 'ledger_entries'::regclass AND c.confrelid = 'ledger_accounts'::regclass`);
    expect(r.rows.map((x) => x.conname).sort()).toEqual([...MONEY_FOREIGN_KEYS].sort());
    const e = await pgError(`WITH t AS (INSERT INTO ledger_transfers (id, kind, ref_type, ref_id) VALUES ('ADJUSTMENT:fk1', 'ADJUSTMENT', 'test', 'fk1') RETURNING id, created_at)
      INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount, created_at)
      SELECT id, 1, 'RUB', 'RUB:adjustments', 'RUB:merchant:ghost:available', 1, created_at FROM t`);
    expect(classifyDatabaseError(e)).toMatchObject({ fault: 'invariant', sqlstate: '23503', constraint: 'ledger_entries_credit_account_fkey', money: true });
    // Through Prisma's adapter the constraint is read back from the message.
    const prisma = { code: 'P2003', meta: { driverAdapterError: { cause: {
      originalCode: '23503', originalMessage: 'insert or update on table "ledger_entries" violates foreign key constraint "ledger_entries_debit_account_fkey"', kind: 'postgres',
    } } } };
    expect(classifyDatabaseError(prisma)).toMatchObject({ fault: 'invariant', constraint: 'ledger_entries_debit_account_fkey', money: true });
    // Any other foreign key stays unclassified (the generic 500), as before.
    expect(classifyDatabaseError({ code: '23503', constraint: 'bills_shop_id_fkey', message: 'x' })).toBeNull();
  });

  it('reads the SQLSTATE and constraint from node-postgres errors and from Prisma\'s pg adapter', () => {
    expect(classifyDatabaseError({ code: '23514', constraint: 'balances_non_negative_check', message: 'x' }))
      .toMatchObject({ fault: 'invariant', constraint: 'balances_non_negative_check', money: true });
    expect(classifyDatabaseError({ code: '23514', constraint: 'bills_ttl_check', message: 'x' })).toMatchObject({ fault: 'client' });
    expect(classifyDatabaseError({ code: '23001', message: 'ledger_entries is append-only (UPDATE refused)' }))
      .toMatchObject({ fault: 'invariant', constraint: 'restrict_violation', money: true });
    // Prisma keeps the SQLSTATE and the message; the constraint is read back from the message.
    const prisma = { code: 'P2010', meta: { driverAdapterError: { cause: {
      originalCode: '23514', originalMessage: 'new row for relation "payments" violates check constraint "payments_chargeback_bound_check"', kind: 'postgres',
    } } } };
    expect(classifyDatabaseError(prisma)).toMatchObject({ fault: 'invariant', constraint: 'payments_chargeback_bound_check' });
    const prismaLong = { code: 'P2000', meta: { driverAdapterError: { cause: { originalCode: '22001', originalMessage: 'value too long', kind: 'LengthMismatch' } } } };
    expect(classifyDatabaseError(prismaLong)).toMatchObject({ fault: 'client', sqlstate: '22001' });
    // A trigger's message without its constraint name is still not blamed on the client.
    expect(classifyDatabaseError({ cause: { code: '23514', message: 'test-mode payments x cannot go through the live connector y' } }))
      .toMatchObject({ fault: 'invariant', constraint: 'unnamed_check', money: true });
    // Not a refusal of a value or a rule: left to the generic 500 (a deadlock, a lost connection).
    expect(classifyDatabaseError({ code: '40P01', message: 'deadlock detected' })).toBeNull();
    expect(classifyDatabaseError(new Error('boom'))).toBeNull();
  });
});
