import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, md5upper, startRig, type Rig } from './harness.js';

/**
 * loid345/pally-magento2 (docs/clients.md). BillCreate posts a form (Magento Curl with an array
 * body) with `Authorization` and `Content-Type: application/x-www-form-urlencoded`; amount is
 * sprintf('%.2f'), it also sends `lifetime` (not an API field), custom = order increment id,
 * per-order success_url/fail_url. BillCreateValidator wants bill_id and link_page_url, and only
 * `success === false` is a refusal. PaymentStatus GETs `payment/status?id=` and `bill/status?id=`
 * (query only, `Authorization` only) and reads `status`, `amount`, `currency_in`. The webhook's
 * SignatureVerifier: hash_equals(strtoupper(md5(OutSum:InvId:token)), strtoupper(SignatureValue)).
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

async function billCreate(orderIncrementId: string, total: number) {
  const w = await rig.send('POST', '/api/v1/bill/create', {
    headers: { Host: '127.0.0.1', Accept: '*/*', Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form({
      shop_id: rig.m.shopId, order_id: orderIncrementId, amount: total.toFixed(2), type: 'normal', lifetime: '3600',
      custom: orderIncrementId, description: `Order #${orderIncrementId}`, payer_pays_commission: '0',
      success_url: 'https://magento.test/pally/return/success', fail_url: 'https://magento.test/pally/return/fail',
    }),
  });
  expect(w.status, w.text).toBe(200);
  return JSON.parse(w.text) as Record<string, unknown>;
}

const getJson = async (url: string) => {
  const w = await rig.send('GET', url, { headers: { Host: '127.0.0.1', Accept: '*/*', Authorization: `Bearer ${rig.m.token}` } });
  expect(w.status, w.text).toBe(200);
  return JSON.parse(w.text) as Record<string, unknown>;
};

describe('pally-magento2', () => {
  it('BillCreate passes BillCreateValidator (bill_id, link_page_url; success is not false)', async () => {
    const r = await billCreate('000000101', 1999.9);
    expect(r.success === false).toBe(false);
    expect(r.bill_id).toBeTruthy();
    expect(r.link_page_url).toBeTruthy();
  });

  it('PaymentStatus.getBillStatus then getPaymentStatus (the postback TrsId) read status, amount and currency_in', async () => {
    const r = await billCreate('000000102', 10);
    const bill = await getJson(`/api/v1/bill/status?id=${encodeURIComponent(r.bill_id as string)}`);
    expect(String(bill.status ?? '').toUpperCase()).toBe('NEW');
    const { postback } = await rig.payAndDeliver(r.bill_id as string);
    const payment = await getJson(`/api/v1/payment/status?id=${encodeURIComponent(postback.TrsId!)}`);
    expect(payment).toMatchObject({ status: 'SUCCESS', amount: 10, currency_in: 'RUB' });
  });

  it('the webhook SignatureVerifier accepts our postback; custom carries the order increment id', async () => {
    const r = await billCreate('000000103', 250.5);
    const { postback } = await rig.payAndDeliver(r.bill_id as string);
    expect(postback.custom).toBe('000000103');
    expect(md5upper(`${postback.OutSum}:${postback.InvId}:${rig.m.token}`)).toBe(postback.SignatureValue!.toUpperCase());
  });
});
