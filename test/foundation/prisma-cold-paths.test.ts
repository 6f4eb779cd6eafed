import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createDb, type Db } from '../../src/db/client.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill } from '../factories/payment.js';
import { fund, insertAccount, payoutMerchant } from '../payout/helpers.js';

/**
 * Prisma Client is created at its first use, and only cold paths use it: a process that serves
 * the merchant API's hot paths and the payment page never creates it, so never holds its decoded
 * parameterization graph nor its WebAssembly query compiler (docs/adr/0142-prisma-created-at-first-use.md).
 * The set-up runs on one app; the requests go to a second app started on the same database, as
 * a freshly started process would serve them.
 */
let setup: TestApp;
let m: MerchantFixture;
let account: string;
let db: Db;
let app: FastifyInstance;

beforeAll(async () => {
  setup = await setupTestApp();
  m = await payoutMerchant(setup);
  await fund(setup, m.merchantId, '1000');
  account = await insertAccount(setup, m.merchantId, { type: 'CARD', identifier: '4242424242424242' });
  db = createDb(setup.dbUrl, { max: 5 });
  app = await buildApp({ config: setup.config, db, logger: false });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await setup?.close();
});

describe('Prisma Client in a process serving the hot paths', () => {
  it('is not created by a start, bill/create, bill/status, a card payment, a personal payout or merchant/balance', async () => {
    expect(db.prismaCreated()).toBe(false);
    const created = await app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '100.00', shop_id: m.shopId } });
    expect(created.statusCode, created.body).toBe(200);
    const billId = created.json().bill_id as string;
    const status = await app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${billId}`, headers: m.auth });
    expect(status.statusCode, status.body).toBe(200);
    const pay = await app.inject({
      method: 'POST', url: `/pay/${await createBill(setup, m)}`,
      headers: { accept: 'application/json', 'content-type': 'application/json' }, payload: cardForm(),
    });
    expect(pay.statusCode, pay.body).toBe(200);
    const payout = await app.inject({
      method: 'POST', url: '/api/v1/payout/personal/create', headers: m.auth,
      payload: { amount: '10.00', payout_account_id: account, order_id: 'cold-1' },
    });
    expect(payout.statusCode, payout.body).toBe(200);
    const balance = await app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: m.auth });
    expect(balance.statusCode, balance.body).toBe(200);
    expect(db.prismaCreated()).toBe(false);
  });

  it('is created once by the first operator API call and then kept', async () => {
    const r = await app.inject({ method: 'GET', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(r.statusCode, r.body).toBe(200);
    expect(db.prismaCreated()).toBe(true);
    expect(db.prisma).toBe(db.prisma);
  });
});
