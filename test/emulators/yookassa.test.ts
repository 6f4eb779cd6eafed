import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, waitFor, type Receiver } from '../outbox/receiver.js';
import { YooKassaEmulator } from './yookassa.js';

// The emulator talked to over real HTTP, as yookassa.ru's curl examples do:
// curl https://api.yookassa.ru/v3/payments -X POST -u <shopId>:<secretKey>
//   -H 'Idempotence-Key: <key>' -H 'Content-Type: application/json' -d '{...}'

let emu: YooKassaEmulator;
let hook: Receiver;

beforeAll(async () => {
  hook = await startReceiver();
  emu = await YooKassaEmulator.start({ notifyUrl: `${hook.url}/yookassa`, retryBaseMs: 10 });
});
afterAll(async () => { await emu.stop(); await hook.close(); });
afterEach(async () => {
  emu.clearMisbehaviour();
  hook.setMode(() => 'ok');
  await emu.idle();
});

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

interface CallOpts { method?: string; body?: unknown; key?: string | null; auth?: string; timeoutMs?: number; raw?: string }

async function call(path: string, o: CallOpts = {}) {
  const method = o.method ?? (o.body !== undefined || o.raw !== undefined ? 'POST' : 'GET');
  const headers: Record<string, string> = { authorization: o.auth ?? basic(emu.shopId, emu.secretKey) };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    if (o.key !== null) headers['idempotence-key'] = o.key ?? randomUUID();
  }
  const res = await fetch(`${emu.apiUrl}${path}`, {
    method, headers, body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)),
    signal: o.timeoutMs ? AbortSignal.timeout(o.timeoutMs) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, any> };
}

const payout = (body: unknown, key?: string) => call('/payouts', { body, key, auth: basic(emu.payoutAgentId, emu.payoutSecretKey) });

function newPayment(extra: Record<string, unknown> = {}, key?: string) {
  return call('/payments', {
    key,
    body: { amount: { value: '100.00', currency: 'RUB' }, capture: true, confirmation: { type: 'redirect', return_url: 'https://shop.example/return' }, description: 'Order 1', ...extra },
  });
}

function notificationsFor(id: string) {
  return hook.received.map((r) => JSON.parse(r.body) as { type: string; event: string; object: { id: string; status: string } }).filter((n) => n.object.id === id);
}

