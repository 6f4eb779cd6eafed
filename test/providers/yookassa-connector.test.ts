import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { tokenAccount, type Connector } from '../../src/domain/providers/connector.js';
import { YooKassaConnector } from '../../src/domain/providers/connectors/yookassa/index.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { connectorCalls, formPost, newOpId } from './connector-calls.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, payRequest } from '../factories/payment.js';
import { startReceiver, waitFor, type Receiver } from '../outbox/receiver.js';
import { freePort } from '../helpers/service-process.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';

// The yookassa connector against the YooKassa emulator (a real HTTP server on 127.0.0.1), built by
// the registry from the connectors table, every call through the timed call wrapper (8 s here, 1 s in the
// misbehaviour tests: `quick`).

let t: TestApp;
let yk: YooKassaEmulator;
let hook: Receiver;
let conn: Connector;

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const { call, put, create: createAt, getPayment, refund, parse } = connectorCalls(() => t, () => conn);
const create = (paymentId: string, o: { method?: 'card' | 'sbp'; amount?: string } = {}) => createAt(paymentId, o.amount ?? '10.00', o.method);
/** The same calls with a 1 s timeout, for the tests of slow and unanswered calls. */
const quick = connectorCalls(() => t, () => conn, 1000);
const settings = (extra: Record<string, unknown> = {}) => ({
  base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, payout_agent_id: yk.payoutAgentId, payout_secret_key: yk.payoutSecretKey,
  // The emulator notifies from loopback; without allowed_ips only YooKassa's networks are believed.
  allowed_ips: '127.0.0.1', ...extra,
});

beforeAll(async () => {
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '8000' });
  hook = await startReceiver();
  // A payout gateway enabled for card numbers (its owner PCI DSS certified); one without is tested below.
  yk = await YooKassaEmulator.start({ notifyUrl: `${hook.url}/yookassa`, retryBaseMs: 10, payoutPciDss: true });
  expect((await put('yk-test', { kind: 'yookassa', mode: 'test', settings: settings({ payout_pci_dss: true }) })).statusCode).toBe(201);
  conn = (await t.app.services.connectors.get('yk-test'))!;
});
afterAll(async () => { await yk.stop(); await hook.close(); await t.close(); });
afterEach(async () => { yk.clearMisbehaviour(); await yk.idle(); });

const form = formPost;
const pid = newOpId;

/** The payer on YooKassa's hosted page: the card form, then (for 3-D Secure) the bank's page. */
async function payOnPage(url: string, card: string) {
  const r = await fetch(`${url}/pay`, form(`card=${card}`));
  expect(r.status).toBe(303);
  return r.headers.get('location');
}

/** Notifications the emulator posted for an object, as received. */
const notes = (id: string) => hook.received.map((r) => JSON.parse(r.body) as { event: string; object: { id: string } }).filter((n) => n.object.id === id);

async function paidPayment(amount = '10.00') {
  const id = pid();
  const c = await create(id, { amount });
  if (c.status !== 'action') throw new Error(`expected an action, got ${c.status}`);
  await payOnPage((c.action as { url: string }).url, '5555555555554444');
  return { id, ref: c.ref };
}

describe('yookassa connector: operator API and registry', () => {
  it('PUT stores a yookassa connector with its secrets masked; routing to it is accepted for payments and, with payout credentials, payouts', async () => {
    const r = await put('yk-ops', { kind: 'yookassa', mode: 'live', settings: settings({ allowed_ips: '185.71.76.0/27, 77.75.156.11' }) });
    expect(r.statusCode).toBe(201);
    expect(r.json().settings).toEqual({
      base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: '********', payout_agent_id: yk.payoutAgentId, payout_secret_key: '********',
      allowed_ips: '185.71.76.0/27, 77.75.156.11',
    });
    expect(r.body).not.toContain(yk.secretKey);
    const bad = await put('yk-bad', { kind: 'yookassa', mode: 'live', settings: settings({ allowed_ips: '185.71.76.0/33' }) });
    expect(bad.statusCode).toBe(422);
    expect(Object.keys(bad.json().errors)).toEqual(['settings.allowed_ips']);
    await put('yk-nopayout', { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey } });
    const m = await createMerchant(t);
    const patch = (routing: Record<string, string[]>) => t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing } });
    const ok = await patch({ payment_card: ['yk-ops', 'sandbox'], payment_sbp: ['yk-nopayout'], payout_card: ['yk-ops'], payout_sbp: ['yk-ops'] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().routing).toEqual({ payment_card: ['yk-ops', 'sandbox'], payment_sbp: ['yk-nopayout'], payout_card: ['yk-ops'], payout_sbp: ['yk-ops'] });
    const noPayout = await patch({ payout_card: ['yk-nopayout'] });
    expect(noPayout.statusCode).toBe(422);
    expect(Object.keys(noPayout.json().errors)).toEqual(['routing.payout_card']);
    const built = await t.app.services.connectors.get('yk-ops');
    expect(built).toBeInstanceOf(YooKassaConnector);
    expect(built!.capabilities).toMatchObject({ payment: { card: true, sbp: true }, payout: { card: true, sbp: true }, hostsCardForm: true });
    expect((await t.app.services.connectors.get('yk-nopayout'))!.capabilities.payout).toEqual({ card: false, sbp: false });
  });
});

