import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import type { Connector } from '../../src/domain/providers/connector.js';
import { TBankConnector, tbankToken } from '../../src/domain/providers/connectors/tbank/index.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { connectorCalls, formPost, newOpId } from './connector-calls.js';
import { freePort } from '../helpers/service-process.js';
import { createMerchant } from '../factories/merchant.js';
import { createBill, payRequest } from '../factories/payment.js';
import { startReceiver, waitFor, type Receiver } from '../outbox/receiver.js';
import { TBankEmulator } from '../emulators/tbank.js';

// The tbank connector against the T-Bank emulator (a real HTTP server on 127.0.0.1), built by the
// registry from the connectors table, every call through the timed call wrapper (8 s here, 1 s in the
// misbehaviour tests: `quick`). The
// service's public URL is the receiver's, so the NotificationURL each Init sends reaches it.

let t: TestApp;
let tb: TBankEmulator;
let hook: Receiver;
let conn: Connector;

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const { call, put, create: createAt, getPayment, refund, parse } = connectorCalls(() => t, () => conn);
const create = (paymentId: string, o: { method?: 'card' | 'sbp'; amount?: string } = {}) => createAt(paymentId, o.amount ?? '150.00', o.method);
/** The same calls with a 1 s timeout, for the tests of slow and unanswered calls. */
const quick = connectorCalls(() => t, () => conn, 1000);
const settings = (extra: Record<string, unknown> = {}) => ({ base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password, ...extra });

beforeAll(async () => {
  hook = await startReceiver();
  t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '8000', PUBLIC_BASE_URL: hook.url });
  tb = await TBankEmulator.start({ retryBaseMs: 10 });
  expect((await put('tb-test', { kind: 'tbank', mode: 'test', settings: settings() })).statusCode).toBe(201);
  conn = (await t.app.services.connectors.get('tb-test'))!;
});
afterAll(async () => { await tb.stop(); await hook.close(); await t.close(); });
afterEach(async () => { tb.clearMisbehaviour(); await tb.idle(); });

const form = formPost;
const pid = newOpId;

/** Notifications T-Bank posted for a PaymentId, as received at the NotificationURL. */
const notes = (ref: string) => hook.received.filter((r) => r.path === '/providers/tb-test/notifications')
  .map((r) => JSON.parse(r.body) as Record<string, unknown>).filter((n) => String(n.PaymentId) === ref);

/** The payer on T-Bank's form (PaymentURL): loads it, types the card; answers where T-Bank sent the payer. */
async function payOnForm(url: string, card: string) {
  await fetch(url);
  const r = await fetch(`${url}/pay`, form(`card=${card}`));
  expect(r.status).toBe(303);
  return r.headers.get('location');
}

async function paidPayment(amount = '150.00') {
  const id = pid();
  const c = await create(id, { amount });
  if (c.status !== 'action') throw new Error(`expected an action, got ${c.status}`);
  await payOnForm((c.action as { url: string }).url, '4300000000000777');
  return { id, ref: c.ref };
}

