import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { admin } from '../admin/helpers.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { createBill } from '../api/support.js';
import { payRequest } from '../factories/payment.js';

// The payment's bill read carries the rows of the connectors its merchant's routing names
// (routedConnectorsSql): a card payment is three statements, and a connector's row is still
// read fresh for every payment, so a connector disabled or changed a moment ago is obeyed at once.
let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  expect((await admin(t, 'PUT', '/connectors/sb-rows', { kind: 'sandbox', mode: 'test', settings: {} })).status).toBe(201);
  expect((await admin(t, 'PATCH', `/merchants/${m.merchantId}`, { routing: { payment_card: ['sb-rows'] } })).status).toBe(200);
});
afterAll(async () => { await t.close(); });

/** The named statements the pool sends while `fn` runs (the service's own pool, counted, not replaced). */
async function statements(fn: () => Promise<unknown>): Promise<string[]> {
  const pool = t.app.db.pool;
  const seen: string[] = [];
  const original = pool.query.bind(pool);
  (pool as { query: unknown }).query = (q: unknown, ...rest: unknown[]) => {
    seen.push(typeof q === 'string' ? q.trim().slice(0, 40) : (q as { name?: string; text: string }).name ?? (q as { text: string }).text.trim().slice(0, 40));
    return (original as (...a: unknown[]) => unknown)(q, ...rest);
  };
  try { await fn(); } finally { (pool as { query: unknown }).query = original; }
  return seen;
}

const card = { method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/39', card_cvc: '123' };

describe('a card payment reads its connectors with the bill', () => {
  it('is three statements after the shared attempt limit\'s peek: the bill with its connectors, the opening, the finish', async () => {
    const billId = await createBill(t, m);
    await payRequest(t, await createBill(t, m), card); // the connector built once before counting
    let status = 0;
    const sent = await statements(async () => { status = (await payRequest(t, billId, card)).statusCode; });
    expect(status).toBe(200);
    // The connector's recorded-calls counter is flushed now and then, not per payment; `limit_peek`
    // reads the payment-attempt limits shared by every process (docs/adr/0098).
    expect(sent.filter((s) => s !== 'connector_record_calls')).toEqual(['limit_peek', 'pay_read_bill', 'pay_open', 'pay_finish']);
    expect((await t.db.pool.query('SELECT connector, status::text FROM payments WHERE bill_id = $1', [billId])).rows[0]).toEqual({ connector: 'sb-rows', status: 'SUCCESS' });
  });

  it('a connector disabled a moment ago is never taken; enabled again, it is taken again', async () => {
    expect((await admin(t, 'PATCH', '/connectors/sb-rows', { enabled: false })).status).toBe(200);
    const refused = await payRequest(t, await createBill(t, m), card);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().message).toBe('api:error.method_unavailable');
    expect((await admin(t, 'PATCH', '/connectors/sb-rows', { enabled: true })).status).toBe(200);
    const billId = await createBill(t, m);
    expect((await payRequest(t, billId, card)).statusCode).toBe(200);
    expect((await t.db.pool.query('SELECT connector FROM payments WHERE bill_id = $1', [billId])).rows[0].connector).toBe('sb-rows');
  });

  it('settings changed a moment ago apply to the next payment (the built connector follows its row)', async () => {
    // The sandbox's `refuse` setting makes it refuse before any money moves.
    expect((await admin(t, 'PUT', '/connectors/sb-rows', { kind: 'sandbox', mode: 'test', settings: { refuse: true } })).status).toBeLessThan(300);
    const refused = await payRequest(t, await createBill(t, m), card);
    expect(refused.statusCode).toBe(200);
    expect(refused.json().status).toBe('FAIL');
    expect((await admin(t, 'PUT', '/connectors/sb-rows', { kind: 'sandbox', mode: 'test', settings: {} })).status).toBeLessThan(300);
    const ok = await payRequest(t, await createBill(t, m), card);
    expect(ok.json().status).toBe('SUCCESS');
  });
});