describe('yookassa connector: payments', () => {
  it('a card payment is created one-stage with our id as Idempotence-Key and the amount as a string; the payer pays on the hosted page; getPayment says paid', async () => {
    const id = pid();
    const c = await create(id, { amount: '10.50' });
    expect(c).toMatchObject({ status: 'action', action: { type: 'redirect', url: expect.stringMatching(new RegExp(`^${yk.baseUrl}/checkout/`)) } });
    if (c.status !== 'action') return;
    const p = yk.payments.get(c.ref)!;
    expect(p).toMatchObject({ amount: { value: '10.50', currency: 'RUB' }, status: 'pending', metadata: { payment_id: id }, _capture: true, _method: 'bank_card' });
    expect(p._returnUrl).toBe(`http://pay.test/pay/bill1/return/${id}`);
    // The emulator keeps answers by Idempotence-Key: the same id gives the same payment back.
    const again = await create(id, { amount: '10.50' });
    expect(again).toMatchObject({ status: 'action', ref: c.ref });
    expect([...yk.payments.values()].filter((x) => x.metadata.payment_id === id)).toHaveLength(1);
    expect(await getPayment(id, c.ref)).toMatchObject({ status: 'action', ref: c.ref });
    expect(await payOnPage((c.action as { url: string }).url, '5555555555554444')).toBe(`http://pay.test/pay/bill1/return/${id}`);
    const paid = await getPayment(id, c.ref);
    expect(paid).toMatchObject({ status: 'paid', ref: c.ref });
    expect(paid.status === 'paid' && paid.amountReceived.equals('10.50')).toBe(true);
  });

  it('a 3-D Secure card pays after the bank page; declines carry cancellation_details.reason as the code', async () => {
    const a = pid();
    const ca = await create(a);
    if (ca.status !== 'action') throw new Error(ca.status);
    expect(await payOnPage((ca.action as { url: string }).url, '5555555555554477')).toBe(`${yk.baseUrl}/checkout/${ca.ref}/3ds`);
    expect((await getPayment(a, ca.ref)).status).toBe('action');
    await fetch(`${yk.baseUrl}/checkout/${ca.ref}/3ds`, form('result=confirm'));
    expect((await getPayment(a, ca.ref)).status).toBe('paid');

    const b = pid();
    const cb = await create(b);
    if (cb.status !== 'action') throw new Error(cb.status);
    await payOnPage((cb.action as { url: string }).url, '4000000000009995');
    expect(await getPayment(b, cb.ref)).toMatchObject({ status: 'declined', code: 'insufficient_funds', message: expect.stringContaining('payment_network'), ref: cb.ref });

    const c = pid();
    const cc = await create(c);
    if (cc.status !== 'action') throw new Error(cc.status);
    await payOnPage((cc.action as { url: string }).url, '4000002760003184');
    await fetch(`${yk.baseUrl}/checkout/${cc.ref}/3ds`, form('result=fail'));
    expect(await getPayment(c, cc.ref)).toMatchObject({ status: 'declined', code: '3d_secure_failed' });
  });

  it('an SBP payment is created with payment_method_data sbp and a redirect; the payer confirms in the bank app; paid', async () => {
    const id = pid();
    const c = await create(id, { method: 'sbp', amount: '250.00' });
    expect(c).toMatchObject({ status: 'action', action: { type: 'redirect' } });
    if (c.status !== 'action') return;
    expect(yk.payments.get(c.ref)).toMatchObject({ _method: 'sbp', _capture: true, expires_at: expect.any(String) });
    const page = await (await fetch((c.action as { url: string }).url)).text();
    expect(page).toContain(`/qr/${c.ref}`);
    await fetch(`${yk.baseUrl}/qr/${c.ref}`, form('action=confirm'));
    const paid = await getPayment(id, c.ref);
    expect(paid.status === 'paid' && paid.amountReceived.equals('250')).toBe(true);
  });

  it('a payment a shop holds (waiting_for_capture) is captured by the connector, once, and reads as paid', async () => {
    const id = pid();
    const c = await create(id);
    if (c.status !== 'action') throw new Error(c.status);
    yk.payments.get(c.ref)!._capture = false; // the shop is set to hold payments
    await payOnPage((c.action as { url: string }).url, '5555555555554444');
    expect(yk.payments.get(c.ref)!.status).toBe('waiting_for_capture');
    const a = await getPayment(id, c.ref);
    expect(a).toMatchObject({ status: 'paid', ref: c.ref });
    expect(await getPayment(id, c.ref)).toMatchObject({ status: 'paid' });
    expect(yk.requests.filter((r) => r.path === `/v3/payments/${c.ref}/capture`)).toHaveLength(1);
  });
});