describe('tbank connector: Token, operator API and registry', () => {
  it('the Token is the documentation\'s: values of root scalars and Password sorted by key, SHA-256; nested objects left out', () => {
    expect(tbankToken({ TerminalKey: 'MerchantTerminalKey', Amount: 19200, OrderId: '00000', Description: 'Подарочная карта на 1000 рублей' }, '11111111111111'))
      .toBe('72dd466f8ace0a37a1f740ce5fb78101712bc0665d91a8108c7c8a0ccd426db2');
    expect(tbankToken({ TerminalKey: 'TestB', PaymentId: '20150', Amount: 1000, ExternalRequestId: 'ext-1' }, 'Dfsfh56dgKl'))
      .toBe('9ae3bebd6af425702ca9f87325c82a2bdd3105cf2e6b05209a4baa668945de70');
    const base = { TerminalKey: 'T', Amount: 100, OrderId: '1' };
    expect(tbankToken({ ...base, DATA: { Email: 'a@b.c' }, Receipt: { Items: [] }, Token: 'x' }, 'p')).toBe(tbankToken(base, 'p'));
  });

  it('PUT stores a tbank connector with the password masked; routing it for payments is accepted, for payouts refused (422)', async () => {
    const r = await put('tb-ops', { kind: 'tbank', mode: 'live', settings: settings({ allowed_ips: '91.194.226.0/23' }) });
    expect(r.statusCode).toBe(201);
    expect(r.json().settings).toEqual({ base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: '********', allowed_ips: '91.194.226.0/23' });
    expect(r.body).not.toContain(tb.password);
    const m = await createMerchant(t);
    const patch = (routing: Record<string, string[]>) => t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing } });
    const ok = await patch({ payment_card: ['tb-ops', 'sandbox'], payment_sbp: ['tb-ops'] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().routing).toMatchObject({ payment_card: ['tb-ops', 'sandbox'], payment_sbp: ['tb-ops'] });
    const payout = await patch({ payout_card: ['tb-ops'], payout_sbp: ['sandbox'] });
    expect(payout.statusCode).toBe(422);
    expect(Object.keys(payout.json().errors)).toEqual(['routing.payout_card']);
    const built = await t.app.services.connectors.get('tb-ops');
    expect(built).toBeInstanceOf(TBankConnector);
    expect(built!.capabilities).toEqual({ payment: { card: true, sbp: true }, refunds: true, partialRefunds: true, payout: { card: false, sbp: false }, hostsCardForm: true, twoStage: true, savedCards: true, declineReasonFollows: true });
    const none = await call('create_payout', (ctx) => built!.createPayout({
      payoutId: pid(), accountType: 'CARD', account: '4300000000000777', cardHolder: null, bankMemberId: null, amount: new Decimal('1'), currency: 'RUB',
    }, ctx), built!);
    expect(none).toMatchObject({ status: 'refused', code: 'tbank:no_payouts' });
  });
});

