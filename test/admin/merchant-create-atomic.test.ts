import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { admin, adminMerchant } from './helpers.js';

// STYLE.md "One transaction stack for what must be atomic": a merchant, its test twin and
// their balance rows are created together or not at all.
let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp();
  // This file's own database: balance rows of a merchant named 'Refused balances' are refused
  // by a constraint-like trigger, a failure that comes after the merchant row was inserted.
  await t.db.pool.query(`
    CREATE FUNCTION test_refuse_balances() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM merchants WHERE id = NEW.merchant_id AND name = 'Refused balances') THEN
        RAISE EXCEPTION 'balances refused for this test' USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_refuse_balances BEFORE INSERT ON balances FOR EACH ROW EXECUTE FUNCTION test_refuse_balances();`);
});
afterAll(async () => { await t.close(); });

const countOf = async (sql: string, values: unknown[]) => Number((await t.db.pool.query<{ n: string }>(sql, values)).rows[0]!.n);

describe('merchant creation is one transaction', () => {
  it('a failure after the merchant row (its balance rows refused) leaves no half merchant, no twin, no ledger accounts', async () => {
    const email = `half-${process.pid}-${Date.now()}@example.test`;
    const r = await admin(t, 'POST', '/merchants', { name: 'Refused balances', email });
    expect(r.status).not.toBe(201);
    expect(await countOf('SELECT count(*) AS n FROM merchants WHERE email = $1 OR name = $2', [email, 'Refused balances'])).toBe(0);
    expect(await countOf(`SELECT count(*) AS n FROM ledger_accounts a WHERE a.merchant_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM merchants m WHERE m.id = a.merchant_id)`, [])).toBe(0);
    // The same email can be used once the cause is gone: nothing of the refused attempt holds it.
    const ok = await admin(t, 'POST', '/merchants', { name: 'Fine now', email });
    expect(ok.status).toBe(201);
  });

  it('a created merchant and its test twin each have a balance row per currency from the start', async () => {
    const m = await adminMerchant(t);
    const currencies = await countOf(`SELECT count(*) AS n FROM unnest(enum_range(NULL::"Currency")) c`, []);
    expect(await countOf('SELECT count(*) AS n FROM balances WHERE merchant_id = $1', [m.id])).toBe(currencies);
    expect(await countOf(`SELECT count(*) AS n FROM balances b JOIN merchants tw ON tw.id = b.merchant_id
      WHERE tw.live_merchant_id = $1`, [m.id])).toBe(currencies);
  });
});
