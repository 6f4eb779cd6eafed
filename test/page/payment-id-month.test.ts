import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { withDatabase } from '../helpers/pg-server.js';
import pino from 'pino';
import { createDb, type Db, type Queryable } from '../../src/db/client.js';
import { OutboxDeliverer } from '../../src/outbox/deliverer.js';
import { buildApp } from '../../src/app.js';
import { monthStart, partitionName } from '../../src/db/partitions.js';
import { paymentIdMonth, paymentIdPrefix, randomId } from '../../src/lib/ids.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payNewBill, payRequest } from '../factories/payment.js';

/**
 * Payments are partitioned by month and kept forever, so a read by id alone probes every
 * month's index (docs/performance.md "Growth"). A payment id names its creation month
 * (lib/ids.ts), so reads by id touch one partition; ids made before that are still found.
 */
let t: TestApp;
let m: MerchantFixture;
const now = new Date();

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  // A year of months (13 partitions with this one), a few payments made before the id format in each.
  for (let i = -12; i <= 0; i++) {
    const month = monthStart(now, i);
    await t.db.pool.query(`SELECT create_month_partition('payments', $1::date)`, [month]);
    await t.db.pool.query(
      `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type, status, created_at)
       SELECT 'Y' || $3 || n, $1, $2, 100.00, 'RUB', 'NORMAL', 'SUCCESS', $4::date + interval '1 day' FROM generate_series(1, 5) n`,
      [m.merchantId, m.shopId, String(i + 12).padStart(2, '0'), month]);
    await t.db.pool.query(
      `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency, created_at)
       SELECT id, 'Y' || $3 || n, $1, $2, 'SUCCESS', 'BANK_CARD', 100.00, 'RUB', 'RUB', $4::date + interval '1 day' + n * interval '1 hour'
         FROM unnest($5::text[]) WITH ORDINALITY AS x(id, n)`,
      [m.merchantId, m.shopId, String(i + 12).padStart(2, '0'), month, Array.from({ length: 5 }, () => randomId(16))]);
  }
  await t.db.pool.query('ANALYZE payments');
});
afterAll(async () => { await t?.close(); });

const api = (app: TestApp['app'], url: string) => app.inject({ method: 'GET', url, headers: m.auth });

/** The statements on `payments` a call sends to the pool of `db`. */
async function statementsOf<T>(db: Db, fn: () => Promise<T>, on = /FROM payments\b/): Promise<{ out: T; sent: Array<{ text: string; values: unknown[] }> }> {
  const sent: Array<{ text: string; values: unknown[] }> = [];
  const pool = db.pool;
  type Querying = { query: (...a: unknown[]) => unknown };
  const recording = (target: Querying) => {
    const query = target.query.bind(target);
    target.query = (cfg: unknown, values?: unknown, ...rest: unknown[]) => {
      const s = typeof cfg === 'string' ? { text: cfg, values: (values as unknown[]) ?? [] } : cfg as { text: string; values: unknown[] };
      if (on.test(s.text)) sent.push({ text: s.text, values: s.values ?? [] });
      return query(cfg, values, ...rest);
    };
  };
  // Statements on the pool, and on the clients checked out of it for a transaction.
  recording(pool as unknown as Querying);
  const clients: Querying[] = [];
  const connect = pool.connect.bind(pool) as (...a: unknown[]) => unknown;
  (pool as unknown as { connect: (...a: unknown[]) => unknown }).connect = (...a: unknown[]) => {
    // pool.query checks a client out with a callback: its statement is recorded above already.
    if (a.length > 0) return connect(...a);
    return (connect() as Promise<Querying>).then((c) => {
      recording(c);
      clients.push(c);
      return c;
    });
  };
  try {
    return { out: await fn(), sent };
  } finally {
    delete (pool as unknown as { query?: unknown }).query;
    delete (pool as unknown as { connect?: unknown }).connect;
    for (const c of clients) delete (c as { query?: unknown }).query;
  }
}

