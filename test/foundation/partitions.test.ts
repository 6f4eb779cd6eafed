import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { dropExpiredOutbox, ensurePartitions, monthStart, PARTITIONED_TABLES, partitionName } from '../../src/db/partitions.js';
import { startPartitionWorker } from '../../src/workers/partitions.js';
import { verifyLedger } from '../../src/domain/ledger/ledger.js';
import { createEmptyDatabase, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';

const PARTITION_MIGRATION = '20261124090000_monthly_partitions';
const log = pino({ level: 'silent' });

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const q = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => (await t.db.pool.query(sql, params)).rows as T[];
const exists = async (name: string) => (await q<{ r: string | null }>(`SELECT to_regclass($1)::text AS r`, [`public.${name}`]))[0]!.r !== null;
const partitionsOf = async (table: string) => (await q<{ name: string }>(
  `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`, [table])).map((r) => r.name);
const rubBalance = async (merchantId: string) => (await q<{ available: string; locked: string; hold: string }>(
  `SELECT available::text, locked::text, hold::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [merchantId]))[0];

describe('partitions are created ahead', () => {
  it('the migrated database has this month and 3 ahead of each table, and a DEFAULT partition', async () => {
    for (const table of PARTITIONED_TABLES) {
      const parts = await partitionsOf(table);
      expect(parts).toContain(`${table}_default`);
      for (let i = 0; i <= 3; i++) expect(parts).toContain(partitionName(table, monthStart(new Date(), i)));
    }
  });

  it('ensurePartitions creates each missing month once, from several processes at the same time, and then nothing', async () => {
    const at = new Date(Date.UTC(2031, 4, 15)); // May 2031: 2031-05 .. 2031-08 are missing
    const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: t.dbUrl, max: 2 }));
    try {
      const created = await Promise.all(pools.map((p) => ensurePartitions(p, 3, at)));
      const all = created.flat().sort();
      const expected = PARTITIONED_TABLES.flatMap((tb) => [0, 1, 2, 3].map((i) => partitionName(tb, monthStart(at, i)))).sort();
      expect(all).toEqual(expected); // each created by exactly one of them
      expect(await ensurePartitions(pools[0]!, 3, at)).toEqual([]);
      for (const name of expected) expect(await exists(name)).toBe(true);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('the partition worker creates PARTITION_MONTHS_AHEAD months when it starts', async () => {
    const sixAhead = partitionName('payments', monthStart(new Date(), 6));
    expect(await exists(sixAhead)).toBe(false);
    const w = startPartitionWorker({ config: { ...t.config, partitionMonthsAhead: 6 }, db: t.db, services: t.app.services, log });
    await w.stop(); // waits for the tick in flight
    for (const table of PARTITIONED_TABLES) expect(await exists(partitionName(table, monthStart(new Date(), 6)))).toBe(true);
  });
});

describe('a month without its partition', () => {
  it('a payment made while its month has no partition is stored (DEFAULT partition) and moves into its month when the month is created', async () => {
    const month = monthStart(new Date());
    // This month's partitions removed: as if the service had never created them.
    for (const table of PARTITIONED_TABLES) {
      expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM "${partitionName(table, month)}"`))[0]!.n).toBe(0);
      await q(`DROP TABLE "${partitionName(table, month)}"`);
    }
    const m = await createMerchant(t);
    const billId = await createBill(t, m, { amount: '150.00' });
    const paid = await payRequest(t, billId, cardForm());
    expect(paid.statusCode).toBe(200);
    const paymentId = paid.json().payment_id as string;
    const where = async () => ({
      payment: (await q<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM payments WHERE id = $1`, [paymentId]))[0]?.p,
      entries: (await q<{ p: string }>(`SELECT DISTINCT tableoid::regclass::text AS p FROM ledger_entries WHERE transfer_id = $1`, [`PAYMENT_CREDIT:${paymentId}`])).map((r) => r.p),
      event: (await q<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM outbox_events WHERE aggregate_id = $1`, [paymentId]))[0]?.p,
    });
    expect(await where()).toEqual({ payment: 'payments_default', entries: ['ledger_entries_default'], event: 'outbox_events_default' });
    const balance = await rubBalance(m.merchantId);
    expect(balance!.available).toBe('150.00000000');

    const created = await ensurePartitions(t.db.pool, 0);
    expect(created.sort()).toEqual(PARTITIONED_TABLES.map((tb) => partitionName(tb, month)).sort());
    expect(await where()).toEqual({
      payment: partitionName('payments', month), entries: [partitionName('ledger_entries', month)], event: partitionName('outbox_events', month),
    });
    expect(await rubBalance(m.merchantId)).toEqual(balance);
    const books = await verifyLedger(t.db.pool);
    expect(books.problems).toEqual([]);
    // The moved entries are still append-only, the payment's id still unique, its status readable.
    await expect(q(`UPDATE ledger_entries SET amount = amount + 1 WHERE transfer_id = $1`, [`PAYMENT_CREDIT:${paymentId}`])).rejects.toThrow(/append-only/);
    await expect(q(`DELETE FROM ledger_entries WHERE transfer_id = $1`, [`PAYMENT_CREDIT:${paymentId}`])).rejects.toThrow(/append-only/);
    await expect(q(`INSERT INTO payments (id, bill_id, merchant_id, shop_id, method, amount, bill_currency, account_currency, created_at)
                    VALUES ($1, $2, $3, $4, 'BANK_CARD', 1, 'RUB', 'RUB', now() - interval '3 months')`, [paymentId, billId, m.merchantId, m.shopId]))
      .rejects.toThrow(/payment_keys_pkey/);
    const st = await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${paymentId}`, headers: m.auth });
    expect(st.json()).toMatchObject({ id: paymentId, status: 'SUCCESS' });
  });
});

describe('retention of delivered outbox events', () => {
  it('drops a month only when every event in it is delivered or dead past OUTBOX_RETENTION_DAYS, with the attempts of dropped events', async () => {
    const m = await createMerchant(t);
    const now = new Date();
    const month = (k: number) => monthStart(now, k);
    const at = (k: number, day = 3) => `${month(k).slice(0, 8)}${String(day).padStart(2, '0')}T10:00:00Z`;
    const event = async (k: number, agg: string, status: string, deliveredDay: number | null) => (await q<{ id: string }>(
      `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status, created_at, next_attempt_at, delivered_at)
       VALUES ($1, 'TEST_POSTBACK', $2, 'http://127.0.0.1:9/x', '{"fields":{}}', $3::"OutboxEventStatus", $4, $4, $5) RETURNING id::text`,
      [m.merchantId, `ret-${agg}`, status, at(k), deliveredDay === null ? null : at(k, deliveredDay)]))[0]!.id;
    const attempt = (eventId: string, k: number, day = 4) =>
      q(`INSERT INTO delivery_attempts (event_id, attempted_at, http_status, latency_ms) VALUES ($1, $2, 200, 5)`, [eventId, at(k, day)]);
    // -7: all delivered; -6: delivered and one PENDING; -5: delivered and dead; -1: delivered but recent.
    const e7 = await event(-7, 'a', 'DELIVERED', 4);
    await attempt(e7, -7);
    await attempt(e7, -6, 20); // an attempt the next month: it outlives its event
    const e6 = await event(-6, 'b', 'DELIVERED', 4);
    const e6p = await event(-6, 'c', 'PENDING', null);
    await attempt(e6, -6);
    await attempt(e6p, -6);
    const e5 = await event(-5, 'd', 'DELIVERED', 4);
    const e5d = await event(-5, 'e', 'DEAD', null);
    await attempt(e5d, -5);
    const e1 = await event(-1, 'f', 'DELIVERED', 4);
    await attempt(e1, -1);
    // Their months are created (moving them out of DEFAULT), as the service would have.
    for (const k of [-7, -6, -5, -1]) {
      for (const tb of ['outbox_events', 'delivery_attempts']) await q(`SELECT create_month_partition($1, $2::date)`, [tb, month(k)]);
    }
    const ids = [e7, e6, e6p, e5, e5d, e1];
    const eventMonths = async () => Object.fromEntries((await q<{ id: string; p: string }>(
      `SELECT id::text, tableoid::regclass::text AS p FROM outbox_events WHERE id = ANY($1::bigint[])`, [ids])).map((r) => [r.id, r.p]));
    expect(Object.keys(await eventMonths())).toHaveLength(6);

    const dropped = await dropExpiredOutbox(t.db.pool, 90, now);
    expect(dropped.sort()).toEqual([
      partitionName('delivery_attempts', month(-7)), partitionName('delivery_attempts', month(-5)),
      partitionName('outbox_events', month(-7)), partitionName('outbox_events', month(-5)),
    ].sort());
    // The PENDING event's month stays whole; so do the recent month and the attempts of stored events.
    expect(await eventMonths()).toEqual({
      [e6]: partitionName('outbox_events', month(-6)), [e6p]: partitionName('outbox_events', month(-6)), [e1]: partitionName('outbox_events', month(-1)),
    });
    const attempts = await q<{ event_id: string }>(`SELECT event_id::text FROM delivery_attempts WHERE event_id = ANY($1::bigint[]) ORDER BY 1`, [ids]);
    expect(attempts.map((a) => a.event_id).sort()).toEqual([e7, e6, e6p, e1].sort());
    // A dropped event's dedupe key stays: the same (kind, aggregate_id) is not written again.
    await q(`INSERT INTO outbox_events (merchant_id, kind, aggregate_id, payload) VALUES ($1, 'TEST_POSTBACK', 'ret-a', '{}')`, [m.merchantId]);
    expect((await q(`SELECT 1 FROM outbox_events WHERE aggregate_id = 'ret-a'`)).length).toBe(0);

    // Nothing more goes until the PENDING event is delivered; then its month and attempts go too.
    expect(await dropExpiredOutbox(t.db.pool, 90, now)).toEqual([]);
    await q(`UPDATE outbox_events SET status = 'DELIVERED', delivered_at = $2 WHERE id = $1`, [e6p, at(-6, 5)]);
    expect((await dropExpiredOutbox(t.db.pool, 90, now)).sort()).toEqual([
      partitionName('delivery_attempts', month(-6)), partitionName('outbox_events', month(-6)),
    ].sort());
    expect(Object.keys(await eventMonths())).toEqual([e1]);
    // A shorter retention reaches the recent month as well; the current month is never dropped.
    expect(await dropExpiredOutbox(t.db.pool, 1, now)).not.toContain(partitionName('outbox_events', month(0)));
  });
});

describe('the partitioning migration on a database with rows', () => {
  let db: { url: string; drop(): Promise<void> };
  let c: pg.Client;
  beforeAll(async () => {
    db = await createEmptyDatabase('parts');
    const before = mkdtempSync(join(tmpdir(), 'migrations-'));
    for (const mg of listMigrations().filter((x) => x.name < PARTITION_MIGRATION)) cpSync(join(MIGRATIONS_DIR, mg.name), join(before, mg.name), { recursive: true });
    await migrate(db.url, before);
    c = new pg.Client({ connectionString: db.url });
    await c.connect();
  });
  afterAll(async () => { await c?.end(); await db?.drop(); });

  it('keeps every row, every balance and a verifying ledger; each row lands in its month', async () => {
    // Rows as the code before the migration wrote them, over five months.
    await c.query(`
      INSERT INTO merchants (id, name, email, api_token_hash, api_token_enc) VALUES ('mA', 'A', 'a@example.test', repeat('a', 64), 'x');
      INSERT INTO balances (merchant_id, currency) SELECT 'mA', cur FROM unnest(enum_range(NULL::"Currency")) cur;
      INSERT INTO ledger_accounts (id, currency, kind, merchant_id)
      SELECT cur::text || ':merchant:mA:' || k, cur, k, 'mA' FROM unnest(enum_range(NULL::"Currency")) cur, unnest(ARRAY['available', 'locked', 'hold']) k;
      INSERT INTO shops (id, merchant_id, name) VALUES ('sA', 'mA', 'Shop');
      INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, status)
      SELECT 'b' || n, 'mA', 'sA', 100 * n, 'RUB', 'SUCCESS' FROM generate_series(1, 5) n;
      INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, amount_received, bill_currency, account_currency,
                            commission, account_amount, created_at)
      SELECT 'pay' || n, 'b' || n, 'mA', 'sA', 'SUCCESS', 'BANK_CARD', 100 * n, 100 * n, 'RUB', 'RUB', n, 100 * n - n, now() - (n - 1) * interval '1 month'
        FROM generate_series(1, 5) n;
      INSERT INTO refunds (id, merchant_id, payment_id, amount, currency, status) VALUES ('rf1', 'mA', 'pay3', 50, 'RUB', 'NEW');
      INSERT INTO chargebacks (id, merchant_id, payment_id, amount, currency, reason) VALUES ('cb1', 'mA', 'pay4', 10, 'RUB', 'fraud');
      INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id, created_at)
      SELECT 'PAYMENT_CREDIT:pay' || n, 'PAYMENT_CREDIT', 'payment', 'pay' || n, 'mA', now() - (n - 1) * interval '1 month' FROM generate_series(1, 5) n;
      INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
      SELECT 'PAYMENT_CREDIT:pay' || n, x.leg, 'RUB', 'RUB:acquirer_clearing:sandbox', x.cr, x.amt
        FROM generate_series(1, 5) n, LATERAL (VALUES (1, 'RUB:merchant:mA:available', 100 * n - n), (2, 'RUB:fee_revenue', n)) AS x(leg, cr, amt);
      INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id) VALUES ('REFUND_LOCK:rf1', 'REFUND_LOCK', 'refund', 'rf1', 'mA');
      INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
      VALUES ('REFUND_LOCK:rf1', 1, 'RUB', 'RUB:merchant:mA:available', 'RUB:merchant:mA:locked', 50);
      INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id, created_at)
      VALUES ('CHARGEBACK_DEBIT:cb1', 'CHARGEBACK_DEBIT', 'chargeback', 'cb1', 'mA', now() - interval '3 months');
      INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
      VALUES ('CHARGEBACK_DEBIT:cb1', 1, 'RUB', 'RUB:merchant:mA:available', 'RUB:chargebacks', 10);
      UPDATE balances SET available = 1485 - 50 - 10, locked = 50 WHERE merchant_id = 'mA' AND currency = 'RUB';
      INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, status, created_at, delivered_at)
      SELECT 'mA', 'PAYMENT_POSTBACK', 'pay' || n, 'http://127.0.0.1:9/r', '{"fields":{}}', 'DELIVERED', now() - (n - 1) * interval '1 month',
             now() - (n - 1) * interval '1 month' FROM generate_series(1, 5) n;
      INSERT INTO delivery_attempts (event_id, attempted_at, http_status, latency_ms) SELECT id, created_at, 200, 5 FROM outbox_events;`);
    const snapshot = async () => ({
      balances: (await c.query(`SELECT merchant_id, currency::text, available::text, locked::text, hold::text FROM balances ORDER BY 1, 2`)).rows,
      payments: (await c.query(`SELECT id, status::text, amount::text, account_amount::text, created_at FROM payments ORDER BY id`)).rows,
      entries: (await c.query(`SELECT transfer_id, leg, debit_account, credit_account, amount::text FROM ledger_entries ORDER BY 1, 2`)).rows,
      events: (await c.query(`SELECT id::text, kind::text, aggregate_id, status::text, created_at FROM outbox_events ORDER BY id`)).rows,
      attempts: (await c.query(`SELECT id::text, event_id::text, attempted_at FROM delivery_attempts ORDER BY id`)).rows,
    });
    const before = await snapshot();
    expect((await verifyLedger(c)).problems).toEqual([]);

    expect(await migrate(db.url)).toEqual([PARTITION_MIGRATION, ...listMigrations().map((x) => x.name).filter((n) => n > PARTITION_MIGRATION)]);

    expect(await snapshot()).toEqual(before);
    const books = await verifyLedger(c);
    expect(books.problems).toEqual([]);
    expect(books.ok).toBe(true);
    const kinds = (await c.query(`SELECT relname, relkind FROM pg_class WHERE relname = ANY($1) ORDER BY 1`, [PARTITIONED_TABLES])).rows;
    expect(kinds).toEqual([...PARTITIONED_TABLES].sort().map((relname) => ({ relname, relkind: 'p' })));
    // Each payment in the partition of its month; each entry in its transfer's.
    const misplaced = await c.query(`
      SELECT p.id FROM payments p WHERE p.tableoid::regclass::text <> 'payments_p' || to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY_MM')
      UNION ALL
      SELECT e.transfer_id FROM ledger_entries e JOIN ledger_transfers t ON t.id = e.transfer_id
       WHERE e.created_at <> t.created_at OR e.tableoid::regclass::text <> 'ledger_entries_p' || to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY_MM')`);
    expect(misplaced.rows).toEqual([]);
    expect((await c.query(`SELECT count(*)::int AS n FROM payment_keys`)).rows[0].n).toBe(5);
    expect((await c.query(`SELECT count(*)::int AS n FROM outbox_event_keys`)).rows[0].n).toBe(5);
    // The guarantees the old keys gave: a refund needs its payment, a payment id is unique, one
    // postback per payment, one transfer per (kind, ref_id), ledger entries append-only.
    await expect(c.query(`INSERT INTO refunds (id, merchant_id, payment_id, amount, currency) VALUES ('rf2', 'mA', 'nope', 1, 'RUB')`)).rejects.toThrow(/refunds_payment_id_fkey/);
    await expect(c.query(`INSERT INTO payments (id, bill_id, merchant_id, shop_id, method, amount, bill_currency, account_currency)
                          VALUES ('pay5', 'b5', 'mA', 'sA', 'BANK_CARD', 1, 'RUB', 'RUB')`)).rejects.toThrow(/payment_keys_pkey/);
    await c.query(`INSERT INTO outbox_events (merchant_id, kind, aggregate_id, payload) VALUES ('mA', 'PAYMENT_POSTBACK', 'pay5', '{}')`);
    expect((await c.query(`SELECT count(*)::int AS n FROM outbox_events WHERE aggregate_id = 'pay5'`)).rows[0].n).toBe(1);
    await expect(c.query(`INSERT INTO ledger_transfers (id, kind, ref_type, ref_id) VALUES ('PAYMENT_CREDIT:pay1', 'PAYMENT_CREDIT', 'payment', 'pay1')`)).rejects.toThrow(/ledger_transfers_pkey/);
    await expect(c.query(`UPDATE ledger_entries SET amount = 1`)).rejects.toThrow(/append-only/);
    await expect(c.query(`DELETE FROM payments WHERE id = 'pay3'`)).rejects.toThrow(/refunds_payment_id_fkey/);
    // The event id sequence goes on after the moved rows.
    const next = await c.query(`INSERT INTO outbox_events (merchant_id, kind, aggregate_id, payload) VALUES ('mA', 'TEST_POSTBACK', 'x', '{}') RETURNING id::text`);
    expect(Number(next.rows[0].id)).toBeGreaterThan(Math.max(...before.events.map((e: { id: string }) => Number(e.id))));
  });
});

