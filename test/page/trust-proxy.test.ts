import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, DECLINED_CARD, payRequest } from '../factories/payment.js';

let t: TestApp;
let m: MerchantFixture;
beforeAll(async () => {
  // TRUST_PROXY unset: the default.
  t = await setupTestApp({ PAY_ATTEMPTS_PER_BILL: '100', PAY_ATTEMPTS_PER_IP: '2' });
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

describe('client address without a trusted proxy', () => {
  it('a client cannot dodge the per-IP attempt limit by sending X-Forwarded-For', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await payRequest(t, await createBill(t, m), cardForm(DECLINED_CARD), { 'x-forwarded-for': `10.7.0.${i}` });
      expect(r.json().status).toBe('FAIL');
    }
    const r = await payRequest(t, await createBill(t, m), cardForm(), { 'x-forwarded-for': '10.7.0.99' });
    expect(r.statusCode).toBe(429);
  });
});
