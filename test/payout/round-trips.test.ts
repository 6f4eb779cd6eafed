import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { fund, insertAccount, payoutMerchant, personal } from './helpers.js';

/**
 * A payout creation holds ONE connection: its transaction's. Every check it makes (the merchant,
 * the account, the card's direction with the routed connectors' rows) comes with the merchant's
 * lock statement, so no statement of its own goes to the pool while the transaction holds a
 * connection: 100 concurrent payouts never wait on a second connection each (which emptied the
 * pool and hung them), and the path keeps its round trips (docs/performance.md, "What bounds
 * each hot path").
 */
let t: TestApp;
let m: MerchantFixture;
let account: string;

interface Sent { on: 'pool' | 'tx'; text: string; name?: string; duringTx: boolean }
const sent: Sent[] = [];
let openTx = 0;

beforeAll(async () => {
  t = await setupTestApp();
  m = await payoutMerchant(t, { payoutCardPercent: '0', payoutCardFixed: '0' });
  await fund(t, m.merchantId, '100');
  account = await insertAccount(t, m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
  type Querying = { query: (...a: unknown[]) => unknown; release?: (...a: unknown[]) => unknown };
  // Clients are pooled and come back: each is wrapped once, and counts as the transaction's only
  // while connect() has it checked out (pool.query runs on the same clients, recorded as the pool's).
  const wrapped = new WeakSet<object>();
  const checkedOut = new WeakSet<object>();
  const record = (target: Querying, on: (self: Querying) => Sent['on'] | null) => {
    const query = target.query.bind(target);
    target.query = (cfg: unknown, ...rest: unknown[]) => {
      const s = typeof cfg === 'string' ? { text: cfg } : cfg as { text: string; name?: string };
      const where = on(target);
      if (where) sent.push({ on: where, text: s.text.trim().split(/\s+/).slice(0, 3).join(' '), name: s.name, duringTx: openTx > 0 });
      return query(cfg, ...rest);
    };
  };
  const pool = t.db.pool as unknown as Querying & { connect: (...a: unknown[]) => unknown };
  record(pool, () => 'pool');
  const connect = pool.connect.bind(pool);
  pool.connect = (...a: unknown[]) => {
    if (a.length > 0) return connect(...a);
    return (connect() as Promise<Querying>).then((c) => {
      openTx++;
      checkedOut.add(c);
      if (!wrapped.has(c)) {
        wrapped.add(c);
        record(c, (self) => (checkedOut.has(self) ? 'tx' : null));
        const release = c.release!.bind(c);
        c.release = (...r: unknown[]) => { openTx--; checkedOut.delete(c); return release(...r); };
      }
      return c;
    });
  };
});
afterAll(async () => { await t?.close(); });

describe('payout/personal/create to a card', () => {
  it('sends nothing to the pool while its transaction is open: auth, then lock, insert, audit, commit on the one connection', async () => {
    expect((await personal(t, m, { amount: '1.00', payout_account_id: account, order_id: 'warm' })).statusCode).toBe(200);
    sent.length = 0;
    const r = await personal(t, m, { amount: '1.00', payout_account_id: account, order_id: 'counted' });
    expect(r.statusCode, r.body).toBe(200);
    const tx = sent.filter((s) => s.on === 'tx').map((s) => s.name ?? s.text);
    // The audit entry of the creation rides the same transaction; nothing reads connectors apart.
    expect(tx).toEqual(['BEGIN', 'payout_lock_merchant', 'payout_insert', 'INSERT INTO audit_log', 'COMMIT']);
    expect(sent.filter((s) => s.on === 'pool' && s.duringTx)).toEqual([]);
    // The per-token limit (docs/adr/0098) takes its hits in chunks: at most its one statement, then auth.
    expect(sent.filter((s) => s.on === 'pool').map((s) => s.name ?? s.text).filter((x) => x !== 'limit_add')).toEqual(['merchant_auth']);
    expect(sent.filter((s) => s.on === 'pool' && (s.name ?? s.text) === 'limit_add').length).toBeLessThanOrEqual(1);
  });
});
