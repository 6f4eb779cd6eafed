import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, md5upper, startRig, type Rig } from './harness.js';
import { fund } from '../payout/helpers.js';

/**
 * bytestore/paypalych-whmcs (docs/clients.md). The gateway posts bill/create as a form
 * (http_build_query: WHMCS amount string "123.00", payer_pays_commission omitted unless ticked,
 * success_url = fail_url = the invoice page) and reads `link_page_url`. The balance widget GETs
 * merchant/balance, tests `$response['success'] == "true"` and `round()`s each balance. The
 * callback parse_str()s the postback and compares SignatureValue with
 * strtoupper(md5(OutSum:InvId:API_token)); it marks the invoice paid on Status SUCCESS.
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

const headers = () => ({ Host: '127.0.0.1', Accept: '*/*', Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/x-www-form-urlencoded' });

/** PHP round($x, 2) on a numeric string or number. */
const phpRound = (x: unknown) => Math.round(Number(x) * 100) / 100;

describe('paypalych-whmcs', () => {
  it('paypalych_link: bill/create form without payer_pays_commission, with per-invoice success/fail URLs; link_page_url is read', async () => {
    const w = await rig.send('POST', '/api/v1/bill/create', {
      headers: headers(),
      body: form({ order_id: '1042', description: 'Invoice #1042', amount: '123.00', currency_in: 'RUB', shop_id: rig.m.shopId, success_url: 'https://whmcs.test/viewinvoice.php?id=1042', fail_url: 'https://whmcs.test/viewinvoice.php?id=1042', type: 'normal' }),
    });
    expect(w.status, w.text).toBe(200);
    expect(JSON.parse(w.text).link_page_url).toMatch(/^http/);
  });

  it('the callback accepts our postback: parse_str fields, md5(OutSum:InvId:API_token) upper-cased equals SignatureValue, Status SUCCESS', async () => {
    const w = await rig.send('POST', '/api/v1/bill/create', { headers: headers(), body: form({ order_id: '1043', amount: '49.90', currency_in: 'RUB', shop_id: rig.m.shopId, type: 'normal', payer_pays_commission: '1' }) });
    const { postback } = await rig.payAndDeliver(JSON.parse(w.text).bill_id);
    const fields = Object.fromEntries(new URLSearchParams(rig.receiver.received.at(-1)!.body));
    expect(fields).toEqual(postback);
    expect(fields.Status).toBe('SUCCESS');
    expect(fields.InvId).toBe('1043');
    expect(fields.SignatureValue).toBe(md5upper(`${fields.OutSum}:${fields.InvId}:${rig.m.token}`));
  });

  it('the balance widget: GET with no body; success == "true"; round() of every balance works on the 8-decimal strings', async () => {
    await fund(rig.t, rig.m.merchantId, '1234.567');
    const w = await rig.send('GET', '/api/v1/merchant/balance', { headers: { Host: '127.0.0.1', Accept: '*/*', Authorization: `Bearer ${rig.m.token}` } });
    const r = JSON.parse(w.text);
    expect(r.success == 'true').toBe(true); // eslint-disable-line eqeqeq
    const rub = r.balances.find((b: { currency: string }) => b.currency === 'RUB');
    expect(phpRound(rub.balance_available)).toBeGreaterThanOrEqual(1234.57);
    expect(phpRound(rub.balance_locked)).toBe(0);
  });

  it('per-invoice success_url: after paying, the customer is sent back to the invoice page the module gave, not the shop\'s Success URL', async () => {
    const invoicePage = 'https://whmcs.test/viewinvoice.php?id=1044';
    const w = await rig.send('POST', '/api/v1/bill/create', { headers: headers(), body: form({ order_id: '1044', amount: '10.00', currency_in: 'RUB', shop_id: rig.m.shopId, type: 'normal', success_url: invoicePage, fail_url: invoicePage }) });
    const { redirectUrl } = await rig.payAndDeliver(JSON.parse(w.text).bill_id);
    expect(redirectUrl).toBe(invoicePage);
  });
});