describe('YooKassa emulator: payments by card', () => {
  it('creates a pending payment with a redirect confirmation; the payer pays on the hosted page and is sent to return_url; payment.succeeded is posted', async () => {
    const created = await newPayment({ metadata: { bill: 'b-1' } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      status: 'pending', paid: false, amount: { value: '100.00', currency: 'RUB' }, test: true, metadata: { bill: 'b-1' },
      confirmation: { type: 'redirect', confirmation_url: expect.stringContaining('/checkout/') },
    });
    expect(created.body.id).toMatch(/^[0-9a-f]{8}-000f-5000-8000-[0-9a-f]{12}$/);
    const page = await fetch(created.body.confirmation.confirmation_url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('id="card"');
    const paid = await fetch(`${emu.baseUrl}/checkout/${created.body.id}/pay`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'card=5555555555554444',
    });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe('https://shop.example/return');
    const got = await call(`/payments/${created.body.id}`);
    expect(got.body).toMatchObject({ status: 'succeeded', paid: true, refundable: true, payment_method: { type: 'bank_card', card: { first6: '555555', last4: '4444' } } });
    expect(got.body.confirmation).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain('5555555555554444');
    await emu.idle();
    expect(notificationsFor(created.body.id).map((n) => [n.type, n.event, n.object.status])).toEqual([['notification', 'payment.succeeded', 'succeeded']]);
  });

  it('two stages: capture false stops at waiting_for_capture (notified); capture takes a smaller amount; cancel works only before capture', async () => {
    const a = await newPayment({ capture: false });
    emu.payerAction(a.body.id, 'pay', { card: '4242424242424242' });
    expect((await call(`/payments/${a.body.id}`)).body).toMatchObject({ status: 'waiting_for_capture', paid: true });
    const captured = await call(`/payments/${a.body.id}/capture`, { body: { amount: { value: '60.00', currency: 'RUB' } } });
    expect(captured.body).toMatchObject({ status: 'succeeded', amount: { value: '60.00' } });
    const late = await call(`/payments/${a.body.id}/cancel`, { body: {} });
    expect(late.status).toBe(400);
    expect(late.body.code).toBe('invalid_request');

    const b = await newPayment({ capture: false });
    emu.payerAction(b.body.id, 'pay', { card: '4242424242424242' });
    const canceled = await call(`/payments/${b.body.id}/cancel`, { body: {} });
    expect(canceled.body).toMatchObject({ status: 'canceled', cancellation_details: { party: 'merchant', reason: 'canceled_by_merchant' } });
    await emu.idle();
    expect(notificationsFor(a.body.id).map((n) => n.event)).toEqual(['payment.waiting_for_capture', 'payment.succeeded']);
    expect(notificationsFor(b.body.id).map((n) => n.event)).toEqual(['payment.waiting_for_capture', 'payment.canceled']);
  });

  it('a 3-D Secure card goes to the bank page: Confirm pays, Fail cancels with payment_network / 3d_secure_failed', async () => {
    const a = await newPayment();
    const res = await fetch(`${emu.baseUrl}/checkout/${a.body.id}/pay`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'card=5555555555554477' });
    expect(res.headers.get('location')).toBe(`${emu.baseUrl}/checkout/${a.body.id}/3ds`);
    expect((await call(`/payments/${a.body.id}`)).body.status).toBe('pending');
    expect(await (await fetch(`${emu.baseUrl}/checkout/${a.body.id}/3ds`)).text()).toContain('id="confirm"');
    const done = await fetch(`${emu.baseUrl}/checkout/${a.body.id}/3ds`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'result=confirm' });
    expect(done.headers.get('location')).toBe('https://shop.example/return');
    expect((await call(`/payments/${a.body.id}`)).body).toMatchObject({ status: 'succeeded', authorization_details: { three_d_secure: { applied: true } } });

    const b = await newPayment();
    emu.payerAction(b.body.id, 'pay', { card: '4000002760003184' });
    emu.payerAction(b.body.id, '3ds-fail');
    expect((await call(`/payments/${b.body.id}`)).body).toMatchObject({ status: 'canceled', cancellation_details: { party: 'payment_network', reason: '3d_secure_failed' } });
  });

  it('declined cards cancel the payment with the reason; an abandoned payment expires (yoo_money / expired_on_confirmation)', async () => {
    const a = await newPayment();
    emu.payerAction(a.body.id, 'pay', { card: '4000000000009995' });
    expect((await call(`/payments/${a.body.id}`)).body).toMatchObject({ status: 'canceled', paid: false, cancellation_details: { party: 'payment_network', reason: 'insufficient_funds' } });
    const b = await newPayment();
    emu.payerAction(b.body.id, 'decline');
    expect((await call(`/payments/${b.body.id}`)).body.cancellation_details).toEqual({ party: 'payment_network', reason: 'general_decline' });
    const c = await newPayment();
    await fetch(`${emu.baseUrl}/checkout/${c.body.id}/cancel`, { method: 'POST', redirect: 'manual' });
    expect((await call(`/payments/${c.body.id}`)).body.cancellation_details).toEqual({ party: 'yoo_money', reason: 'expired_on_confirmation' });
    const d = await newPayment({ capture: false });
    emu.payerAction(d.body.id, 'pay', { card: '4242424242424242' });
    emu.payerAction(d.body.id, 'expire');
    expect((await call(`/payments/${d.body.id}`)).body.cancellation_details).toEqual({ party: 'yoo_money', reason: 'expired_on_capture' });
    expect(() => emu.payerAction(d.body.id, 'pay')).toThrow();
  });
});