describe('tbank connector: payments', () => {
  it('Init sends kopecks, OrderId = our id, the NotificationURL and return URLs, signed; the payer pays on PaymentURL; GetState says paid', async () => {
    const id = pid();
    const c = await create(id, { amount: '150.50' });
    expect(c).toMatchObject({ status: 'action', action: { type: 'redirect', url: expect.stringMatching(new RegExp(`^${tb.baseUrl}/new/`)) } });
    if (c.status !== 'action') return;
    expect(tb.payments.get(c.ref)).toMatchObject({
      OrderId: id, Amount: 15050, PayType: 'O', Description: 'Заказ 7', NotificationURL: `${hook.url}/providers/tb-test/notifications`,
      SuccessURL: `http://pay.test/pay/bill1/return/${id}`, FailURL: `http://pay.test/pay/bill1/return/${id}`,
    });
    expect(await getPayment(id, c.ref)).toEqual({ status: 'pending', ref: c.ref });
    expect(await payOnForm((c.action as { url: string }).url, '4300000000000777')).toBe(`http://pay.test/pay/bill1/return/${id}`);
    const paid = await getPayment(id, c.ref);
    expect(paid).toMatchObject({ status: 'paid', ref: c.ref });
    expect(paid.status === 'paid' && paid.amountReceived.equals('150.50')).toBe(true);
  });

  it('3-D Secure: Confirm on the bank page pays, Fail declines (3d_secure_failed); a declined card carries its code', async () => {
    const a = pid();
    const ca = await create(a);
    if (ca.status !== 'action') throw new Error(ca.status);
    expect(await payOnForm((ca.action as { url: string }).url, '5411420000000002')).toBe(`${tb.baseUrl}/acs/${ca.ref}`);
    expect((await getPayment(a, ca.ref)).status).toBe('pending');
    await fetch(`${tb.baseUrl}/acs/${ca.ref}`, form('result=confirm'));
    expect((await getPayment(a, ca.ref)).status).toBe('paid');

    const b = pid();
    const cb = await create(b);
    if (cb.status !== 'action') throw new Error(cb.status);
    await payOnForm((cb.action as { url: string }).url, '4000002760003184');
    await fetch(`${tb.baseUrl}/acs/${cb.ref}`, form('result=fail'));
    await tb.idle();
    const failNote = notes(cb.ref).find((n) => n.Status === 'AUTH_FAIL')!;
    expect(await parse(failNote)).toMatchObject({ ok: true, outcome: { status: 'declined', code: '3d_secure_failed' } });
    expect(await getPayment(b, cb.ref)).toMatchObject({ status: 'declined', code: 'tbank:auth_fail' });

    const c = pid();
    const cc = await create(c);
    if (cc.status !== 'action') throw new Error(cc.status);
    await payOnForm((cc.action as { url: string }).url, '4000000000009995');
    await tb.idle();
    expect(await parse(notes(cc.ref).find((n) => n.Status === 'REJECTED'))).toMatchObject({ ok: true, outcome: { status: 'declined', code: 'insufficient_funds' } });
    expect(await getPayment(c, cc.ref)).toMatchObject({ status: 'declined', code: 'tbank:rejected' });
  });

  it('SBP: Init then GetQr (PAYLOAD) gives the payload for our page; the payer confirms in the bank app; paid', async () => {
    const id = pid();
    const c = await create(id, { method: 'sbp', amount: '300' });
    expect(c).toMatchObject({ status: 'action', action: { type: 'sbp_qr', payload: expect.stringMatching(new RegExp(`^${tb.baseUrl}/sbp/`)) } });
    if (c.status !== 'action' || c.action.type !== 'sbp_qr') return;
    expect(tb.payments.get(c.ref)).toMatchObject({ sbp: true, Status: 'FORM_SHOWED', Amount: 30000 });
    await fetch(c.action.payload, form('action=confirm'));
    const paid = await getPayment(id, c.ref);
    expect(paid.status === 'paid' && paid.amountReceived.equals('300')).toBe(true);
    // Under T-Bank's 10 RUB minimum for SBP, GetQr refuses: a refusal before money moved.
    expect(await create(pid(), { method: 'sbp', amount: '5' })).toMatchObject({ status: 'refused', code: 'tbank:3016' });
  });

  it('a two-stage Init answers the data it keeps (PayType T); handed back, AUTHORIZED reads as a hold; without it, or for a one-stage payment, AUTHORIZED is pending', async () => {
    const id = pid();
    const c = await call('create_payment', (ctx) => conn.createPayment({
      paymentId: id, method: 'card', amount: new Decimal('300.00'), returnUrl: `http://pay.test/pay/bill1/return/${id}`, capture: false,
    }, ctx));
    expect(c).toMatchObject({ status: 'action', data: { payType: 'T' } });
    if (c.status !== 'action' || c.action.type !== 'redirect') throw new Error(`expected a redirect, got ${c.status}`);
    await payOnForm(c.action.url, '4300000000000777');
    expect(tb.payments.get(c.ref)).toMatchObject({ Status: 'AUTHORIZED', PayType: 'T' });
    const heldRead = await call('get_payment', (ctx) => conn.getPayment({ paymentId: id, ref: c.ref, data: c.data }, ctx));
    expect(heldRead.status === 'authorized' && heldRead.amount.equals('300')).toBe(true);
    // GetState alone does not say the payment is two-stage: AUTHORIZED is a step the bank finishes itself.
    expect(await getPayment(id, c.ref)).toMatchObject({ status: 'pending' });
    const plain = await create(pid());
    expect(plain.status).toBe('action');
    expect(plain).not.toHaveProperty('data');
  });
});