describe('yookassa connector: refunds and payouts', () => {
  it('refunds partly then fully by POST /refunds with payment_id; more than was paid is failed with YooKassa\'s code; getRefund reads it', async () => {
    const { ref } = await paidPayment('10.00');
    const r1 = await refund(pid(), ref, '3.00');
    expect(r1).toMatchObject({ status: 'succeeded', ref: expect.any(String) });
    expect(yk.payments.get(ref)!.refunded_amount).toEqual({ value: '3.00', currency: 'RUB' });
    const r2 = await refund(pid(), ref, '7.00');
    expect(r2.status).toBe('succeeded');
    const r3 = await refund(pid(), ref, '0.01');
    expect(r3).toMatchObject({ status: 'failed', code: 'yookassa:invalid_request', ref: null });
    expect(yk.payments.get(ref)!.refunded_amount).toEqual({ value: '10.00', currency: 'RUB' });
    const got = await call('get_refund', (ctx) => conn.getRefund({ refundId: 'x', ref: (r1 as { ref: string }).ref }, ctx));
    expect(got).toMatchObject({ status: 'succeeded', ref: (r1 as { ref: string }).ref });
    // A refund in the bill's other currency never reaches YooKassa (the shop took roubles).
    const before = yk.requests.length;
    const usd = await call('refund', (ctx) => conn.refund({ refundId: pid(), paymentId: 'p', paymentRef: ref, amount: new Decimal('1'), amountRub: null, currency: 'USD', fromCard: null }, ctx));
    expect(usd).toMatchObject({ status: 'failed', code: 'yookassa:currency_not_supported' });
    expect(yk.requests.length).toBe(before);
  });

  it('a refund of a USD bill is sent as its RUB amount (what the payer paid), never as the bill currency', async () => {
    const { ref } = await paidPayment('925.00');
    const r = await refund(pid(), ref, '5.00', { currency: 'USD', amountRub: '462.50' });
    expect(r).toMatchObject({ status: 'succeeded', ref: expect.any(String) });
    expect([...yk.refunds.values()].find((x) => x.id === (r as { ref: string }).ref)!.amount).toEqual({ value: '462.50', currency: 'RUB' });
    expect(yk.payments.get(ref)!.refunded_amount).toEqual({ value: '462.50', currency: 'RUB' });
  });

  it('pays out to a card and to an SBP phone with the payout gateway\'s credentials and the bank\'s SBP id; a refused recipient is failed', async () => {
    const cardId = pid();
    const card = await call('create_payout', (ctx) => conn.createPayout({
      payoutId: cardId, accountType: 'CARD', account: '5555555555554477', cardHolder: null, bankMemberId: null, amount: new Decimal('500'), currency: 'RUB',
    }, ctx));
    expect(card).toMatchObject({ status: 'pending', ref: expect.stringMatching(/^po-/) });
    const cardRef = (card as { ref: string }).ref;
    expect(yk.payouts.get(cardRef)).toMatchObject({ amount: { value: '500.00', currency: 'RUB' }, payout_destination: { type: 'bank_card', card: { first6: '555555', last4: '4477' } } });
    await waitFor(() => yk.payouts.get(cardRef)!.status !== 'pending');
    expect(await call('get_payout', (ctx) => conn.getPayout({ payoutId: cardId, ref: cardRef }, ctx))).toEqual({ status: 'succeeded', ref: cardRef });
    // A reference (a notification's) of a payout whose metadata names another payout of ours says nothing of this one.
    expect(await call('get_payout', (ctx) => conn.getPayout({ payoutId: pid(), ref: cardRef }, ctx))).toMatchObject({ status: 'refused', code: 'yookassa:not_ours' });

    const payoutId = pid();
    const sbp = await call('create_payout', (ctx) => conn.createPayout({
      payoutId, accountType: 'SBP', account: '+79000000002', cardHolder: null, bankMemberId: '100000000111', amount: new Decimal('12.34'), currency: 'RUB',
    }, ctx));
    const sbpRef = (sbp as { ref: string }).ref;
    expect(yk.payouts.get(sbpRef)).toMatchObject({ payout_destination: { type: 'sbp', phone: '79000000002', bank_id: '100000000111' }, metadata: { payout_id: payoutId } });
    await waitFor(() => yk.payouts.get(sbpRef)!.status !== 'pending');
    expect(await call('get_payout', (ctx) => conn.getPayout({ payoutId, ref: sbpRef }, ctx))).toMatchObject({ status: 'failed', code: 'recipient_not_found' });
    // payout.succeeded / payout.canceled are read again with the payout gateway's credentials.
    await yk.idle();
    expect(await parse(notes(cardRef)[0])).toMatchObject({ ok: true, object: 'payout', eventKey: `payout.succeeded:${cardRef}`, outcome: { status: 'succeeded' } });
    expect(await parse(notes(sbpRef)[0])).toMatchObject({
      ok: true, object: 'payout', eventKey: `payout.canceled:${sbpRef}`, ourId: payoutId, outcome: { status: 'failed', code: 'recipient_not_found' },
    });
  });

  it('without payout_pci_dss a card number is refused before anything is sent (yookassa:pan_not_allowed); the payout widget\'s payout_token goes as payout_token', async () => {
    await put('yk-no-pci', { kind: 'yookassa', mode: 'test', settings: settings() });
    const c = (await t.app.services.connectors.get('yk-no-pci'))!;
    expect(c.capabilities.payoutCardBy).toEqual({ number: false, tokens: ['yookassa'] });
    expect(conn.capabilities.payoutCardBy).toEqual({ number: true, tokens: ['yookassa'] });
    expect(c.payoutWidget).toEqual({ provider: 'yookassa', accountId: yk.payoutAgentId, scriptUrl: 'https://yookassa.ru/payouts-data/3.1.0/widget.js' });
    const sent = yk.requests.length;
    const r = await call('create_payout', (ctx) => c.createPayout({
      payoutId: pid(), accountType: 'CARD', account: '5555555555554477', cardHolder: null, bankMemberId: null, amount: new Decimal('5'), currency: 'RUB',
    }, ctx));
    expect(r).toMatchObject({ status: 'refused', code: 'yookassa:pan_not_allowed' });
    expect(yk.requests.length).toBe(sent);
    const syn = yk.tokenize('5555555555554444');
    const payoutId = pid();
    const byToken = await call('create_payout', (ctx) => c.createPayout({
      payoutId, accountType: 'CARD', account: tokenAccount('yookassa', syn.payout_token), cardHolder: null, bankMemberId: null, amount: new Decimal('5'), currency: 'RUB',
    }, ctx));
    expect(byToken.status).toMatch(/pending|succeeded/);
    const made = [...yk.payouts.values()].filter((x) => x.metadata.payout_id === payoutId);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ _by: 'payout_token', payout_destination: { type: 'bank_card', card: { first6: '555555', last4: '4444' } } });
  });

  it('without payout credentials a payout is refused before anything is sent', async () => {
    await put('yk-shop-only', { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey } });
    const c = (await t.app.services.connectors.get('yk-shop-only'))!;
    const before = yk.requests.length;
    const r = await call('create_payout', (ctx) => c.createPayout({
      payoutId: pid(), accountType: 'CARD', account: '5555555555554477', cardHolder: null, bankMemberId: null, amount: new Decimal('5'), currency: 'RUB',
    }, ctx), c);
    expect(r).toMatchObject({ status: 'refused', code: 'yookassa:payouts_not_configured' });
    expect(yk.requests.length).toBe(before);
  });
});

