import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { verifyLedger } from '../../src/domain/ledger/ledger.js';
import { createEmptyDatabase } from '../helpers/app.js';

const LEDGER_MIGRATION = '20261123030000_double_entry_ledger';

// An empty database, migrated up to the migration before the double-entry ledger, filled with
// one-sided entries of every kind as the previous code wrote them, then migrated to the end.
let db: { url: string; drop(): Promise<void> };
let c: pg.Client;
beforeAll(async () => {
  db = await createEmptyDatabase('ledger');
  const before = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const m of listMigrations().filter((m) => m.name < LEDGER_MIGRATION)) cpSync(join(MIGRATIONS_DIR, m.name), join(before, m.name), { recursive: true });
  await migrate(db.url, before);
  c = new pg.Client({ connectionString: db.url });
  await c.connect();
});
afterAll(async () => { await c?.end(); await db.drop(); });

const balances = async () => (await c.query(
  `SELECT merchant_id, currency::text, available::text, locked::text, hold::text FROM balances ORDER BY 1, 2`)).rows;

describe('the double-entry migration', () => {
  it('turns one-sided entries into balanced transfers and changes no merchant balance', async () => {
    await c.query(`
      INSERT INTO merchants (id, name, email, api_token_hash, api_token_enc) VALUES
        ('mA', 'A', 'a@example.test', repeat('a', 64), 'x'), ('mB', 'B', 'b@example.test', repeat('b', 64), 'x');
      INSERT INTO balances (merchant_id, currency) SELECT m, c FROM unnest(ARRAY['mA', 'mB']) m, unnest(enum_range(NULL::"Currency")) c;
      INSERT INTO shops (id, merchant_id, name) VALUES ('sA', 'mA', 'Shop');
      INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, status) VALUES ('b1', 'mA', 'sA', 1000, 'RUB', 'SUCCESS'), ('b2', 'mA', 'sA', 10, 'USD', 'SUCCESS');
      INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, amount_received, bill_currency, account_currency, commission, account_amount, rate) VALUES
        ('pay1', 'b1', 'mA', 'sA', 'SUCCESS', 'BANK_CARD', 1000, 1000, 'RUB', 'RUB', 35, 965, NULL),
        ('pay2', 'b2', 'mA', 'sA', 'SUCCESS', 'BANK_CARD', 925, 925, 'USD', 'USD', 0.2, 9.8, 92.5);
      INSERT INTO ledger_entries (merchant_id, currency, kind, ref_type, ref_id, delta_available, delta_locked, delta_hold) VALUES
        ('mA', 'RUB', 'PAYMENT_CREDIT', 'payment', 'pay1', 965, 0, 0),
        ('mA', 'USD', 'PAYMENT_CREDIT', 'payment', 'pay2', 9.8, 0, 0),
        ('mA', 'RUB', 'ADJUSTMENT', 'adjustment', 'adj1', 500, 0, 0),
        ('mA', 'RUB', 'PAYOUT_LOCK', 'payout', 'po1', -106, 100, 6),
        ('mA', 'RUB', 'PAYOUT_DEBIT', 'payout', 'po1', 0, -100, -6),
        ('mA', 'RUB', 'PAYOUT_LOCK', 'payout', 'po2', -207, 200, 7),
        ('mA', 'RUB', 'PAYOUT_RELEASE', 'payout', 'po2', 207, -200, -7),
        ('mA', 'RUB', 'PAYOUT_LOCK', 'payout', 'po3', -53, 50, 3),
        ('mA', 'RUB', 'REFUND_LOCK', 'refund', 'rf1', -50, 50, 0),
        ('mA', 'RUB', 'REFUND_DEBIT', 'refund', 'rf1', 0, -50, 0),
        ('mA', 'RUB', 'REFUND_LOCK', 'refund', 'rf2', -30, 30, 0),
        ('mB', 'RUB', 'ADJUSTMENT', 'adjustment', 'adj2', 100, 0, 0),
        ('mB', 'RUB', 'ADJUSTMENT', 'adjustment', 'adj3', -40, 0, 0),
        ('mB', 'RUB', 'PAYMENT_CREDIT', 'payment', 'ghost', 10, 0, 0),
        ('mB', 'EUR', 'REFUND_RELEASE', 'refund', 'odd', 5, 0, 2.5);
      UPDATE balances b SET available = s.a, locked = s.l, hold = s.h
        FROM (SELECT merchant_id, currency, sum(delta_available) a, sum(delta_locked) l, sum(delta_hold) h FROM ledger_entries GROUP BY 1, 2) s
       WHERE s.merchant_id = b.merchant_id AND s.currency = b.currency;`);
    const before = await balances();
    expect(before.find((b) => b.merchant_id === 'mA' && b.currency === 'RUB')).toMatchObject({ available: '1226.00000000', locked: '80.00000000', hold: '3.00000000' });

    expect(await migrate(db.url)).toEqual([LEDGER_MIGRATION, ...listMigrations().map((m) => m.name).filter((n) => n > LEDGER_MIGRATION)]);

    expect(await balances()).toEqual(before);
    const books = await verifyLedger(c);
    expect(books.problems).toEqual([]);
    expect(books.ok).toBe(true);
    const legs = async (id: string) => (await c.query(
      `SELECT debit_account || ' -> ' || credit_account || ' ' || amount::numeric(20,2) AS l FROM ledger_entries WHERE transfer_id = $1 ORDER BY leg`, [id])).rows.map((r) => r.l);
    expect(await legs('PAYMENT_CREDIT:pay1')).toEqual(['RUB:acquirer_clearing:sandbox -> RUB:merchant:mA:available 965.00', 'RUB:acquirer_clearing:sandbox -> RUB:fee_revenue 35.00']);
    expect(await legs('PAYMENT_CREDIT:pay2')).toEqual(['RUB:acquirer_clearing:sandbox -> RUB:fx 925.00', 'USD:fx -> USD:merchant:mA:available 9.80', 'USD:fx -> USD:fee_revenue 0.20']);
    expect(await legs('PAYOUT_DEBIT:po1')).toEqual(['RUB:merchant:mA:locked -> RUB:payout_clearing:sandbox 100.00', 'RUB:merchant:mA:hold -> RUB:fee_revenue 6.00']);
    expect(await legs('REFUND_DEBIT:rf1')).toEqual(['RUB:merchant:mA:locked -> RUB:refund_clearing 50.00']);
    expect(await legs('ADJUSTMENT:adj3')).toEqual(['RUB:merchant:mB:available -> RUB:adjustments 40.00']);
    // A shape no code wrote still lands where it was, against the adjustments account.
    expect(await legs('REFUND_RELEASE:odd')).toEqual(['EUR:adjustments -> EUR:merchant:mB:available 5.00', 'EUR:adjustments -> EUR:merchant:mB:hold 2.50']);
    const accounts = await c.query(`SELECT count(*)::int AS n FROM ledger_accounts WHERE merchant_id IS NOT NULL`);
    expect(accounts.rows[0].n).toBe(2 * 3 * 3);
  });
});
