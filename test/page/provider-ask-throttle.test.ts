import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createDb, type Db } from '../../src/db/client.js';
import type { PaymentOutcome } from '../../src/domain/providers/connector.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';

/**
 * The payment page asks the provider about a payment in PROCESS at most once per interval per
 * payment, across API processes: two app instances (their own pools) on one database, payers
 * polling both, and the provider a real HTTP server counting the questions.
 */
const THREE_DS_CARD = '4000002760003184';
let t: TestApp;
let second: { app: FastifyInstance; db: Db };
let m: MerchantFixture;
let provider: Server;
const asked: string[] = [];
/** When each question reached the provider. */
const askedAt: number[] = [];

/** The sandbox, but each status question goes to the counting server first (as a real provider's would). */
class CountedSandbox extends SandboxConnector {
  constructor(private readonly url: string, db: Db) { super('sandbox', 'test', {}, { db: db.pool }); }
  override async getPayment(q: { paymentId: string; ref: string | null }): Promise<PaymentOutcome> {
    await (await fetch(`${this.url}/payments/${q.paymentId}`)).text();
    return super.getPayment(q);
  }
}

beforeAll(async () => {
  provider = createServer((req, res) => { asked.push(req.url ?? ''); askedAt.push(Date.now()); res.end('{"status":"pending"}'); });
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '1000' });
  const db = createDb(t.dbUrl, { max: 5 });
  second = { app: await buildApp({ config: t.config, db, logger: false }), db };
  await second.app.ready();
  t.app.services.connectors.override(new CountedSandbox(url, t.db));
  second.app.services.connectors.override(new CountedSandbox(url, db));
  m = await createMerchant(t);
});
afterAll(async () => {
  await second.app.close();
  await second.db.close();
  await t.close();
  await new Promise((r) => provider.close(r));
});

const poll = (app: FastifyInstance, url: string) => app.inject({ method: 'GET', url, headers: { accept: 'application/json' } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the payment page asks the provider at most once per interval per payment, whichever process serves it', () => {
  it('polls in bursts through two app instances: questions reach the provider at least the interval apart, never one per process', async () => {
    const billId = await createBill(t, m, { amount: '25.00' });
    const id = (await payRequest(t, billId, cardForm(THREE_DS_CARD))).json().payment_id as string;
    const url = `/pay/${billId}/payments/${id}`;
    asked.length = 0;
    askedAt.length = 0;
    const t0 = Date.now();
    let polls = 0;
    // 20 polls at once, half through each instance, then again after the interval.
    for (const wait of [0, 1600]) {
      await sleep(wait); // time is the subject: the second burst comes after the ask interval
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => poll(i % 2 ? second.app : t.app, url)));
      polls += burst.length;
      expect(burst.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      expect(new Set(burst.map((r) => r.json().status))).toEqual(new Set(['PROCESS']));
    }
    const elapsed = Date.now() - t0;
    expect(new Set(asked)).toEqual(new Set([`/payments/${id}`]));
    // Each burst asked (the second came after the interval); a per-process throttle asks from
    // both instances within milliseconds of each other.
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(asked.length).toBeLessThanOrEqual(1 + Math.floor(elapsed / 1500));
    expect(asked.length).toBeLessThan(polls / 5);
    const gaps = askedAt.slice(1).map((a, i) => a - askedAt[i]!);
    for (const g of gaps) expect(g).toBeGreaterThan(1000);
  });

  it('a final payment is never asked about, and the throttle is per payment', async () => {
    const b1 = await createBill(t, m, { amount: '5.00' });
    const paid = (await payRequest(t, b1, cardForm())).json();
    expect(paid.status).toBe('SUCCESS');
    const b2 = await createBill(t, m, { amount: '6.00' });
    const waiting = (await payRequest(t, b2, cardForm(THREE_DS_CARD))).json().payment_id as string;
    asked.length = 0;
    await Promise.all([poll(t.app, `/pay/${b1}/payments/${paid.payment_id}`), poll(second.app, `/pay/${b1}/payments/${paid.payment_id}`)]);
    expect(asked).toEqual([]);
    await Promise.all([poll(t.app, `/pay/${b2}/payments/${waiting}`), poll(second.app, `/pay/${b2}/payments/${waiting}`)]);
    expect(asked).toEqual([`/payments/${waiting}`]);
  });
});