describe('YooKassa emulator: SBP', () => {
  it('payment_method_data sbp with a redirect: the hosted page shows the QR link, the bank app confirms, the payment succeeds', async () => {
    const a = await newPayment({ payment_method_data: { type: 'sbp' } });
    expect(a.body).toMatchObject({ status: 'pending', payment_method: { type: 'sbp' }, confirmation: { type: 'redirect' } });
    expect(a.body.expires_at).toBeTruthy();
    const pageHtml = await (await fetch(a.body.confirmation.confirmation_url)).text();
    expect(pageHtml).toContain(`/qr/${a.body.id}`);
    const bank = await fetch(`${emu.baseUrl}/qr/${a.body.id}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=confirm' });
    expect(bank.status).toBe(200);
    expect((await call(`/payments/${a.body.id}`)).body).toMatchObject({ status: 'succeeded', payment_method: { type: 'sbp' } });
  });

  it('a qr confirmation answers confirmation_data; SBP refuses two stages and cards refuse qr', async () => {
    const a = await call('/payments', { body: { amount: { value: '10.00', currency: 'RUB' }, capture: true, payment_method_data: { type: 'sbp' }, confirmation: { type: 'qr' } } });
    expect(a.status).toBe(200);
    expect(a.body.confirmation).toEqual({ type: 'qr', confirmation_data: `${emu.baseUrl}/qr/${a.body.id}` });
    emu.payerAction(a.body.id, 'sbp-confirm');
    expect((await call(`/payments/${a.body.id}`)).body.status).toBe('succeeded');
    const twoStage = await newPayment({ capture: false, payment_method_data: { type: 'sbp' } });
    expect(twoStage.status).toBe(400);
    expect(twoStage.body.parameter).toBe('capture');
    const cardQr = await call('/payments', { body: { amount: { value: '10.00', currency: 'RUB' }, capture: true, payment_method_data: { type: 'bank_card' }, confirmation: { type: 'qr' } } });
    expect(cardQr.status).toBe(400);
    expect(cardQr.body.parameter).toBe('confirmation.type');
  });
});

describe('YooKassa emulator: what the real API refuses', () => {
  it('refuses a POST without Idempotence-Key, wrong credentials, a number amount, a bad amount format, and an unknown payment; nothing is stored', async () => {
    const before = emu.payments.size;
    const ok = await newPayment();
    expect(ok.status).toBe(200);
    const missing = await call('/payments', { key: null, body: { amount: { value: '1.00', currency: 'RUB' }, capture: true, confirmation: { type: 'redirect', return_url: 'https://x.example' } } });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ type: 'error', code: 'invalid_request', parameter: 'Idempotence-Key' });
    expect(missing.body.id).toBeTruthy();
    const wrongAuth = await call('/payments/whatever', { auth: basic(emu.shopId, 'wrong') });
    expect(wrongAuth.status).toBe(401);
    expect(wrongAuth.body).toMatchObject({ type: 'error', code: 'invalid_credentials' });
    const noAuth = await call('/payments', { auth: '', body: {} });
    expect(noAuth.status).toBe(401);
    for (const value of [100, '100.001', '-1.00', '1,00', '', '0.00']) {
      const bad = await newPayment({ amount: { value, currency: 'RUB' } });
      expect(bad.status, `value ${JSON.stringify(value)}`).toBe(400);
      expect(bad.body).toMatchObject({ type: 'error', code: 'invalid_request', parameter: 'amount.value' });
    }
    const usd = await newPayment({ amount: { value: '1.00', currency: 'USD' } });
    expect(usd.body.parameter).toBe('amount.currency');
    const notJson = await call('/payments', { raw: '{oops' });
    expect(notJson.status).toBe(400);
    const unknown = await call(`/payments/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'error', code: 'not_found' });
    expect(emu.payments.size).toBe(before + 1);
  });

  it('the same Idempotence-Key with the same body replays the first answer; with another body it is an invalid_request error', async () => {
    const key = randomUUID();
    const first = await newPayment({}, key);
    const again = await newPayment({}, key);
    expect(again).toEqual(first);
    expect([...emu.payments.values()].filter((p) => p.id === first.body.id)).toHaveLength(1);
    const other = await newPayment({ description: 'Order 2' }, key);
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'invalid_request', parameter: 'Idempotence-Key' });
    const long = await newPayment({}, 'k'.repeat(65));
    expect(long.status).toBe(400);
  });
});

