import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/app.js';
import { checkInvariants } from './invariants.js';
import { admin, call, kill, startProc, startReceiver, type Proc } from './harness.js';
import { waitFor } from '../helpers/wait.js';
import { budget, sized } from './profile.js';

/**
 * Money invariants under concurrent mixed load from 2 API processes and 2 worker processes on
 * one database, then the same with processes killed by SIGKILL at random moments and
 * restarted. RELIABILITY_PROFILE=full (npm run test:reliability) runs longer. Each load phase runs
 * in the `beforeAll` of its describe (60 s in npm test, its settle bounded under it) and the tests
 * check what it left (docs/adr/0139-slow-starts-wait-in-hooks.md).
 */
const OPS = sized(300, 1500);
/** The crash test keeps the load running this long, killing a process every 0.3-1.2 s. */
const CHAOS_MS = sized(12_000, 60_000);
const CONCURRENCY = 16;

let db: { url: string; drop(): Promise<void> };
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let apis: Proc[] = [];
let workers: Proc[] = [];
const WORKER_ENV = { WORKER_LEASE_MS: '3000', PAYMENT_STALE_MS: '4000', SANDBOX_PROCESSING_DELAY_MS: '50' };

interface M { id: string; token: string; shopId: string; accountId: string; paid: string[] }
const merchants: M[] = [];

const api = () => apis[randomInt(apis.length)]!; // may be one being restarted: its calls fail (status 0), as a client's would
const as = (m: M) => ({ authorization: `Bearer ${m.token}` });

async function setupMerchant(i: number): Promise<M> {
  const base = apis[0]!.url;
  const created = await admin(base, 'POST', '/merchants', { name: `Load ${i}`, email: `load${i}@example.test` });
  const id = created.json.id;
  await admin(base, 'PATCH', `/merchants/${id}`, {
    verified: true, grants: { refunds: true, regular_payouts: true },
    fees: { payment_card_percent: '2.5', payment_card_fixed: '0', payout_card_percent: '1', payout_card_fixed: '10' },
  });
  const shop = await admin(base, 'POST', `/merchants/${id}/shops`, { name: `Shop ${i}`, result_url: receiver.url, success_url: receiver.url, fail_url: receiver.url });
  await admin(base, 'PUT', `/merchants/${id}/payout-webhook`, { url: receiver.url });
  const acct = await admin(base, 'POST', `/merchants/${id}/payout-accounts`, { type: 'card', identifier: i % 2 ? '4242424242424242' : '5555555555550002', card_holder: 'IVAN IVANOV' });
  await admin(base, 'POST', `/merchants/${id}/balance-adjustments`, { currency: 'RUB', amount: '20000', reason: 'load test funding' });
  return { id, token: created.json.api_token, shopId: shop.json.id, accountId: acct.json.id, paid: [] };
}

async function payBill(m: M): Promise<void> {
  const normal = randomInt(3) > 0;
  const bill = await call(api().url, 'POST', '/api/v1/bill/create', { amount: `${randomInt(10, 500)}.${randomInt(0, 99)}`, shop_id: m.shopId, type: normal ? 'normal' : 'multi' }, as(m));
  if (bill.status !== 200) return;
  const roll = randomInt(10);
  const form = roll < 6 ? { method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' }
    : roll < 8 ? { method: 'BANK_CARD', card_number: '4000000000000002', card_expiry: '12/39', card_cvc: '123' }
      : { method: 'SBP', amount: `${randomInt(5, 600)}.00` };
  // A double click on a NORMAL bill: two payments race, at most one may receive money.
  const attempts = normal && randomInt(3) === 0 ? 2 : 1;
  const rs = await Promise.all(Array.from({ length: attempts }, () => call(api().url, 'POST', `/pay/${bill.json.bill_id}`, form)));
  for (const r of rs) if (r.status === 200 && ['SUCCESS', 'OVERPAID', 'UNDERPAID'].includes(r.json?.status)) m.paid.push(r.json.payment_id);
}

async function payout(m: M): Promise<void> {
  const order = `o-${randomInt(40)}`;
  // The same order_id always carries the same amount: a retry, never a second payout.
  const amount = `${100 + Number(order.slice(2)) * 7}.00`;
  await call(api().url, 'POST', '/api/v1/payout/personal/create', { amount, payout_account_id: m.accountId, order_id: `${m.id}-${order}` }, as(m));
}

async function refund(m: M): Promise<void> {
  const p = m.paid[randomInt(Math.max(1, m.paid.length))];
  if (!p) return;
  await call(api().url, 'POST', '/api/v1/refund/partial/create', { payment_id: p, amount: `${randomInt(1, 80)}.00` }, as(m));
}

async function adjust(m: M): Promise<void> {
  const sign = randomInt(4) === 0 ? '-' : '';
  await admin(api().url, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: `${sign}${randomInt(1, 300)}.00`, reason: 'load' });
}