describe('yookassa connector: misbehaviour', () => {
  it('a slow answer is unknown by the wrapper\'s timeout; the creation repeated with the same key finds the one payment it made', async () => {
    yk.misbehave({ op: 'payments.create', delayMs: 2000 });
    const id = pid();
    const r = await quick.create(id, '10.00');
    expect(r).toMatchObject({ status: 'unknown', reason: 'timeout after 1000 ms' });
    await waitFor(() => [...yk.payments.values()].some((x) => x.metadata.payment_id === id));
    const again = await create(id);
    expect(again.status).toBe('action');
    expect([...yk.payments.values()].filter((x) => x.metadata.payment_id === id)).toHaveLength(1);
  });

  it('a 5xx on creation, bad credentials (401) and a refused connection are refusals with the code, safe to route on', async () => {
    yk.misbehave({ op: 'payments.create', status5xx: 503, times: 4 }); // through the connector's 3 repeats
    expect(await create(pid())).toMatchObject({ status: 'refused', code: 'yookassa:internal_server_error' });
    await put('yk-wrong-key', { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: 'test_wrong' } });
    const wrong = (await t.app.services.connectors.get('yk-wrong-key'))!;
    const r401 = await call('create_payment', (ctx) => wrong.createPayment({ paymentId: pid(), method: 'card', amount: new Decimal('1') }, ctx), wrong);
    expect(r401).toMatchObject({ status: 'refused', code: 'yookassa:invalid_credentials' });
    // A live connector given a test shop's key (the answer says test: true) is a configuration error.
    await put('yk-live-on-test', { kind: 'yookassa', mode: 'live', settings: settings() });
    const mixed = (await t.app.services.connectors.get('yk-live-on-test'))!;
    const rMode = await call('create_payment', (ctx) => mixed.createPayment({ paymentId: pid(), method: 'card', amount: new Decimal('1') }, ctx), mixed);
    expect(rMode).toMatchObject({ status: 'refused', code: 'yookassa:mode_mismatch' });
    await put('yk-down', { kind: 'yookassa', mode: 'test', settings: { base_url: `http://127.0.0.1:${await freePort()}/v3`, shop_id: '1', secret_key: 's' } });
    const down = (await t.app.services.connectors.get('yk-down'))!;
    const refused = await call('create_payment', (ctx) => down.createPayment({ paymentId: pid(), method: 'card', amount: new Decimal('1') }, ctx), down);
    expect(refused).toMatchObject({ status: 'refused', code: 'connection_refused' });
  });

  it('a creation applied and then unanswered (held or cut) is unknown; repeated with the same key it is found applied, once', async () => {
    yk.misbehave({ op: 'payments.create', timeoutAfterApply: 'hold', holdMs: 3000 });
    const id = pid();
    expect(await quick.create(id, '10.00')).toMatchObject({ status: 'unknown', reason: 'timeout after 1000 ms' });
    const again = await create(id);
    expect(again.status).toBe('action');
    expect((await getPayment(id, (again as { ref: string }).ref)).status).toBe('action');
    expect([...yk.payments.values()].filter((x) => x.metadata.payment_id === id)).toHaveLength(1);

    const { ref } = await paidPayment('10.00');
    const refundId = pid();
    yk.misbehave({ op: 'refunds.create', timeoutAfterApply: 'drop' });
    expect((await refund(refundId, ref, '4.00')).status).toBe('unknown');
    expect(yk.payments.get(ref)!.refunded_amount!.value).toBe('4.00');
    expect((await refund(refundId, ref, '4.00')).status).toBe('succeeded');
    expect(yk.payments.get(ref)!.refunded_amount!.value).toBe('4.00');
  });

  it('a 5xx on a payout is unknown, not refused: YooKassa says the result is unknown, and no other connector may pay it', async () => {
    const payoutId = pid();
    const make = () => call('create_payout', (ctx) => conn.createPayout({
      payoutId, accountType: 'CARD', account: '5555555555554477', cardHolder: null, bankMemberId: null, amount: new Decimal('7'), currency: 'RUB',
    }, ctx));
    yk.misbehave({ op: 'payouts.create', status5xx: 500, times: 4 }); // through the connector's 3 repeats
    expect((await make()).status).toBe('unknown');
    expect((await make()).status).toMatch(/pending|succeeded/);
    expect([...yk.payouts.values()].filter((x) => x.metadata.payout_id === payoutId)).toHaveLength(1);
  });
});