describe('YooKassa emulator: refunds', () => {
  it('partial and full refunds are bounded by the payment; refund.succeeded is posted; GET /v3/refunds/{id}', async () => {
    const p = await newPayment();
    const early = await call('/refunds', { body: { payment_id: p.body.id, amount: { value: '1.00', currency: 'RUB' } } });
    expect(early.status).toBe(400);
    emu.payerAction(p.body.id, 'pay', { card: '5555555555554444' });
    const r1 = await call('/refunds', { body: { payment_id: p.body.id, amount: { value: '30.00', currency: 'RUB' }, description: 'part' } });
    expect(r1.body).toMatchObject({ status: 'succeeded', payment_id: p.body.id, amount: { value: '30.00', currency: 'RUB' } });
    expect(r1.body.id).toMatch(/-0015-5000-/);
    expect((await call(`/payments/${p.body.id}`)).body).toMatchObject({ refunded_amount: { value: '30.00' }, refundable: true, status: 'succeeded' });
    const over = await call('/refunds', { body: { payment_id: p.body.id, amount: { value: '70.01', currency: 'RUB' } } });
    expect(over.status).toBe(400);
    expect(over.body.parameter).toBe('amount.value');
    const r2 = await call('/refunds', { body: { payment_id: p.body.id, amount: { value: '70.00', currency: 'RUB' } } });
    expect(r2.status).toBe(200);
    expect((await call(`/payments/${p.body.id}`)).body).toMatchObject({ refunded_amount: { value: '100.00' }, refundable: false });
    expect((await call(`/refunds/${r1.body.id}`)).body).toEqual(r1.body);
    expect((await call(`/refunds/${randomUUID()}`)).status).toBe(404);
    expect((await call('/refunds', { body: { payment_id: randomUUID(), amount: { value: '1.00', currency: 'RUB' } } })).status).toBe(404);
    await emu.idle();
    const events = hook.received.map((r) => JSON.parse(r.body) as { event: string; object: { id: string } });
    expect(events.filter((e) => e.event === 'refund.succeeded').map((e) => e.object.id)).toEqual(expect.arrayContaining([r1.body.id, r2.body.id]));
  });
});