describe('tbank connector: refunds', () => {
  it('Cancel refunds partly, then the rest; more than is left is failed with T-Bank\'s code; the payment moves PARTIAL_REFUNDED then REFUNDED', async () => {
    const { ref } = await paidPayment('150.00');
    // Each refund's ref is the payment and what its Cancel left (NewAmount): never shared by two refunds of it.
    expect(await refund(pid(), ref, '50.00')).toEqual({ status: 'succeeded', ref: `${ref}:10000` });
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 10000 });
    expect(await refund(pid(), ref, '100.00')).toEqual({ status: 'succeeded', ref: `${ref}:0` });
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'REFUNDED', Amount: 0 });
    expect(await refund(pid(), ref, '1.00')).toMatchObject({ status: 'failed', code: expect.stringMatching(/^tbank:/), ref: null });
    expect(await call('get_refund', (ctx) => conn.getRefund({ refundId: 'x', ref: `${ref}:10000` }, ctx))).toEqual({ status: 'succeeded', ref: `${ref}:10000` });
    // A refund in the bill's other currency is never sent as kopecks of it.
    const before = tb.requests.length;
    const usd = await call('refund', (ctx) => conn.refund({ refundId: pid(), paymentId: 'p', paymentRef: ref, amount: new Decimal('1'), amountRub: null, currency: 'USD', fromCard: null }, ctx));
    expect(usd).toMatchObject({ status: 'failed', code: 'tbank:currency_not_supported' });
    expect(tb.requests.length).toBe(before);
  });

  it('a refund of a USD bill is sent to Cancel as the kopecks of its RUB amount (what the payer paid)', async () => {
    const { ref } = await paidPayment('925.00');
    expect(await refund(pid(), ref, '5.00', { currency: 'USD', amountRub: '462.50' })).toMatchObject({ status: 'succeeded' });
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 46250 });
  });

  it('a Cancel applied then unanswered is unknown; repeated with the same ExternalRequestId it answers the same and refunds once', async () => {
    const { ref } = await paidPayment('150.00');
    const refundId = pid();
    tb.misbehave({ op: 'Cancel', timeoutAfterApply: 'hold', holdMs: 3000 });
    expect(await quick.refund(refundId, ref, '40.00')).toMatchObject({ status: 'unknown', reason: 'timeout after 1000 ms' });
    expect(tb.payments.get(ref)!.Amount).toBe(11000);
    expect(await refund(refundId, ref, '40.00')).toEqual({ status: 'succeeded', ref: `${ref}:11000` });
    expect(tb.payments.get(ref)!.Amount).toBe(11000);
    // A 5xx on Cancel is unknown too (it may have applied), never a failure.
    tb.misbehave({ op: 'Cancel', status5xx: 502 });
    expect((await refund(pid(), ref, '1.00')).status).toBe('unknown');
  });
});

describe('tbank connector: misbehaviour', () => {
  it('a slow Init is unknown by the wrapper\'s timeout; CheckOrder by our id finds the payment it made', async () => {
    tb.misbehave({ op: 'Init', delayMs: 2000 });
    const id = pid();
    expect(await quick.create(id, '150.00')).toMatchObject({ status: 'unknown', reason: 'timeout after 1000 ms' });
    await waitFor(() => [...tb.payments.values()].some((p) => p.OrderId === id));
    const found = await getPayment(id, null);
    const ref = [...tb.payments.values()].find((p) => p.OrderId === id)!.PaymentId;
    expect(found).toEqual({ status: 'pending', ref });
    // An order T-Bank never saw: no payment, and no payer ever had a form to pay on.
    expect(await getPayment(pid(), null)).toMatchObject({ status: 'declined', code: 'tbank:not_found', ref: null });
  });

  it('an Init applied then cut is unknown; CheckOrder finds it, and once paid it reads paid', async () => {
    tb.misbehave({ op: 'Init', timeoutAfterApply: 'drop' });
    const id = pid();
    expect((await create(id)).status).toBe('unknown');
    const p = [...tb.payments.values()].find((x) => x.OrderId === id)!;
    tb.payerAction(p.PaymentId, 'pay', { card: '4300000000000777' });
    const found = await getPayment(id, null);
    expect(found).toMatchObject({ status: 'paid', ref: p.PaymentId });
    expect(found.status === 'paid' && found.amountReceived.equals('150')).toBe(true);
  });

  it('a 5xx, a wrong password (Token refused, 204) and a refused connection on Init are refusals with the code', async () => {
    tb.misbehave({ op: 'Init', status5xx: 503 });
    expect(await create(pid())).toMatchObject({ status: 'refused', code: 'tbank:http_503' });
    await put('tb-wrong', { kind: 'tbank', mode: 'test', settings: settings({ password: 'not-the-password' }) });
    const wrong = (await t.app.services.connectors.get('tb-wrong'))!;
    const r204 = await call('create_payment', (ctx) => wrong.createPayment({ paymentId: pid(), method: 'card', amount: new Decimal('10') }, ctx), wrong);
    expect(r204).toMatchObject({ status: 'refused', code: 'tbank:204' });
    await put('tb-down', { kind: 'tbank', mode: 'test', settings: settings({ base_url: `http://127.0.0.1:${await freePort()}/v2` }) });
    const down = (await t.app.services.connectors.get('tb-down'))!;
    const r = await call('create_payment', (ctx) => down.createPayment({ paymentId: pid(), method: 'card', amount: new Decimal('10') }, ctx), down);
    expect(r).toMatchObject({ status: 'refused', code: 'connection_refused' });
    // An amount with fractions of a kopeck never leaves.
    expect(await create(pid(), { amount: '10.005' })).toMatchObject({ status: 'refused', code: 'tbank:invalid_amount' });
  });
});