describe('yookassa connector: notifications', () => {
  it('a notification is believed only as the object read again: payment.succeeded gives paid with our id; duplicates give the same eventKey; reply 200', async () => {
    yk.misbehave({ notifications: 'duplicate' });
    const { id, ref } = await paidPayment('10.00');
    await yk.idle();
    const got = notes(ref);
    expect(got.map((n) => n.event)).toEqual(['payment.succeeded', 'payment.succeeded']);
    const parsed = await Promise.all(got.map((n) => parse(n)));
    for (const p of parsed) {
      expect(p).toMatchObject({ ok: true, eventKey: `payment.succeeded:${ref}`, object: 'payment', ref, ourId: id, outcome: { status: 'paid', ref }, reply: { status: 200 } });
    }
    const refundRes = await refund(pid(), ref, '2.50');
    await yk.idle();
    const rn = notes((refundRes as { ref: string }).ref);
    expect(await parse(rn[0])).toMatchObject({ ok: true, object: 'refund', eventKey: `refund.succeeded:${(refundRes as { ref: string }).ref}`, outcome: { status: 'succeeded' } });
  });

  it('out of order: a late waiting_for_capture after succeeded reads as succeeded, the same eventKey', async () => {
    yk.misbehave({ notifications: 'out-of-order' });
    const id = pid();
    const c = await create(id);
    if (c.status !== 'action') throw new Error(c.status);
    yk.payments.get(c.ref)!._capture = false;
    await payOnPage((c.action as { url: string }).url, '5555555555554444');
    expect((await getPayment(id, c.ref)).status).toBe('paid'); // captured
    yk.flushNotifications();
    await yk.idle();
    const got = notes(c.ref);
    expect(got.map((n) => n.event)).toEqual(['payment.succeeded', 'payment.waiting_for_capture']);
    const keys = new Set<string>();
    for (const n of got) {
      const p = await parse(n);
      expect(p).toMatchObject({ ok: true, outcome: { status: 'paid' } });
      if (p.ok) keys.add(p.eventKey);
    }
    expect([...keys]).toEqual([`payment.succeeded:${c.ref}`]);
  });

  it('forged: an object YooKassa does not know is ok:false; a status the API contradicts is read as the API says, under another key', async () => {
    const before = hook.received.length;
    await yk.forgeNotification('unknown-object');
    const forged = JSON.parse(hook.received[before]!.body);
    expect(await parse(forged)).toMatchObject({ ok: false, reason: expect.stringContaining('does not know') });
    const id = pid();
    const c = await create(id);
    await yk.forgeNotification('contradicting-status', (c as { ref: string }).ref);
    const contradicting = JSON.parse(hook.received[hook.received.length - 1]!.body);
    expect(contradicting.event).toBe('payment.succeeded');
    expect(await parse(contradicting)).toMatchObject({ ok: true, eventKey: `payment.pending:${(c as { ref: string }).ref}`, outcome: { status: 'action' } });
    expect(await parse({ type: 'notification', event: 'payment.succeeded' })).toMatchObject({ ok: false });
    expect(await parse('<xml/>')).toMatchObject({ ok: false });
  });

  it('with allowed_ips set, a notification from another source is ok:false before anything is fetched', async () => {
    await put('yk-ips', { kind: 'yookassa', mode: 'test', settings: settings({ allowed_ips: '185.71.76.0/27,2a02:5180::/32' }) });
    const c = (await t.app.services.connectors.get('yk-ips'))!;
    const { ref } = await paidPayment();
    const body = { type: 'notification', event: 'payment.succeeded', object: { id: ref } };
    const before = yk.requests.length;
    const from = (ip: string) => parse(body, ip, c);
    expect(await from('127.0.0.1')).toMatchObject({ ok: false, reason: expect.stringContaining('allowed_ips') });
    expect(yk.requests.length).toBe(before);
    expect(await from('::ffff:185.71.76.7')).toMatchObject({ ok: true, outcome: { status: 'paid' } });
    expect(await from('2a02:5180::1')).toMatchObject({ ok: true });
  });
});