describe('YooKassa emulator: payouts', () => {
  // A gateway whose owner is PCI DSS certified takes card numbers ([13]); the next block is one that is not.
  beforeAll(() => { emu.payoutPciDss = true; });
  afterAll(() => { emu.payoutPciDss = false; });

  it('take the payout agent\'s own credentials, go pending, then succeed or are canceled with details; notifications follow', async () => {
    const withShopKey = await call('/payouts', { body: { amount: { value: '10.00', currency: 'RUB' }, payout_destination_data: { type: 'bank_card', card: { number: '5555555555554477' } } } });
    expect(withShopKey.status).toBe(401);
    const card = await payout({ amount: { value: '10.00', currency: 'RUB' }, payout_destination_data: { type: 'bank_card', card: { number: '5555555555554477' } }, description: 'Payout 1' });
    expect(card.status).toBe(200);
    expect(card.body).toMatchObject({ status: 'pending', payout_destination: { type: 'bank_card', card: { first6: '555555', last4: '4477' } } });
    expect(card.body.id).toMatch(/^po-/);
    expect(JSON.stringify(card.body)).not.toContain('5555555555554477');
    const sbp = await payout({ amount: { value: '20.00', currency: 'RUB' }, payout_destination_data: { type: 'sbp', phone: '79000000001', bank_id: '100000000111' } });
    expect(sbp.body.payout_destination).toEqual({ type: 'sbp', phone: '79000000001', bank_id: '100000000111', recipient_checked: false });
    const failing = await payout({ amount: { value: '30.00', currency: 'RUB' }, payout_destination_data: { type: 'bank_card', card: { number: '4000000000000002' } } });
    await waitFor(() => [card, sbp, failing].every((x) => emu.payouts.get(x.body.id)!.status !== 'pending'), 5000);
    const get = (id: string) => fetch(`${emu.apiUrl}/payouts/${id}`, { headers: { authorization: basic(emu.payoutAgentId, emu.payoutSecretKey) } }).then((r) => r.json() as Promise<Record<string, any>>);
    expect((await get(card.body.id)).status).toBe('succeeded');
    expect((await get(sbp.body.id)).status).toBe('succeeded');
    expect(await get(failing.body.id)).toMatchObject({ status: 'canceled', cancellation_details: { party: 'payout_network', reason: 'general_decline' } });
    await emu.idle();
    const events = hook.received.map((r) => JSON.parse(r.body) as { event: string; object: { id: string } });
    expect(events.filter((e) => e.object.id === failing.body.id).map((e) => e.event)).toEqual(['payout.canceled']);
    expect(events.filter((e) => e.object.id === card.body.id).map((e) => e.event)).toEqual(['payout.succeeded']);
  });

  it('a payout repeated with the same Idempotence-Key (its first answer lost) is made once', async () => {
    const before = emu.payouts.size;
    const body = { amount: { value: '15.00', currency: 'RUB' }, payout_destination_data: { type: 'sbp', phone: '79000000001', bank_id: '100000000004' } };
    const key = randomUUID();
    emu.misbehave({ op: 'payouts.create', timeoutAfterApply: 'drop' });
    await expect(payout(body, key)).rejects.toThrow();
    const again = await payout(body, key);
    expect(again.status).toBe(200);
    expect(emu.payouts.size).toBe(before + 1);
    expect(emu.payouts.has(again.body.id)).toBe(true);
  });

  it('refuses a bad card number, a bad phone, an unknown SBP bank and an amount above 500 000', async () => {
    for (const d of [
      { type: 'bank_card', card: { number: '1234' } },
      { type: 'bank_card', card: { number: '5555555555554478' } },
      { type: 'sbp', phone: '+7 900 000-00-01', bank_id: '100000000111' },
      { type: 'sbp', phone: '79000000001', bank_id: '999' },
      { type: 'wallet' },
    ]) {
      const r = await payout({ amount: { value: '10.00', currency: 'RUB' }, payout_destination_data: d });
      expect(r.status, JSON.stringify(d)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
    }
    const big = await payout({ amount: { value: '500000.01', currency: 'RUB' }, payout_destination_data: { type: 'sbp', phone: '79000000001', bank_id: '100000000111' } });
    expect(big.status).toBe(400);
    const banks = await fetch(`${emu.apiUrl}/sbp_banks`, { headers: { authorization: basic(emu.payoutAgentId, emu.payoutSecretKey) } }).then((r) => r.json() as Promise<{ items: { bank_id: string }[] }>);
    expect(banks.items.map((b) => b.bank_id)).toContain('100000000111');
  });
});

describe('YooKassa emulator: misbehaviour switches', () => {
  it('slow: the answer comes after the delay', async () => {
    emu.misbehave({ op: 'payments.create', delayMs: 300 });
    const t0 = Date.now();
    const r = await newPayment();
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it('5xx: answered before applying, so nothing exists, and the retry with the same key creates it', async () => {
    const before = emu.payments.size;
    emu.misbehave({ op: 'payments.create', status5xx: 500 });
    const key = randomUUID();
    const r = await newPayment({}, key);
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ type: 'error', code: 'internal_server_error' });
    expect(emu.payments.size).toBe(before);
    const again = await newPayment({}, key);
    expect(again.status).toBe(200);
    expect(emu.payments.size).toBe(before + 1);
  });

  it('timeout after applying (held past the client\'s timeout, or dropped): the payment exists, and the retry with the same key returns it', async () => {
    for (const mode of ['hold', 'drop'] as const) {
      const before = emu.payments.size;
      emu.misbehave({ op: 'payments.create', timeoutAfterApply: mode });
      const key = randomUUID();
      await expect(newPaymentWithTimeout(key)).rejects.toThrow();
      expect(emu.payments.size).toBe(before + 1);
      const retry = await newPayment({}, key);
      expect(retry.status).toBe(200);
      expect(emu.payments.has(retry.body.id)).toBe(true);
      expect(emu.payments.size).toBe(before + 1);
    }
    // GET can misbehave too (the reconciliation worker's read).
    emu.misbehave({ op: 'payments.get', status5xx: 503 });
    expect((await call(`/payments/${[...emu.payments.keys()][0]}`)).status).toBe(503);
  });

  it('a notification is retried until the receiver answers 200', async () => {
    let n = 0;
    hook.setMode(() => (++n <= 2 ? 'fail500' : 'ok'));
    const p = await newPayment();
    emu.payerAction(p.body.id, 'pay', { card: '4242424242424242' });
    await emu.idle();
    const tries = emu.notifier.deliveries.filter((d) => (d.body as { object: { id: string } }).object.id === p.body.id);
    expect(tries.map((d) => [d.attempt, d.status, d.accepted])).toEqual([[1, 500, false], [2, 500, false], [3, 200, true]]);
  });

  it('duplicate notifications: each is delivered twice', async () => {
    emu.misbehave({ notifications: 'duplicate' });
    const p = await newPayment();
    emu.payerAction(p.body.id, 'pay', { card: '4242424242424242' });
    await emu.idle();
    expect(notificationsFor(p.body.id).map((n) => n.event)).toEqual(['payment.succeeded', 'payment.succeeded']);
  });

  it('out-of-order notifications: payment.succeeded arrives before payment.waiting_for_capture', async () => {
    emu.misbehave({ notifications: 'out-of-order' });
    const p = await newPayment({ capture: false });
    emu.payerAction(p.body.id, 'pay', { card: '4242424242424242' });
    await call(`/payments/${p.body.id}/capture`, { body: {} });
    expect(notificationsFor(p.body.id)).toEqual([]);
    emu.flushNotifications();
    await emu.idle();
    expect(notificationsFor(p.body.id).map((n) => n.event)).toEqual(['payment.succeeded', 'payment.waiting_for_capture']);
  });

  it('lost notifications: nothing arrives, and only a GET tells the outcome', async () => {
    emu.misbehave({ notifications: 'lost' });
    const p = await newPayment();
    emu.payerAction(p.body.id, 'pay', { card: '4242424242424242' });
    await emu.idle();
    expect(notificationsFor(p.body.id)).toEqual([]);
    expect(emu.notifier.lost.some((l) => (l.body as { object: { id: string } }).object.id === p.body.id)).toBe(true);
    expect((await call(`/payments/${p.body.id}`)).body.status).toBe('succeeded');
  });

  it('forged notifications: an object the API does not know (404 on re-fetch), a status the API contradicts', async () => {
    const seen = hook.received.length;
    const unknown = await emu.forgeNotification('unknown-object');
    expect(unknown.status).toBe(200);
    const forged = JSON.parse(hook.received[seen]!.body) as { event: string; object: { id: string } };
    expect(forged.event).toBe('payment.succeeded');
    expect((await call(`/payments/${forged.object.id}`)).status).toBe(404);
    const p = await newPayment();
    await emu.forgeNotification('contradicting-status', p.body.id);
    const second = JSON.parse(hook.received.at(-1)!.body) as { object: { id: string; status: string } };
    expect(second.object).toMatchObject({ id: p.body.id, status: 'succeeded' });
    expect((await call(`/payments/${p.body.id}`)).body.status).toBe('pending');
  });
});

async function newPaymentWithTimeout(key: string) {
  return call('/payments', {
    key, timeoutMs: 400,
    body: { amount: { value: '100.00', currency: 'RUB' }, capture: true, confirmation: { type: 'redirect', return_url: 'https://shop.example/return' }, description: 'Order 1' },
  });
}

describe('YooKassa emulator: 202 and 429 (issue 29)', () => {
  beforeAll(() => { emu.payoutPciDss = true; });
  afterAll(() => { emu.payoutPciDss = false; });
  const card = { amount: { value: '10.00', currency: 'RUB' }, payout_destination_data: { type: 'bank_card', card: { number: '5555555555554477' } } };

  it('[11] 202: the payout is made and answered "processing" with retry_after; the same key gets 202 again, then the payout; a new key makes a second payout', async () => {
    emu.misbehave({ op: 'payouts.create', processing: { answers: 2, retryAfterMs: 70 } });
    const first = await payout(card, 'po-202-a');
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ type: 'processing', retry_after: 70 });
    expect((await payout(card, 'po-202-a')).status).toBe(202);
    const done = await payout(card, 'po-202-a');
    expect(done.status).toBe(200);
    expect((await payout(card, 'po-202-a')).body.id).toBe(done.body.id);
    // The hazard a client that treats 202 as a refusal meets: another key is another payout.
    const other = await payout(card, 'po-202-b');
    expect(other.status).toBe(200);
    expect(other.body.id).not.toBe(done.body.id);
  });

  it('[12] 429 refuses before anything is applied, with Retry-After when asked; the same key then makes the payout once', async () => {
    const before = emu.payouts.size;
    emu.misbehave({ op: 'payouts.create', status429: { retryAfter: 2 } });
    const limited = await fetch(`${emu.apiUrl}/payouts`, {
      method: 'POST', body: JSON.stringify(card),
      headers: { authorization: basic(emu.payoutAgentId, emu.payoutSecretKey), 'content-type': 'application/json', 'idempotence-key': 'po-429' },
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await limited.json()).toMatchObject({ type: 'error', code: 'too_many_requests' });
    expect(emu.payouts.size).toBe(before);
    expect((await payout(card, 'po-429')).status).toBe(200);
    expect(emu.payouts.size).toBe(before + 1);
  });
});

