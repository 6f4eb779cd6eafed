import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, md5upper, startRig, type Rig } from './harness.js';

/**
 * Flute-CMS/PayPalych (Omnipay driver, docs/clients.md): base_url configurable (default
 * https://pal24.pro). PurchaseRequest posts a form with `Authorization` and `Content-Type`
 * headers: amount `(float)` written by http_build_query, order_id and custom = the transaction
 * id, success_url/fail_url, payer_pays_commission 0, type normal; PurchaseResponse redirects to
 * `link_page_url`. AcceptNotification and CompletePurchase check
 * hash_equals(strtoupper(md5(OutSum:InvId:api_token)), strtoupper(SignatureValue)).
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

async function purchase(transactionId: string, amount: number) {
  const w = await rig.send('POST', '/api/v1/bill/create', {
    headers: { Host: '127.0.0.1', 'User-Agent': 'GuzzleHttp/7', Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: form({
      shop_id: rig.m.shopId, amount: String(amount), currency_in: 'RUB', order_id: transactionId, custom: transactionId,
      success_url: 'https://flute.test/payment/success', fail_url: 'https://flute.test/payment/fail', payer_pays_commission: 0, type: 'normal',
    }),
  });
  return { status: w.status, data: JSON.parse(w.text) as Record<string, unknown> };
}

describe('Flute-CMS PayPalych', () => {
  it('PurchaseRequest: the (float) amount 150 is written "150"; the answer is a redirect (link_page_url set)', async () => {
    const r = await purchase('flute-1', 150);
    expect(r.status).toBe(200);
    expect(typeof r.data.link_page_url).toBe('string');
  });

  it('AcceptNotification accepts our postback and reads status, amount (float)OutSum and custom', async () => {
    const r = await purchase('flute-2', 75.5);
    const { postback } = await rig.payAndDeliver(r.data.bill_id as string);
    expect(md5upper(`${postback.OutSum}:${postback.InvId}:${rig.m.token}`)).toBe(postback.SignatureValue!.toUpperCase());
    expect({ status: postback.Status, amount: Number(postback.OutSum), custom: postback.custom }).toEqual({ status: 'SUCCESS', amount: 75.5, custom: 'flute-2' });
  });

  it('CompletePurchase accepts the success redirect fields (same signature)', async () => {
    const r = await purchase('flute-3', 12);
    const { redirect } = await rig.payAndDeliver(r.data.bill_id as string);
    expect(redirect.InvId).toBe('flute-3');
    expect(md5upper(`${redirect.OutSum}:${redirect.InvId}:${rig.m.token}`)).toBe(String(redirect.SignatureValue).toUpperCase());
  });
});