async function runLoad(ops: number, chaos?: () => Promise<void>, minMs = 0): Promise<void> {
  let next = 0;
  const started = Date.now();
  const one = async () => {
    for (;;) {
      const i = next++;
      if (i >= ops && Date.now() - started >= minMs) return;
      const m = merchants[i % merchants.length]!;
      const roll = randomInt(10);
      await (roll < 5 ? payBill(m) : roll < 7 ? payout(m) : roll < 9 ? refund(m) : adjust(m));
    }
  };
  const stop = { done: false };
  const chaosLoop = (async () => {
    while (chaos && !stop.done) {
      await new Promise((r) => setTimeout(r, randomInt(300, 1200))); // time is the subject: chaos at random moments
      if (!stop.done) await chaos();
    }
  })();
  await Promise.all(Array.from({ length: CONCURRENCY }, one));
  stop.done = true;
  await chaosLoop;
}

/** Waits until no payout, refund, payment or event is still in flight. */
async function settle(timeoutMs: number): Promise<void> {
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    // Bounded without failing: what is still in flight then is what the invariants name.
    await waitFor(async () => {
      const r = await c.query(`SELECT
        (SELECT count(*) FROM payouts WHERE status IN ('NEW', 'PROCESS')) +
        (SELECT count(*) FROM refunds WHERE status IN ('NEW', 'PROCESS')) +
        (SELECT count(*) FROM payments WHERE status IN ('NEW', 'PROCESS')) +
        (SELECT count(*) FROM outbox_events WHERE status = 'PENDING') AS busy`);
      return Number(r.rows[0].busy) === 0;
    }, 'no payout, refund, payment or event in flight', timeoutMs, 250).catch(() => undefined);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startReceiver(0);
  apis = await Promise.all([startProc('api', db.url, WORKER_ENV), startProc('api', db.url, WORKER_ENV)]);
  workers = await Promise.all([startProc('worker', db.url, WORKER_ENV), startProc('worker', db.url, WORKER_ENV)]);
  for (let i = 0; i < 3; i++) merchants.push(await setupMerchant(i));
});

afterAll(async () => {
  await Promise.all([...apis, ...workers].map((p) => kill(p, 'SIGTERM')));
  await receiver?.close();
  await db?.drop();
});

describe('money invariants under load', () => {
  describe('mixed load', () => {
    beforeAll(async () => {
      await runLoad(OPS);
      await settle(sized(30_000, 60_000));
    }, budget(300_000));

    it('mixed payments, payouts, refunds and adjustments from 2 API and 2 worker processes keep every invariant', async () => {
      expect(await checkInvariants(db.url, { requireDelivered: true })).toEqual([]);
      expect(merchants.some((m) => m.paid.length > 0)).toBe(true);
    });
  });

  describe('processes killed at random moments', () => {
    let kills = 0;
    beforeAll(async () => {
      const restarts: Promise<void>[] = [];
      const restarting = new Set<Proc>();
      const chaos = async () => {
        const all = [...apis.map((p, i) => ({ p, i, list: apis })), ...workers.map((p, i) => ({ p, i, list: workers }))]
          .filter((v) => !restarting.has(v.p));
        // Keep one API process up so the load goes on.
        const candidates = all.filter((v) => v.list === workers || apis.filter((a) => !restarting.has(a)).length > 1);
        if (candidates.length === 0) return;
        const victim = candidates[randomInt(candidates.length)]!;
        restarting.add(victim.p);
        await kill(victim.p, 'SIGKILL');
        kills += 1;
        restarts.push((async () => {
          const fresh = await startProc(victim.p.kind, db.url, WORKER_ENV, victim.p.kind === 'api' ? victim.p.port : undefined);
          victim.list[victim.i] = fresh;
          restarting.delete(victim.p);
        })());
      };
      await runLoad(OPS, chaos, CHAOS_MS);
      await Promise.all(restarts);
      await settle(sized(25_000, 90_000));
    }, budget(400_000));

    it('processes killed with SIGKILL at random moments and restarted: invariants hold and every event is delivered', async () => {
      expect(kills).toBeGreaterThan(5);
      expect(await checkInvariants(db.url, { requireDelivered: true })).toEqual([]);
    });
  });
});