/** [14] The payout widget's form as a browser posts it from the widget's iframe; the synonym the answer page posts to its parent. */
async function widgetCard(number: string, accountId = emu.payoutAgentId) {
  const form = await fetch(`${emu.baseUrl}/payouts-data/form?account_id=${accountId}`);
  expect(form.status).toBe(200);
  expect(await form.text()).toContain('name="card_number"');
  const res = await fetch(`${emu.baseUrl}/payouts-data/form`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ account_id: accountId, card_number: number }).toString(),
  });
  const page = await res.text();
  const posted = /parent\.postMessage\((\{.*?\}), '\*'\)/s.exec(page)?.[1];
  return posted ? JSON.parse(posted) as { source: string; result?: Record<string, string>; error?: string } : null;
}

describe('YooKassa emulator: card numbers need PCI DSS; the payout widget\'s payout_token (issue 29 items 4 and 6)', () => {
  const amount = { value: '10.00', currency: 'RUB' };

  it('[13] a gateway not enabled for card numbers answers 403 forbidden to payout_destination_data.card.number and makes no payout; SBP still goes', async () => {
    expect(emu.payoutPciDss).toBe(false);
    const before = emu.payouts.size;
    const r = await payout({ amount, payout_destination_data: { type: 'bank_card', card: { number: '5555555555554477' } } });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ type: 'error', code: 'forbidden', parameter: 'payout_destination_data.card.number' });
    expect(JSON.stringify(r.body)).not.toContain('5555555555554477');
    expect(emu.payouts.size).toBe(before);
    const sbp = await payout({ amount, payout_destination_data: { type: 'sbp', phone: '79000000001', bank_id: '100000000111' } });
    expect(sbp.status).toBe(200);
  });

  it('[14] the widget\'s form gives a synonym with the card\'s mask; a payout by payout_token pays that card, a canceled card still cancels', async () => {
    const script = await fetch(`${emu.baseUrl}/payouts-data/widget.js`);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(await script.text()).toContain('window.PayoutsData = PayoutsData');
    const good = await widgetCard('5555 5555 5555 4477');
    expect(good).toMatchObject({ source: 'yookassa-payouts-data', result: { first6: '555555', last4: '4477', card_type: 'MasterCard', issuer_country: 'RU' } });
    expect(good!.result!.payout_token).toMatch(/^pt-/);
    expect(JSON.stringify(good)).not.toContain('5555555555554477');
    const r = await payout({ amount, payout_token: good!.result!.payout_token, description: 'Payout by synonym' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'pending', payout_destination: { type: 'bank_card', card: { first6: '555555', last4: '4477' } } });
    expect(emu.payouts.get(r.body.id)!._by).toBe('payout_token');
    // A synonym serves several payouts ([14]).
    expect((await payout({ amount, payout_token: good!.result!.payout_token })).status).toBe(200);
    const bad = await widgetCard('4000000000000002');
    const failing = await payout({ amount, payout_token: bad!.result!.payout_token });
    await waitFor(() => emu.payouts.get(failing.body.id)!.status !== 'pending', 5000);
    expect(emu.payouts.get(failing.body.id)).toMatchObject({ status: 'canceled', cancellation_details: { party: 'payout_network', reason: 'general_decline' } });
  });

  it('[14] both payout_token and payout_destination_data, neither, or an unknown synonym are 400 invalid_request; a form of another gateway fails', async () => {
    const { result } = (await widgetCard('4242424242424242'))!;
    const both = await payout({ amount, payout_token: result!.payout_token, payout_destination_data: { type: 'sbp', phone: '79000000001', bank_id: '100000000111' } });
    expect(both).toMatchObject({ status: 400, body: { code: 'invalid_request', parameter: 'payout_token' } });
    expect((await payout({ amount })).status).toBe(400);
    expect(await payout({ amount, payout_token: 'pt-unknown' })).toMatchObject({ status: 400, body: { code: 'invalid_request', parameter: 'payout_token' } });
    expect(await widgetCard('4242424242424242', '999999')).toEqual({ source: 'yookassa-payouts-data', error: 'invalid_account_id' });
  });
});