describe('yookassa connector: routed by the payment service', () => {
  it('a merchant routed to it: a 5xx at YooKassa is a refusal and the payer may try again, never a fallback to the sandbox (the card was never collected here); otherwise the payment is created at YooKassa and stays PROCESS with the connector and YooKassa\'s id', async () => {
    const m = await createMerchant(t);
    const r = await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payment_card: ['yk-test', 'sandbox'] } } });
    expect(r.statusCode).toBe(200);
    const row = async (billId: string) => (await t.db.pool.query(`SELECT id, status::text, connector, provider_ref FROM payments WHERE bill_id = $1`, [billId])).rows[0];

    yk.misbehave({ op: 'payments.create', status5xx: 503, times: 4 }); // through the connector's 3 repeats
    const down = await createBill(t, m, { amount: '100.00' });
    const refused = await payRequest(t, down);
    expect(refused.json().status).toBe('FAIL');
    expect(await row(down)).toMatchObject({ status: 'FAIL', connector: 'yk-test' });

    const up = await createBill(t, m, { amount: '100.00' });
    await payRequest(t, up);
    const p = await row(up);
    expect(p).toMatchObject({ status: 'PROCESS', connector: 'yk-test', provider_ref: expect.any(String) });
    expect(yk.payments.get(p.provider_ref)).toMatchObject({ status: 'pending', metadata: { payment_id: p.id }, _method: 'bank_card', _capture: true });
  });
});