interface PlanNode { 'Relation Name'?: string; 'Actual Loops'?: number; Plans?: PlanNode[] }

/**
 * The partitions of `table` the statement's plan really scanned (EXPLAIN ANALYZE, in a
 * transaction rolled back: a claim's UPDATE changes nothing).
 */
async function partitionsScanned(s: { text: string; values: unknown[] }, table = 'payments'): Promise<string[]> {
  const c = await t.db.pool.connect();
  try {
    await c.query('BEGIN');
    const r = await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.text}`, s.values);
    const out = new Set<string>();
    const walk = (n: PlanNode) => {
      if (n['Relation Name']?.startsWith(`${table}_`) && (n['Actual Loops'] ?? 0) > 0) out.add(n['Relation Name']);
      n.Plans?.forEach(walk);
    };
    walk(r.rows[0]!['QUERY PLAN'][0]!.Plan);
    return [...out];
  } finally {
    await c.query('ROLLBACK');
    c.release();
  }
}

const partitionOf = async (id: string) =>
  (await t.db.pool.query<{ p: string; at: Date }>(`SELECT tableoid::regclass::text AS p, created_at AS at FROM payments WHERE id = $1`, [id])).rows[0]!;

describe('payment ids name their creation month', () => {
  it('a new payment id names the month of its partition, and payment/status reads that one partition of 13', async () => {
    const { paymentId } = await payNewBill(t, m);
    expect(paymentId).toMatch(/^[A-Za-z0-9]{16}$/);
    const row = await partitionOf(paymentId);
    expect(row.p).toBe(partitionName('payments', monthStart(row.at)));
    const month = paymentIdMonth(paymentId)!;
    expect(row.at >= month.from && row.at < month.to).toBe(true);

    const { out: res, sent } = await statementsOf(t.db, () => api(t.app, `/api/v1/payment/status?id=${paymentId}`));
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(paymentId);
    // One statement (found at once, no second run), and it scanned the payment's partition only.
    expect(sent).toHaveLength(1);
    expect(await partitionsScanned(sent[0]!)).toEqual([row.p]);
    // What it replaces: the same read by id alone visits every month.
    const unpruned = await partitionsScanned({ text: 'SELECT id FROM payments WHERE id = $1 AND merchant_id = $2', values: [paymentId, m.merchantId] });
    expect(unpruned.length).toBeGreaterThanOrEqual(13);
  });

  it('the payer page polling a finished payment reads one partition of payments and one of outbox events', async () => {
    const { billId, paymentId } = await payNewBill(t, m);
    const { out, sent } = await statementsOf(t.db, () => t.app.services.paymentPage.paymentState(billId, paymentId), /payments|outbox_event/);
    expect(out?.outcome.redirect?.fields.SignatureValue).toMatch(/^[0-9A-F]{32}$/);
    const byId = sent.filter((s) => /FROM payments WHERE id = \$1/.test(s.text));
    expect(byId).toHaveLength(1);
    expect(await partitionsScanned(byId[0]!)).toEqual([(await partitionOf(paymentId)).p]);
    // The postback it redirects with: by its key row, one month's partition (no seq scan of every month's events).
    const event = sent.filter((s) => /outbox_event/.test(s.text));
    expect(event).toHaveLength(1);
    const month = (await t.db.pool.query<{ p: string }>(
      `SELECT tableoid::regclass::text AS p FROM outbox_events WHERE kind = 'PAYMENT_POSTBACK' AND aggregate_id = $1`, [paymentId])).rows[0]!.p;
    expect(await partitionsScanned(event[0]!, 'outbox_events')).toEqual([month]);
  });

  it('a poll that may not ask the provider yet (throttled) changes nothing and still reads one month only; so do the reconciler\'s read and update', async () => {
    const billId = await createBill(t, m);
    const res = await payRequest(t, billId, cardForm('4000002760003184'));
    expect(res.json().status).toBe('PROCESS');
    const paymentId: string = res.json().payment_id;
    const ask = () => statementsOf(t.db, () => t.app.services.paymentPage.mayAskProvider(paymentId, 3_600_000), /payments/);
    const first = await ask();
    expect(first.out).toBe(true);
    const second = await ask();
    expect(second.out).toBe(false);
    // One statement each: the throttled one found its payment in its month and did not run again over every month.
    expect(first.sent).toHaveLength(1);
    expect(second.sent).toHaveLength(1);
    expect(await partitionsScanned(second.sent[0]!)).toEqual([(await partitionOf(paymentId)).p]);

    // Reconciliation hears "still pending": the read and the update that schedules the next question, one partition each.
    const { sent } = await statementsOf(t.db, () => t.app.services.payments.applyOutcome(paymentId, { status: 'pending', ref: 'r-1' }, { attempts: 1 }), /payments/);
    expect(sent.map((x) => x.text.trim().slice(0, 6))).toEqual(['SELECT', 'UPDATE']);
    for (const x of sent) expect(await partitionsScanned(x)).toEqual([(await partitionOf(paymentId)).p]);
  });

  it('the postback worker\'s claim finds the payment\'s shop in one partition', async () => {
    const m2 = await createMerchant(t, { shop: { resultUrl: 'http://127.0.0.1:9/result' } });
    const { paymentId } = await payNewBill(t, m2);
    const d = new OutboxDeliverer({ config: t.config, db: t.db, services: t.app.services, log: pino({ level: 'silent' }) });
    let claim: { text: string; values: unknown[] } | null = null;
    const c = await t.db.pool.connect();
    try {
      await c.query('BEGIN');
      // The claim names its statement (a config object).
      const capture = (cfg: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
        claim = typeof cfg === 'string' ? { text: cfg, values: values ?? [] } : { text: cfg.text, values: cfg.values ?? [] };
        return c.query(cfg as string, values);
      };
      const claimed = await d.claim(10, { query: capture as Queryable['query'] });
      expect(claimed.map((e) => e.aggregateId)).toContain(paymentId);
      expect(claimed.find((e) => e.aggregateId === paymentId)!.url).toBe('http://127.0.0.1:9/result');
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
    expect(await partitionsScanned(claim!)).toEqual([(await partitionOf(paymentId)).p]);
  });

  it('ids made before the format are still found: one whose characters name another month, one that names none', async () => {
    const old = (await t.db.pool.query<{ id: string }>(
      `SELECT id, bill_id FROM payments WHERE merchant_id = $1 AND created_at < $2 ORDER BY created_at LIMIT 1`, [m.merchantId, monthStart(now, -6)])).rows[0]!;
    // Re-keyed as ids of the old format can be: naming this month (not its own), or a month far ahead.
    const misleading = paymentIdPrefix(now) + randomId(14);
    const naming = 'zz' + randomId(14);
    expect(paymentIdMonth(naming)).toBeNull();
    const other = (await t.db.pool.query<{ id: string }>(
      `SELECT id FROM payments WHERE merchant_id = $1 AND created_at < $2 AND id <> $3 ORDER BY created_at LIMIT 1`, [m.merchantId, monthStart(now, -6), old.id])).rows[0]!;
    for (const [from, to] of [[old.id, misleading], [other.id, naming]] as const) {
      // A copy of the old row under the old-format id, in its old month.
      await t.db.pool.query(
        `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency, created_at)
         SELECT $2, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency, created_at FROM payments WHERE id = $1`, [from, to]);
      const { out: res, sent } = await statementsOf(t.db, () => api(t.app, `/api/v1/payment/status?id=${to}`));
      expect(res.statusCode).toBe(200);
      expect(res.json().id).toBe(to);
      // The month it names (if any) first, then every month.
      expect(sent).toHaveLength(to === misleading ? 2 : 1);
      expect((await partitionOf(to)).p).not.toBe(partitionName('payments', monthStart(now)));
    }
    // An id found nowhere is still "not found", not an error.
    const none = await api(t.app, `/api/v1/payment/status?id=${paymentIdPrefix(now)}${randomId(14)}`);
    expect(none.statusCode).toBe(422);
    expect(none.json().message).toBe('api:error.payment_not_found');
  });
});

/**
 * The month boundary: the insert takes the creation time once, after the bill's lock, rounded
 * to the column's milliseconds, and makes the id from it; the partitions are UTC months. The
 * database's clock is set by shadowing clock_timestamp() for the connections of a second app on
 * this test's own database (search_path public before pg_catalog). That setting takes effect when
 * a backend starts, so the second app connects to PostgreSQL directly: through PgBouncer
 * (TEST_PGBOUNCER=1) it would be handed server connections opened before the setting.
 */
describe('a payment made at the end of a month', () => {
  let db2: Db;
  let app2: TestApp['app'];
  beforeAll(async () => {
    const name = new URL(t.dbUrl).pathname.slice(1);
    await t.db.pool.query(`CREATE TABLE test_clock (at timestamptz NOT NULL)`);
    await t.db.pool.query(`INSERT INTO test_clock VALUES (now())`);
    await t.db.pool.query(`CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$ SELECT at FROM test_clock $$`);
    for (const month of ['2026-11-01', '2026-12-01']) await t.db.pool.query(`SELECT create_month_partition('payments', $1::date)`, [month]);
    await t.db.pool.query(`ALTER DATABASE "${name}" SET search_path = public, pg_catalog`);
    db2 = createDb(withDatabase(inject('adminUrl'), name), { max: 2 });
    app2 = await buildApp({ config: t.config, db: db2, logger: false });
    await app2.ready();
  });
  afterAll(async () => { await app2?.close(); await db2?.close(); });

  const cases: Array<[string, string, string]> = [
    // [database clock, the UTC month the payment belongs to, why]
    ['2026-11-30 23:59:59.9+00', '2026-11-01', 'the last tenth of a second of November (UTC)'],
    ['2026-11-30 23:59:59.9996+00', '2026-12-01', 'rounds to December 1st 00:00:00.000: the row and its id are December'],
    ['2026-12-01 00:30:00+03', '2026-11-01', 'already December 1st in Moscow, still November in UTC, the partitions\' time zone'],
  ];
  for (const [clock, month, why] of cases) {
    it(`at ${clock}: the id names ${month.slice(0, 7)} and the payment is in that partition (${why})`, async () => {
      await t.db.pool.query(`UPDATE test_clock SET at = $1::timestamptz`, [clock]);
      // The second app's connections see the set clock (else the cases could pass on the real one).
      const seen = await db2.pool.query<{ same: boolean }>(`SELECT clock_timestamp() = $1::timestamptz AS same`, [clock]);
      expect(seen.rows[0]!.same).toBe(true);
      const billId = await createBill(t, m);
      const res = await payRequest({ ...t, app: app2 }, billId);
      expect(res.statusCode).toBe(200);
      const paymentId: string = res.json().payment_id;
      const row = await partitionOf(paymentId);
      expect(row.p).toBe(partitionName('payments', month));
      expect(paymentId.slice(0, 2)).toBe(paymentIdPrefix(new Date(`${month}T00:00:00Z`)));
      expect(paymentIdMonth(paymentId)!.from.toISOString().slice(0, 10)).toBe(month);

      const { out: status, sent } = await statementsOf(t.db, () => api(t.app, `/api/v1/payment/status?id=${paymentId}`));
      expect(status.statusCode).toBe(200);
      expect(sent).toHaveLength(1);
      expect(await partitionsScanned(sent[0]!)).toEqual([row.p]);
    });
  }
});