describe('tbank connector: notifications', () => {
  it('a notification with a valid Token is parsed: AUTHORIZED pending, CONFIRMED paid with our id; duplicates share the eventKey; reply 200 OK', async () => {
    tb.misbehave({ notifications: 'duplicate' });
    const { id, ref } = await paidPayment('150.00');
    await tb.idle();
    const got = notes(ref);
    expect(got.map((n) => n.Status)).toEqual(['AUTHORIZED', 'AUTHORIZED', 'CONFIRMED', 'CONFIRMED']);
    const parsed = await Promise.all(got.map((n) => parse(n)));
    expect(parsed.map((p) => (p.ok ? p.eventKey : p.reason))).toEqual([`${ref}:AUTHORIZED`, `${ref}:AUTHORIZED`, `${ref}:CONFIRMED`, `${ref}:CONFIRMED`]);
    expect(parsed[0]).toMatchObject({ ok: true, object: 'payment', ourId: id, outcome: { status: 'pending', ref }, reply: { status: 200, body: 'OK' } });
    expect(parsed[2]).toMatchObject({ ok: true, object: 'payment', ourId: id, outcome: { status: 'paid', ref }, reply: { status: 200, body: 'OK' } });
    const p2 = parsed[2]!;
    expect(p2.ok && p2.object !== 'receipt' && p2.outcome.status === 'paid' && p2.outcome.amountReceived.equals('150')).toBe(true);
  });

  it('out of order: CONFIRMED arrives before AUTHORIZED, which parses as a stale pending under its own key', async () => {
    tb.misbehave({ notifications: 'out-of-order' });
    const { ref } = await paidPayment('150.00');
    tb.flushNotifications();
    await tb.idle();
    const got = notes(ref);
    expect(got.map((n) => n.Status)).toEqual(['CONFIRMED', 'AUTHORIZED']);
    const [first, second] = [await parse(got[0]), await parse(got[1])];
    expect(first).toMatchObject({ ok: true, eventKey: `${ref}:CONFIRMED`, outcome: { status: 'paid' } });
    expect(second).toMatchObject({ ok: true, eventKey: `${ref}:AUTHORIZED`, outcome: { status: 'pending' } });
  });

  it('refund notifications are matched by PaymentId and Status only: what is left is read from GetState (a refund notification\'s Amount is undocumented and unused); each names the refund whose Cancel left that much, or ours by ExternalRequestId', async () => {
    const { ref } = await paidPayment('150.00');
    const r1 = await refund(pid(), ref, '10.00');
    await tb.idle();
    const first = notes(ref).filter((n) => n.Status === 'PARTIAL_REFUNDED');
    expect(first).toHaveLength(1);
    const p1 = await parse(first[0]!);
    expect(p1).toMatchObject({ ok: true, object: 'refund', ourId: null, outcome: { status: 'succeeded' }, eventKey: `${ref}:PARTIAL_REFUNDED:14000`, ref: (r1 as { ref: string }).ref });
    // The same notification signed with any other Amount names the same refund: the Amount is not read.
    const { Token: _t, ...unsigned } = first[0]!;
    expect(await parse(tb.sign({ ...unsigned, Amount: 1000 }))).toMatchObject({ ok: true, ref: (r1 as { ref: string }).ref, eventKey: `${ref}:PARTIAL_REFUNDED:14000` });
    const r2 = await refund(pid(), ref, '20.00');
    await tb.idle();
    const second = notes(ref).filter((n) => n.Status === 'PARTIAL_REFUNDED')[1]!;
    expect(await parse(second)).toMatchObject({ ok: true, object: 'refund', outcome: { status: 'succeeded' }, eventKey: `${ref}:PARTIAL_REFUNDED:12000`, ref: (r2 as { ref: string }).ref });
    expect(await parse(tb.sign({ ...unsigned, ExternalRequestId: 'rf-ours-1' }))).toMatchObject({ ok: true, object: 'refund', ourId: 'rf-ours-1' });
  });

  it('forged: a wrong Token, a tampered Amount, another terminal or no Token is ok:false', async () => {
    const id = pid();
    const c = await create(id);
    const ref = (c as { ref: string }).ref;
    const before = hook.received.length;
    await tb.forgeNotification(ref, 'wrong-token');
    await tb.forgeNotification(ref, 'tampered');
    const [wrongToken, tampered] = hook.received.slice(before).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(await parse(wrongToken)).toEqual({ ok: false, reason: 'wrong Token' });
    expect(await parse(tampered)).toEqual({ ok: false, reason: 'wrong Token' });
    const other = tb.sign({ TerminalKey: 'OtherTerminal', OrderId: id, Success: true, Status: 'CONFIRMED', PaymentId: Number(ref), ErrorCode: '0', Amount: 15000 });
    expect(await parse(other)).toEqual({ ok: false, reason: 'another terminal' });
    const { Token: _t, ...unsigned } = tb.sign({ TerminalKey: tb.terminalKey, Status: 'CONFIRMED', PaymentId: Number(ref), Amount: 15000 });
    expect(await parse(unsigned)).toEqual({ ok: false, reason: 'wrong Token' });
    expect(await parse(null)).toMatchObject({ ok: false });
  });

  it('with allowed_ips set, a notification from another source is ok:false', async () => {
    await put('tb-ips', { kind: 'tbank', mode: 'test', settings: settings({ allowed_ips: '91.194.226.0/23' }) });
    const c = (await t.app.services.connectors.get('tb-ips'))!;
    const body = tb.sign({ TerminalKey: tb.terminalKey, OrderId: 'o', Success: true, Status: 'CONFIRMED', PaymentId: 1, ErrorCode: '0', Amount: 100 });
    expect(await parse(body, '127.0.0.1', c)).toMatchObject({ ok: false, reason: expect.stringContaining('allowed_ips') });
    expect(await parse(body, '91.194.227.4', c)).toMatchObject({ ok: true, eventKey: '1:CONFIRMED' });
  });
});