describe('yookassa connector: answers as YooKassa gives them (issue 29)', () => {
  const payoutReq = (payoutId: string, firstSentAt?: Date) => ({
    payoutId, accountType: 'CARD' as const, account: '5555555555554477', cardHolder: null, bankMemberId: null, amount: new Decimal('7'), currency: 'RUB', firstSentAt,
  });

  it('a refund answered 202 is repeated with the same Idempotence-Key after retry_after and made once', async () => {
    const { ref } = await paidPayment('10.00');
    yk.misbehave({ op: 'refunds.create', processing: { answers: 2, retryAfterMs: 40 } });
    const before = yk.requests.length;
    const started = Date.now();
    const r = await refund(pid(), ref, '4.00');
    expect(r).toMatchObject({ status: 'succeeded' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(80);
    expect(yk.requests.slice(before).filter((x) => x.path === '/v3/refunds').map((x) => x.status)).toEqual([202, 202, 200]);
    expect([...yk.refunds.values()].filter((x) => x.payment_id === ref)).toHaveLength(1);
  });

  it('429 waits what Retry-After says, then the same request is made once; still 429 after the repeats is unknown, never refused', async () => {
    yk.misbehave({ op: 'payouts.create', status429: { retryAfter: 1 } });
    const started = Date.now();
    const id = pid();
    expect((await call('create_payout', (ctx) => conn.createPayout(payoutReq(id), ctx))).status).toMatch(/pending|succeeded/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    yk.misbehave({ op: 'payouts.create', status429: {}, times: 4 });
    const again = pid();
    expect(await call('create_payout', (ctx) => conn.createPayout(payoutReq(again), ctx))).toMatchObject({ status: 'unknown', reason: expect.stringContaining('429') });
    expect([...yk.payouts.values()].filter((x) => x.metadata.payout_id === again)).toHaveLength(0);
  });

  it('a creation first sent longer ago than the Idempotence-Key lives (24 h) is not sent again: unknown with reason idempotence_key_expired', async () => {
    const { ref } = await paidPayment('10.00');
    const before = yk.requests.length;
    const old = new Date(Date.now() - 24 * 3_600_000);
    expect(await call('create_payout', (ctx) => conn.createPayout(payoutReq(pid(), old), ctx))).toEqual({ status: 'unknown', ref: null, reason: 'idempotence_key_expired' });
    expect(await call('refund', (ctx) => conn.refund({
      refundId: pid(), paymentId: 'p', paymentRef: ref, amount: new Decimal('1'), amountRub: null, currency: 'RUB', fromCard: null, firstSentAt: old,
    }, ctx))).toEqual({ status: 'unknown', ref: null, reason: 'idempotence_key_expired' });
    expect(await call('create_payment', (ctx) => conn.createPayment({ paymentId: pid(), method: 'card', amount: new Decimal('1'), firstSentAt: old }, ctx)))
      .toEqual({ status: 'unknown', ref: null, reason: 'idempotence_key_expired' });
    expect(yk.requests.length).toBe(before);
    // Within its life (first sent an hour ago) the repeat is sent.
    expect((await call('create_payout', (ctx) => conn.createPayout(payoutReq(pid(), new Date(Date.now() - 3_600_000)), ctx))).status).toMatch(/pending|succeeded/);
  });
});