describe('YooKassa emulator: answers that decide nothing ([17], [18]) and a revoked permission ([19])', () => {
  /** A payment saved its card ([15]); the saved method's id. */
  async function savedMethod(): Promise<string> {
    const p = await newPayment({ save_payment_method: true });
    emu.payerAction(p.body.id, 'pay', { card: '4242424242424242' });
    return (await call(`/payments/${p.body.id}`)).body.payment_method.id as string;
  }
  const autopayment = (method: string, key: string) =>
    call('/payments', { key, body: { amount: { value: '30.00', currency: 'RUB' }, capture: true, payment_method_id: method } });

  it('[17] an autopayment applied then answered 500 (twice): the charge exists and is notified; the second repeat with the same key gets it, once', async () => {
    const method = await savedMethod();
    emu.misbehave({ op: 'payments.create', status5xxAfterApply: { answers: 2 } });
    const key = randomUUID();
    const before = emu.payments.size;
    expect((await autopayment(method, key)).status).toBe(500);
    expect(emu.payments.size).toBe(before + 1);
    expect((await autopayment(method, key)).status).toBe(500);
    const third = await autopayment(method, key);
    expect(third).toMatchObject({ status: 200, body: { status: 'succeeded', payment_method: { id: method } } });
    expect(emu.payments.size).toBe(before + 1);
    await waitFor(() => notificationsFor(third.body.id).some((n) => n.event === 'payment.succeeded'));
  });

  it('[18] a 429 may carry the wait as the body\'s retry_after (ms)', async () => {
    emu.misbehave({ op: 'payments.create', status429: { retryAfterMs: 1000 } });
    const r = await newPayment();
    expect(r).toMatchObject({ status: 429, body: { type: 'error', code: 'too_many_requests', retry_after: 1000 } });
  });

  it('[19] after the payer revoked the permission, an autopayment is canceled with reason permission_revoked', async () => {
    const method = await savedMethod();
    emu.revokePermission(method);
    const r = await autopayment(method, randomUUID());
    expect(r).toMatchObject({ status: 200, body: { status: 'canceled', cancellation_details: { reason: 'permission_revoked' } } });
  });
});