describe('tbank connector: routed by the payment service', () => {
  it('a merchant routed to it: Init is made with OrderId = the payment\'s id and this connector\'s NotificationURL; the payment stays PROCESS with the connector and the PaymentId', async () => {
    const m = await createMerchant(t);
    const r = await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing: { payment_card: ['tb-test'] } } });
    expect(r.statusCode).toBe(200);
    const billId = await createBill(t, m, { amount: '100.00' });
    await payRequest(t, billId);
    const p = (await t.db.pool.query(`SELECT id, status::text, connector, provider_ref FROM payments WHERE bill_id = $1`, [billId])).rows[0];
    expect(p).toMatchObject({ status: 'PROCESS', connector: 'tb-test', provider_ref: expect.stringMatching(/^\d+$/) });
    expect(tb.payments.get(p.provider_ref)).toMatchObject({ OrderId: p.id, Status: 'NEW', NotificationURL: `${hook.url}/providers/tb-test/notifications` });
  });
});

describe('tbank connector: answers as T-Bank gives them (issue 29)', () => {
  it('CheckOrder 335 (order not found) is an order T-Bank never saw: declined tbank:not_found, nothing made', async () => {
    const before = tb.payments.size;
    expect(await getPayment(pid(), null)).toMatchObject({ status: 'declined', code: 'tbank:not_found', ref: null });
    const asked = tb.requests.filter((x) => x.op === 'CheckOrder');
    expect(asked[asked.length - 1]).toMatchObject({ errorCode: '335' });
    expect(tb.payments.size).toBe(before);
  });

  it('an SBP refund passes through ASYNC_REFUNDING: pending until T-Bank settles it, then succeeded (and the notification of the settled status is read as succeeded)', async () => {
    const slow = await TBankEmulator.start({ retryBaseMs: 10, sbpRefundSettleMs: null, password: 'slow-password', terminalKey: 'SLOW1234DEMO' });
    try {
      expect((await put('tb-slow', { kind: 'tbank', mode: 'test', settings: { base_url: slow.apiUrl, terminal_key: slow.terminalKey, password: slow.password } })).statusCode).toBe(201);
      const c = (await t.app.services.connectors.get('tb-slow'))!;
      const made = await call('create_payment', (ctx) => c.createPayment({ paymentId: pid(), method: 'sbp', amount: new Decimal('100.00') }, ctx), c);
      if (made.status !== 'action') throw new Error(made.status);
      slow.payerAction(made.ref, 'sbp-confirm');
      const r = await call('refund', (ctx) => c.refund({ refundId: pid(), paymentId: 'p', paymentRef: made.ref, amount: new Decimal('30.00'), amountRub: null, currency: 'RUB', fromCard: null }, ctx), c);
      expect(r).toEqual({ status: 'pending', ref: `${made.ref}:7000` });
      expect(slow.payments.get(made.ref)!.Status).toBe('ASYNC_REFUNDING');
      expect(await call('get_refund', (ctx) => c.getRefund({ refundId: 'x', ref: `${made.ref}:7000` }, ctx), c)).toEqual({ status: 'pending', ref: `${made.ref}:7000` });
      slow.settleSbpRefunds(made.ref);
      expect(await call('get_refund', (ctx) => c.getRefund({ refundId: 'x', ref: `${made.ref}:7000` }, ctx), c)).toEqual({ status: 'succeeded', ref: `${made.ref}:7000` });
    } finally { await slow.stop(); }
  });

  it('a repeat decided from GetState\'s status, never its Amount: ASYNC_REFUNDING is not decided (nothing sent); CONFIRMED sends the Cancel; PARTIAL_REFUNDED with no other refund is ours; with others an operator decides', async () => {
    const { ref } = await paidPayment('200.00');
    const repeat = (amount: string, siblings = { succeededRub: new Decimal(0), openRub: new Decimal(0), paidRub: new Decimal('200.00') }) => call('refund', (ctx) => conn.refund({
      refundId: pid(), paymentId: 'p', paymentRef: ref, amount: new Decimal(amount), amountRub: null, currency: 'RUB', fromCard: null, firstSentAt: new Date(), siblings,
    }, ctx));
    const cancels = () => tb.payments.get(ref)!.history.filter((s) => s === 'REFUNDING').length;
    // Nothing refunded yet (CONFIRMED): the repeat sends its Cancel.
    expect(await repeat('50.00')).toEqual({ status: 'succeeded', ref: `${ref}:15000` });
    expect(cancels()).toBe(1);
    // PARTIAL_REFUNDED and no other refund of the payment here: the refund it shows is ours; no second Cancel.
    expect(await repeat('50.00')).toEqual({ status: 'succeeded', ref });
    expect(cancels()).toBe(1);
    // PARTIAL_REFUNDED with another refund known: the status cannot say whose it is; an operator decides, nothing sent.
    const other = await repeat('30.00', { succeededRub: new Decimal('50.00'), openRub: new Decimal(0), paidRub: new Decimal('200.00') });
    expect(other).toMatchObject({ status: 'unknown', ref: null, reason: expect.stringMatching(/^needs_operator: tbank: the payment is PARTIAL_REFUNDED.*GetState answered \{/) });
    expect(cancels()).toBe(1);
    // A refund running: not decided, and not the operator's yet.
    tb.payments.get(ref)!.Status = 'ASYNC_REFUNDING';
    expect(await repeat('10.00')).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/^tbank: refund repeat not sent: .*ASYNC_REFUNDING/) });
    tb.payments.get(ref)!.Status = 'PARTIAL_REFUNDED';
    expect(cancels()).toBe(1);
  });

  it('Cancel errors of the specification\'s "try again later" and technical codes are unknown (asked again), never a failure; a config error (204) is a refusal', async () => {
    const { ref } = await paidPayment('150.00');
    for (const code of ['3', '55', '99', '120', '123', '125', '401', '402', '903', '999', '1030', '1034', '1089', '3040', '7999', '9001', '9999']) {
      tb.misbehave({ op: 'Cancel', errorCode: code });
      expect(await refund(pid(), ref, '10.00')).toMatchObject({ status: 'unknown', ref: null, reason: expect.stringContaining(`Cancel answered ${code}`) });
    }
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'CONFIRMED', Amount: 15000 });
  });

  it('a decline with ErrorCode 116 or 103 is insufficient_funds (a final decline with that reason)', async () => {
    const { ref, id } = await paidPayment('10.00');
    for (const code of ['116', '103']) {
      const body = tb.sign({ TerminalKey: tb.terminalKey, OrderId: id, Success: false, Status: 'REJECTED', PaymentId: Number(ref), ErrorCode: code, Amount: 1000 });
      expect(await parse(body)).toMatchObject({ ok: true, object: 'payment', outcome: { status: 'declined', code: 'insufficient_funds' } });
    }
  });
});