/** Every migration, plus one of a parallel branch timestamped before the partitioning migration. */
function migrationsWith(otherBranchSql: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const mg of listMigrations()) cpSync(join(MIGRATIONS_DIR, mg.name), join(dir, mg.name), { recursive: true });
  mkdirSync(join(dir, '20261124010000_other_branch'));
  writeFileSync(join(dir, '20261124010000_other_branch', 'migration.sql'), otherBranchSql);
  return dir;
}

// Each of these migrates an empty database from the first migration: that is the hook's time
// (hookTimeout), the tests read what it made.
describe('the partitioning migration carries what other migrations added before it', () => {
  let db: { url: string; drop(): Promise<void> };
  let c: pg.Client;
  beforeAll(async () => {
    db = await createEmptyDatabase('carry');
    await migrate(db.url, migrationsWith(`
      ALTER TABLE payments ADD COLUMN "risk_score" INTEGER NOT NULL DEFAULT 0, ADD CONSTRAINT "payments_risk_check" CHECK ("risk_score" BETWEEN 0 AND 100);
      CREATE INDEX "payments_risk_score_idx" ON payments ("merchant_id", "risk_score");
      CREATE TABLE "payment_notes" ("id" TEXT PRIMARY KEY, "payment_id" TEXT NOT NULL REFERENCES payments ("id") ON DELETE CASCADE);
      ALTER TABLE outbox_events ADD COLUMN "shop_id" TEXT REFERENCES shops ("id");
      CREATE FUNCTION "payments_touch"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW."risk_score" := least(NEW."risk_score", 100); RETURN NEW; END; $$;
      CREATE TRIGGER "payments_touch" BEFORE INSERT ON payments FOR EACH ROW EXECUTE FUNCTION "payments_touch"();`));
    c = new pg.Client({ connectionString: db.url });
    await c.connect();
  });
  afterAll(async () => { await c?.end(); await db?.drop(); });

  it('a column, CHECK, index, trigger, a foreign key into payments and one out of outbox_events, written by an earlier migration, are all on the partitioned tables', async () => {
    const one = async (sql: string) => (await c.query(sql)).rows;
    expect(await one(`SELECT relkind FROM pg_class WHERE relname = 'payments'`)).toEqual([{ relkind: 'p' }]);
    expect(await one(`SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'payments' AND column_name = 'risk_score'`))
      .toEqual([{ column_name: 'risk_score', column_default: '0' }]);
    expect(await one(`SELECT conname FROM pg_constraint WHERE conrelid = 'payments'::regclass AND conname = 'payments_risk_check'`)).toHaveLength(1);
    expect(await one(`SELECT indexname FROM pg_indexes WHERE tablename = 'payments' AND indexname = 'payments_risk_score_idx'`)).toHaveLength(1);
    expect(await one(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'payments'::regclass AND tgname = 'payments_touch'`)).toHaveLength(1);
    expect(await one(`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'payment_notes'::regclass AND contype = 'f'`))
      .toEqual([{ def: 'FOREIGN KEY (payment_id) REFERENCES payment_keys(id) ON DELETE CASCADE' }]);
    expect(await one(`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'outbox_events'::regclass AND contype = 'f' ORDER BY 1`))
      .toEqual([{ def: 'FOREIGN KEY (merchant_id) REFERENCES merchants(id) ON UPDATE CASCADE ON DELETE RESTRICT' }, { def: 'FOREIGN KEY (shop_id) REFERENCES shops(id)' }]);
  });
});

describe('the partitioning migration refuses what it cannot carry', () => {
  let refused: unknown;
  beforeAll(async () => {
    const db = await createEmptyDatabase('carry2');
    try {
      const dir = migrationsWith(`CREATE UNIQUE INDEX "payments_connector_provider_ref_key" ON payments ("connector", "provider_ref");`);
      refused = await migrate(db.url, dir).then(() => 'migrated', (e: unknown) => e);
    } finally {
      await db.drop();
    }
  });

  it('a unique index it cannot keep across months stops it, so no guarantee is silently lost', () => {
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/payments_connector_provider_ref_key lacks the partition key/);
  });
});
