import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { md5upper, startRig, type Rig } from './harness.js';
import { createPaidPayment } from '../factories/paid-payment.js';

/**
 * The Telegram bots' `Pal24Client` (docs/clients.md; aiohttp): every request carries
 * `Authorization`, `Content-Type: application/json` and `Accept: application/json`; POST bodies
 * are JSON (amount as `str(Decimal)`, extra keyword arguments passed through, e.g. a `custom`
 * dict), GET parameters go in the query with no body. `success = bool(payload.get('success',
 * status < 400))`; an error raises with `message` or `error`. Postbacks are checked with
 * upper(md5(f"{out_sum}:{inv_id}:{token}")) against SignatureValue.upper().
 */

let rig: Rig;
beforeAll(async () => { rig = await startRig(); });
afterAll(async () => { await rig.close(); });

class Pal24APIError extends Error {}

async function request(method: 'GET' | 'POST', endpoint: string, o: { json?: Record<string, unknown>; params?: Record<string, string> } = {}) {
  const q = o.params ? `?${new URLSearchParams(o.params).toString()}` : '';
  const w = await rig.send(method, `/api/v1/${endpoint}${q}`, {
    headers: { Host: '127.0.0.1', 'User-Agent': 'Python/3.12 aiohttp/3.10.5', 'Accept-Encoding': 'gzip, deflate', Authorization: `Bearer ${rig.m.token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: o.json ? JSON.stringify(o.json) : undefined,
  });
  const payload = JSON.parse(w.text) as Record<string, unknown>;
  const success = Boolean('success' in payload ? payload.success : w.status < 400);
  if (w.status >= 400 || !success) throw new Pal24APIError(`status=${w.status}, detail=${String(payload.message ?? payload.error)}`);
  return payload;
}

const verifySignature = (outSum: string, invId: string, signature: string, token: string) => md5upper(`${outSum}:${invId}:${token}`) === signature.toUpperCase();

describe('Pal24Client', () => {
  it('create_bill: JSON with amount str(Decimal) "150.50"; then get_bill_status and toggle_bill_activity', async () => {
    const r = await request('POST', 'bill/create', { json: { amount: '150.50', shop_id: rig.m.shopId, currency_in: 'RUB', type: 'normal', order_id: 'bot-1', description: 'Top-up' } });
    expect(r.bill_id).toEqual(expect.any(String));
    expect(await request('GET', 'bill/status', { params: { id: r.bill_id as string } })).toMatchObject({ amount: 150.5, status: 'NEW' });
    expect(await request('POST', 'bill/toggle_activity', { json: { id: r.bill_id, active: 0 } })).toMatchObject({ active: false });
  });

  it('GET with Content-Type: application/json and no body: payment/status, payment/search, bill/search, bill/payments, merchant/balance', async () => {
    const p = await createPaidPayment(rig.t, rig.m, { amount: '70.00' });
    expect(await request('GET', 'payment/status', { params: { id: p.paymentId } })).toMatchObject({ id: p.paymentId, amount: 70 });
    const day = new Date().toLocaleDateString('sv-SE', { timeZone: 'Europe/Moscow' });
    expect((await request('GET', 'payment/search', { params: { start_date: day, finish_date: day } })).data).toEqual(expect.any(Array));
    expect((await request('GET', 'bill/search', { params: { shop_id: rig.m.shopId } })).data).toEqual(expect.any(Array));
    expect((await request('GET', 'bill/payments', { params: { id: p.billId } })).data).toEqual([expect.objectContaining({ id: p.paymentId })]);
    expect(await request('GET', 'merchant/balance')).toMatchObject({ success: 'true' });
  });

  it('errors raise Pal24APIError with the message', async () => {
    await expect(request('GET', 'payment/status', { params: { id: 'nope' } })).rejects.toThrow('api:error.payment_not_found');
  });

  it('verify_signature accepts the postback of a paid bill, computed on the OutSum and InvId strings received', async () => {
    const r = await request('POST', 'bill/create', { json: { amount: '99.90', shop_id: rig.m.shopId, currency_in: 'RUB', type: 'normal', order_id: 'bot-sig' } });
    const { postback } = await rig.payAndDeliver(r.bill_id as string);
    expect(postback).toMatchObject({ InvId: 'bot-sig', Status: 'SUCCESS' });
    expect(verifySignature(postback.OutSum!, postback.InvId!, postback.SignatureValue!, rig.m.token)).toBe(true);
    expect(verifySignature(postback.OutSum!, postback.InvId!, postback.SignatureValue!, 'other-token')).toBe(false);
  });

  it('create_bill with custom as a JSON object (the bot passes {"user_id":1,"language":"ru"}): kept as its JSON text, given back in the postback', async () => {
    const r = await request('POST', 'bill/create', { json: { amount: '10.00', shop_id: rig.m.shopId, currency_in: 'RUB', type: 'normal', order_id: 'bot-custom', custom: { user_id: 1, language: 'ru' } } });
    const { postback } = await rig.payAndDeliver(r.bill_id as string);
    expect(JSON.parse(postback.custom!)).toEqual({ user_id: 1, language: 'ru' });
  });
});
