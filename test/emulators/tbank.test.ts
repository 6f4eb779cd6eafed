import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, waitFor, type Receiver } from '../outbox/receiver.js';
import { TBankEmulator, tbankToken } from './tbank.js';

// The emulator talked to over real HTTP as T-Bank's reference shows: POST JSON to
// https://securepay.tinkoff.ru/v2/<Method> with TerminalKey and Token in the body.

let emu: TBankEmulator;
let hook: Receiver;

beforeAll(async () => {
  hook = await startReceiver();
  emu = await TBankEmulator.start({ notifyUrl: `${hook.url}/tbank`, retryBaseMs: 10 });
});
afterAll(async () => { await emu.stop(); await hook.close(); });
afterEach(async () => {
  emu.clearMisbehaviour();
  hook.setMode(() => 'ok');
  await emu.idle();
});

type Body = Record<string, any>;

async function api(method: string, body: Record<string, unknown>, o: { sign?: boolean; timeoutMs?: number } = {}) {
  const full = o.sign === false ? { TerminalKey: emu.terminalKey, ...body } : emu.sign({ TerminalKey: emu.terminalKey, ...body });
  const res = await fetch(`${emu.apiUrl}/${method}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(full),
    signal: o.timeoutMs ? AbortSignal.timeout(o.timeoutMs) : undefined,
  });
  const text = await res.text();
  return { status: res.status, text, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as Body };
}

const init = (extra: Record<string, unknown> = {}) => api('Init', {
  Amount: 15000, OrderId: `order-${randomUUID().slice(0, 8)}`, Description: 'Заказ',
  SuccessURL: 'https://shop.example/ok', FailURL: 'https://shop.example/fail', ...extra,
});

const state = async (id: string) => (await api('GetState', { PaymentId: id })).body;

function notificationsFor(id: string) {
  return hook.received.map((r) => JSON.parse(r.body) as Body).filter((n) => String(n.PaymentId) === id);
}

const form = (body: string) => ({ method: 'POST', redirect: 'manual' as const, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });

describe('T-Bank emulator: Token', () => {
  it('matches the documentation\'s worked example and the public SDK vectors; nested objects and Token are left out', () => {
    // developer.tbank.ru token page example.
    expect(tbankToken({ TerminalKey: 'MerchantTerminalKey', Amount: 19200, OrderId: '00000', Description: 'Подарочная карта на 1000 рублей' }, '11111111111111'))
      .toBe('72dd466f8ace0a37a1f740ce5fb78101712bc0665d91a8108c7c8a0ccd426db2');
    // ai-iskuzhin/TBankAcquiringNet TBankPaymentsClientTests.cs.
    expect(tbankToken({ TerminalKey: 'TerminalKey', Amount: 15000, OrderId: 'sp123', Description: 'Multisplit payment' }, 'Password'))
      .toBe('d4026f3432c8771934ca77afc4f028f7fec42350e777b66cd0e7398e6d6c7167');
    expect(tbankToken({ TerminalKey: 'TestB', PaymentId: '20150' }, 'Dfsfh56dgKl'))
      .toBe('03acc0a77d6e870f402a1038c1ca5d8b4a985fe76f08016a869f10f2382bd7a9');
    expect(tbankToken({ TerminalKey: 'TestB', PaymentId: '20150', Amount: 1000, ExternalRequestId: 'ext-1' }, 'Dfsfh56dgKl'))
      .toBe('9ae3bebd6af425702ca9f87325c82a2bdd3105cf2e6b05209a4baa668945de70');
    const base = { TerminalKey: 'T', Amount: 100, OrderId: '1' };
    expect(tbankToken({ ...base, DATA: { Email: 'a@b.c' }, Receipt: { Items: [] }, Token: 'x' }, 'p')).toBe(tbankToken(base, 'p'));
  });
});

describe('T-Bank emulator: card payments on the hosted form', () => {
  it('Init answers PaymentURL; the form is shown, the card pays, the payer goes to SuccessURL; AUTHORIZED and CONFIRMED are notified with valid Tokens', async () => {
    const r = await init({ DATA: { Email: 'payer@example.com' } });
    expect(r.body).toMatchObject({ Success: true, ErrorCode: '0', Status: 'NEW', Amount: 15000, TerminalKey: emu.terminalKey });
    const id = r.body.PaymentId as string;
    expect(typeof id).toBe('string');
    const page = await fetch(r.body.PaymentURL);
    expect(await page.text()).toContain('id="card"');
    expect((await state(id)).Status).toBe('FORM_SHOWED');
    const paid = await fetch(`${r.body.PaymentURL}/pay`, form('card=4300000000000777'));
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe('https://shop.example/ok');
    expect(await state(id)).toMatchObject({ Success: true, ErrorCode: '0', Status: 'CONFIRMED', Amount: 15000, OrderId: r.body.OrderId });
    await emu.idle();
    const notes = notificationsFor(id);
    expect(notes.map((n) => n.Status)).toEqual(['AUTHORIZED', 'CONFIRMED']);
    for (const n of notes) {
      expect(n.Token).toBe(tbankToken(n, emu.password));
      expect(n).toMatchObject({ TerminalKey: emu.terminalKey, Success: true, ErrorCode: '0', Amount: 15000, Pan: '430000******0777', Data: { Email: 'payer@example.com' } });
      expect(JSON.stringify(n)).not.toContain('4300000000000777');
    }
  });

  it('a 3-D Secure card waits in 3DS_CHECKING on the bank page: Confirm pays, Fail ends in AUTH_FAIL (101) and FailURL', async () => {
    const a = await init();
    const res = await fetch(`${a.body.PaymentURL}/pay`, form('card=5411420000000002'));
    expect(res.headers.get('location')).toBe(`${emu.baseUrl}/acs/${a.body.PaymentId}`);
    expect((await state(a.body.PaymentId)).Status).toBe('3DS_CHECKING');
    const ok = await fetch(`${emu.baseUrl}/acs/${a.body.PaymentId}`, form('result=confirm'));
    expect(ok.headers.get('location')).toBe('https://shop.example/ok');
    expect((await state(a.body.PaymentId)).Status).toBe('CONFIRMED');

    const b = await init();
    emu.payerAction(b.body.PaymentId, 'pay', { card: '4000002760003184' });
    const failed = await fetch(`${emu.baseUrl}/acs/${b.body.PaymentId}`, form('result=fail'));
    expect(failed.headers.get('location')).toBe('https://shop.example/fail');
    expect((await state(b.body.PaymentId)).Status).toBe('AUTH_FAIL');
    await emu.idle();
    expect(notificationsFor(b.body.PaymentId).map((n) => [n.Status, n.Success, n.ErrorCode])).toEqual([['AUTH_FAIL', false, '101']]);
  });

  it('a declined card is REJECTED with its ErrorCode, notified with Success false, and sent to FailURL', async () => {
    const a = await init();
    await fetch(a.body.PaymentURL);
    const res = await fetch(`${a.body.PaymentURL}/pay`, form('card=4000000000009995'));
    expect(res.headers.get('location')).toBe('https://shop.example/fail');
    expect((await state(a.body.PaymentId)).Status).toBe('REJECTED');
    await emu.idle();
    expect(notificationsFor(a.body.PaymentId).map((n) => [n.Status, n.Success, n.ErrorCode])).toEqual([['REJECTED', false, '1051']]);
  });

  it('a payment past RedirectDueDate, or abandoned, is DEADLINE_EXPIRED; a RedirectDueDate outside 1 minute .. 90 days or not YYYY-MM-DDTHH24:MI:SS+GMT is refused', async () => {
    const at = (ms: number) => new Date(Math.floor((Date.now() + ms) / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    expect((await init({ RedirectDueDate: at(-1000) })).body).toMatchObject({ Success: false, ErrorCode: '9999' });
    expect((await init({ RedirectDueDate: at(91 * 86_400_000) })).body).toMatchObject({ Success: false, ErrorCode: '9999' });
    expect((await init({ RedirectDueDate: new Date(Date.now() + 3_600_000).toISOString() })).body).toMatchObject({ Success: false, ErrorCode: '9999' });
    const a = await init({ RedirectDueDate: at(120_000) });
    expect((await state(a.body.PaymentId)).Status).toBe('NEW');
    emu.passDueDate(a.body.PaymentId);
    expect((await state(a.body.PaymentId)).Status).toBe('DEADLINE_EXPIRED');
    const b = await init();
    emu.payerAction(b.body.PaymentId, 'expire');
    expect((await state(b.body.PaymentId)).Status).toBe('DEADLINE_EXPIRED');
    expect(() => emu.payerAction(b.body.PaymentId, 'pay')).toThrow();
  });
});

describe('T-Bank emulator: two stages, Confirm and Cancel', () => {
  it('PayType T stops at AUTHORIZED; Confirm takes a smaller amount; Cancel refunds partly then fully, never more than is left', async () => {
    const a = await init({ PayType: 'T' });
    emu.payerAction(a.body.PaymentId, 'pay');
    expect((await state(a.body.PaymentId)).Status).toBe('AUTHORIZED');
    const c = await api('Confirm', { PaymentId: a.body.PaymentId, Amount: 10000 });
    expect(c.body).toMatchObject({ Success: true, Status: 'CONFIRMED', Amount: 10000 });
    const p1 = await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 4000 });
    expect(p1.body).toMatchObject({ Success: true, ErrorCode: '0', Status: 'PARTIAL_REFUNDED', OriginalAmount: 10000, NewAmount: 6000 });
    const over = await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 6001 });
    expect(over.body.Success).toBe(false);
    const p2 = await api('Cancel', { PaymentId: a.body.PaymentId });
    expect(p2.body).toMatchObject({ Status: 'REFUNDED', OriginalAmount: 6000, NewAmount: 0 });
    const again = await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 1 });
    expect(again.body).toMatchObject({ Success: false, ErrorCode: '8' });
    await emu.idle();
    expect(notificationsFor(a.body.PaymentId).map((n) => n.Status)).toEqual(['AUTHORIZED', 'CONFIRMED', 'PARTIAL_REFUNDED', 'REFUNDED']);
  });

  it('Cancel of an authorised payment reverses it; of a new one cancels it; Confirm of a new one is refused (8)', async () => {
    const a = await init({ PayType: 'T' });
    expect((await api('Confirm', { PaymentId: a.body.PaymentId })).body).toMatchObject({ Success: false, ErrorCode: '8' });
    emu.payerAction(a.body.PaymentId, 'pay');
    expect((await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 5000 })).body).toMatchObject({ Status: 'PARTIAL_REVERSED', NewAmount: 10000 });
    expect((await api('Cancel', { PaymentId: a.body.PaymentId })).body).toMatchObject({ Status: 'REVERSED', NewAmount: 0 });
    const b = await init();
    expect((await api('Cancel', { PaymentId: b.body.PaymentId })).body).toMatchObject({ Success: true, Status: 'CANCELED' });
  });

  it('Cancel with the same ExternalRequestId is applied once and answers the same', async () => {
    const a = await init();
    emu.payerAction(a.body.PaymentId, 'pay');
    const first = await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 1000, ExternalRequestId: 'refund-1' });
    const second = await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 1000, ExternalRequestId: 'refund-1' });
    expect(second.body).toEqual(first.body);
    expect((await state(a.body.PaymentId)).Amount).toBe(14000);
    expect((await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 2000, ExternalRequestId: 'refund-1' })).body.Success).toBe(false);
  });

  it('CheckOrder lists every payment of an OrderId (Init does not deduplicate)', async () => {
    const orderId = `order-${randomUUID().slice(0, 8)}`;
    const a = await init({ OrderId: orderId });
    const b = await init({ OrderId: orderId });
    emu.payerAction(b.body.PaymentId, 'pay');
    const r = await api('CheckOrder', { OrderId: orderId });
    expect(r.body).toMatchObject({ Success: true, ErrorCode: '0', OrderId: orderId });
    expect(r.body.Payments.map((p: Body) => [p.PaymentId, p.Status, p.ErrorCode])).toEqual([[a.body.PaymentId, 'NEW', 0], [b.body.PaymentId, 'CONFIRMED', 0]]);
  });
});

describe('T-Bank emulator: SBP', () => {
  it('GetQr answers a payload or an SVG; SbpPayTest makes the payer confirm: CONFIRMED with no AUTHORIZED step', async () => {
    const a = await init({ Amount: 5000 });
    const payload = await api('GetQr', { PaymentId: a.body.PaymentId, DataType: 'PAYLOAD' });
    expect(payload.body).toMatchObject({ Success: true, ErrorCode: '0', PaymentId: Number(a.body.PaymentId), Data: `${emu.baseUrl}/sbp/${a.body.PaymentId}` });
    const image = await api('GetQr', { PaymentId: a.body.PaymentId, DataType: 'IMAGE' });
    expect(image.body.Data).toMatch(/^<svg/);
    expect((await state(a.body.PaymentId)).Status).toBe('FORM_SHOWED');
    expect((await api('SbpPayTest', { PaymentId: a.body.PaymentId })).body).toMatchObject({ Success: true, ErrorCode: '0' });
    expect((await state(a.body.PaymentId)).Status).toBe('CONFIRMED');
    await emu.idle();
    expect(notificationsFor(a.body.PaymentId).map((n) => n.Status)).toEqual(['CONFIRMED']);
    // [12]: an SBP refund passes through ASYNC_REFUNDING, then settles (notified once final).
    expect((await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 1000 })).body).toMatchObject({ Status: 'ASYNC_REFUNDING', NewAmount: 4000 });
    await emu.idle();
    await waitFor(async () => (await state(a.body.PaymentId)).Status === 'PARTIAL_REFUNDED');
    await emu.idle();
    expect(notificationsFor(a.body.PaymentId).map((n) => n.Status)).toEqual(['CONFIRMED', 'PARTIAL_REFUNDED']);
  });

  it('SbpPayTest emulates a rejection and an expiry, not both; the QR link opens the bank page where the payer pays', async () => {
    const a = await init({ Amount: 5000 });
    expect((await api('SbpPayTest', { PaymentId: a.body.PaymentId })).body.ErrorCode).toBe('8');
    await api('GetQr', { PaymentId: a.body.PaymentId });
    expect((await api('SbpPayTest', { PaymentId: a.body.PaymentId, IsRejected: true, IsDeadlineExpired: true })).body.Success).toBe(false);
    await api('SbpPayTest', { PaymentId: a.body.PaymentId, IsRejected: true });
    expect((await state(a.body.PaymentId)).Status).toBe('REJECTED');
    const b = await init({ Amount: 5000 });
    await api('GetQr', { PaymentId: b.body.PaymentId });
    await api('SbpPayTest', { PaymentId: b.body.PaymentId, IsDeadlineExpired: true });
    expect((await state(b.body.PaymentId)).Status).toBe('DEADLINE_EXPIRED');
    const c = await init({ Amount: 5000 });
    const qr = await api('GetQr', { PaymentId: c.body.PaymentId });
    expect(await (await fetch(qr.body.Data)).text()).toContain('id="confirm"');
    const paid = await fetch(qr.body.Data, form('action=confirm'));
    expect(paid.headers.get('location')).toBe('https://shop.example/ok');
    expect((await state(c.body.PaymentId)).Status).toBe('CONFIRMED');
  });

  it('refuses SBP for a two-stage payment and below 10 RUB', async () => {
    const a = await init({ PayType: 'T' });
    expect((await api('GetQr', { PaymentId: a.body.PaymentId })).body.Success).toBe(false);
    const b = await init({ Amount: 999 });
    expect((await api('GetQr', { PaymentId: b.body.PaymentId })).body).toMatchObject({ Success: false, ErrorCode: '3016' });
  });
});

describe('T-Bank emulator: what the real API refuses', () => {
  it('a wrong or missing Token is ErrorCode 204, an unknown terminal 331, a bad Amount or an unknown payment a failure; nothing is created', async () => {
    const before = emu.payments.size;
    const forged = await api('Init', { Amount: 100, OrderId: 'x', Token: tbankToken({ TerminalKey: emu.terminalKey, Amount: 100, OrderId: 'x' }, 'wrong') }, { sign: false });
    expect(forged.status).toBe(200);
    expect(forged.body).toMatchObject({ Success: false, ErrorCode: '204', Details: 'Неверный токен. Проверьте пару TerminalKey/SecretKey.' });
    expect((await api('Init', { Amount: 100, OrderId: 'x' }, { sign: false })).body.ErrorCode).toBe('204');
    const signedThenChanged = emu.sign({ TerminalKey: emu.terminalKey, Amount: 100, OrderId: 'x' });
    signedThenChanged.Amount = 1;
    const tampered = await fetch(`${emu.apiUrl}/Init`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signedThenChanged) });
    expect(((await tampered.json()) as Body).ErrorCode).toBe('204');
    const otherTerminal = await fetch(`${emu.apiUrl}/Init`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ TerminalKey: 'Other', Amount: 100, OrderId: 'x', Token: 'x' }) });
    expect(((await otherTerminal.json()) as Body).ErrorCode).toBe('331');
    for (const Amount of ['100', 100.5, 0, -5]) {
      const r = await init({ Amount });
      expect(r.body.Success, JSON.stringify(Amount)).toBe(false);
    }
    expect((await init({ OrderId: '' })).body.Success).toBe(false);
    expect((await init({ PayType: 'X' })).body.Success).toBe(false);
    const notJson = await fetch(`${emu.apiUrl}/Init`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' });
    expect(((await notJson.json()) as Body).Success).toBe(false);
    expect(emu.payments.size).toBe(before);
    const unknown = await api('GetState', { PaymentId: '1' });
    expect(unknown.body).toMatchObject({ Success: false });
    expect(unknown.body.ErrorCode).not.toBe('0');
  });
});

describe('T-Bank emulator: misbehaviour switches', () => {
  it('slow: the answer comes after the delay', async () => {
    emu.misbehave({ op: 'GetState', delayMs: 300 });
    const a = await init();
    const t0 = Date.now();
    expect((await state(a.body.PaymentId)).Status).toBe('NEW');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it('a switch for the whole instance (times: Infinity) holds until cleared', async () => {
    const a = await init();
    emu.misbehave({ op: 'GetState', status5xx: 503, times: Infinity });
    for (let i = 0; i < 3; i += 1) expect((await api('GetState', { PaymentId: a.body.PaymentId })).status).toBe(503);
    expect((await api('GetQr', { PaymentId: a.body.PaymentId })).status).toBe(200);
    emu.clearMisbehaviour();
    expect((await api('GetState', { PaymentId: a.body.PaymentId })).status).toBe(200);
  });

  it('5xx before applying: no payment is created', async () => {
    const before = emu.payments.size;
    emu.misbehave({ op: 'Init', status5xx: 502 });
    const r = await init();
    expect(r.status).toBe(502);
    expect(emu.payments.size).toBe(before);
  });

  it('timeout after applying (held or dropped): Init created the payment, CheckOrder by OrderId finds it', async () => {
    for (const mode of ['hold', 'drop'] as const) {
      emu.misbehave({ op: 'Init', timeoutAfterApply: mode });
      const orderId = `order-${randomUUID().slice(0, 8)}`;
      await expect(api('Init', { Amount: 15000, OrderId: orderId }, { timeoutMs: 400 })).rejects.toThrow();
      const found = await api('CheckOrder', { OrderId: orderId });
      expect(found.body.Payments).toHaveLength(1);
      expect(found.body.Payments[0].Status).toBe('NEW');
    }
  });

  it('a Cancel that timed out after applying is replayed, not applied twice, with its ExternalRequestId', async () => {
    const a = await init();
    emu.payerAction(a.body.PaymentId, 'pay');
    emu.misbehave({ op: 'Cancel', timeoutAfterApply: 'drop' });
    await expect(api('Cancel', { PaymentId: a.body.PaymentId, Amount: 5000, ExternalRequestId: 'r-9' })).rejects.toThrow();
    const retry = await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 5000, ExternalRequestId: 'r-9' });
    expect(retry.body).toMatchObject({ Success: true, Status: 'PARTIAL_REFUNDED', NewAmount: 10000 });
    expect((await state(a.body.PaymentId)).Amount).toBe(10000);
  });

  it('a notification is retried until the answer is exactly OK', async () => {
    let n = 0;
    hook.setMode(() => { n += 1; return n === 1 ? { status: 200, body: 'ok' } : n === 2 ? { status: 200, body: 'OK\n' } : n === 3 ? 'fail500' : 'ok'; });
    const a = await init({ PayType: 'T' });
    emu.payerAction(a.body.PaymentId, 'pay');
    await emu.idle();
    const tries = emu.notifier.deliveries.filter((d) => String((d.body as Body).PaymentId) === a.body.PaymentId);
    expect(tries.map((d) => [d.attempt, d.responseText, d.accepted])).toEqual([[1, 'ok', false], [2, 'OK\n', false], [3, 'Internal Server Error', false], [4, 'OK', true]]);
  });

  it('NotificationURL from Init wins over the terminal\'s', async () => {
    const other = await startReceiver();
    try {
      const a = await init({ NotificationURL: `${other.url}/own` });
      emu.payerAction(a.body.PaymentId, 'pay');
      await emu.idle();
      expect(other.received.map((r) => (JSON.parse(r.body) as Body).Status)).toEqual(['AUTHORIZED', 'CONFIRMED']);
      expect(notificationsFor(a.body.PaymentId)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('duplicate notifications: each is delivered twice', async () => {
    emu.misbehave({ notifications: 'duplicate' });
    const a = await init({ PayType: 'T' });
    emu.payerAction(a.body.PaymentId, 'pay');
    await emu.idle();
    expect(notificationsFor(a.body.PaymentId).map((n) => n.Status)).toEqual(['AUTHORIZED', 'AUTHORIZED']);
  });

  it('out-of-order notifications: CONFIRMED arrives before AUTHORIZED', async () => {
    emu.misbehave({ notifications: 'out-of-order' });
    const a = await init();
    emu.payerAction(a.body.PaymentId, 'pay');
    expect(notificationsFor(a.body.PaymentId)).toEqual([]);
    emu.flushNotifications();
    await emu.idle();
    expect(notificationsFor(a.body.PaymentId).map((n) => n.Status)).toEqual(['CONFIRMED', 'AUTHORIZED']);
  });

  it('lost notifications: nothing arrives, and only GetState tells the outcome', async () => {
    emu.misbehave({ notifications: 'lost' });
    const a = await init();
    emu.payerAction(a.body.PaymentId, 'pay');
    await emu.idle();
    expect(notificationsFor(a.body.PaymentId)).toEqual([]);
    expect(emu.notifier.lost).not.toHaveLength(0);
    expect((await state(a.body.PaymentId)).Status).toBe('CONFIRMED');
  });

  it('forged notifications: a wrong Token, or a right Token over changed fields, do not verify', async () => {
    const a = await init();
    const seen = hook.received.length;
    await emu.forgeNotification(a.body.PaymentId, 'wrong-token');
    await emu.forgeNotification(a.body.PaymentId, 'tampered');
    const [wrong, tampered] = hook.received.slice(seen).map((r) => JSON.parse(r.body) as Body);
    expect(wrong).toMatchObject({ PaymentId: Number(a.body.PaymentId), Status: 'CONFIRMED' });
    expect(wrong!.Token).not.toBe(tbankToken(wrong!, emu.password));
    expect(tampered!.Amount).toBe(150000);
    expect(tampered!.Token).not.toBe(tbankToken(tampered!, emu.password));
    expect((await state(a.body.PaymentId)).Status).toBe('NEW');
  });
});

describe('T-Bank emulator: what issue 29 found in the specification', () => {
  it('[11] a repeated SBP Cancel refunds again, even with the same ExternalRequestId, while money is left', async () => {
    const a = await init({ Amount: 5000 });
    await api('GetQr', { PaymentId: a.body.PaymentId });
    await api('SbpPayTest', { PaymentId: a.body.PaymentId });
    expect((await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 1000, ExternalRequestId: 'rf-sbp-1' })).body).toMatchObject({ Success: true, NewAmount: 4000 });
    await waitFor(async () => (await state(a.body.PaymentId)).Status === 'PARTIAL_REFUNDED');
    expect((await api('Cancel', { PaymentId: a.body.PaymentId, Amount: 1000, ExternalRequestId: 'rf-sbp-1' })).body).toMatchObject({ Success: true, NewAmount: 3000 });
    await waitFor(async () => (await state(a.body.PaymentId)).Status === 'PARTIAL_REFUNDED');
    expect((await state(a.body.PaymentId)).Amount).toBe(3000);
  });

  it('[13] CheckOrder of an order never seen is ErrorCode 335, not an empty list', async () => {
    expect((await api('CheckOrder', { OrderId: `never-${randomUUID()}` })).body).toMatchObject({ Success: false, ErrorCode: '335' });
  });
});

describe('T-Bank emulator: recurring charges ([16], [17]) and GetState\'s Amount ([18])', () => {
  /** A parent payment paid with Recurrent Y: its RebillId and its customer. */
  async function parent(customer: string) {
    const a = await init({ Recurrent: 'Y', CustomerKey: customer, DATA: { OperationInitiatorType: '1' } });
    expect(a.body.Success).toBe(true);
    emu.payerAction(String(a.body.PaymentId), 'pay', { card: '4300000000000777' });
    return emu.payments.get(String(a.body.PaymentId))!.RebillId!;
  }

  it('[16] OperationInitiatorType: outside the table is 1125; 1 without Recurrent Y, or Recurrent Y without 1, is 1126; a Charge of a payment Init\'ed as 0 is 1126', async () => {
    expect((await init({ DATA: { OperationInitiatorType: 'X' } })).body).toMatchObject({ Success: false, ErrorCode: '1125' });
    expect((await init({ DATA: { OperationInitiatorType: '1' } })).body).toMatchObject({ Success: false, ErrorCode: '1126' });
    expect((await init({ Recurrent: 'Y', CustomerKey: 'c-1126', DATA: { OperationInitiatorType: '0' } })).body).toMatchObject({ Success: false, ErrorCode: '1126' });
    const rebill = await parent(`c-${randomUUID().slice(0, 8)}`);
    const plain = await init({ DATA: { OperationInitiatorType: '0' } });
    expect((await api('Charge', { PaymentId: plain.body.PaymentId, RebillId: rebill })).body).toMatchObject({ Success: false, ErrorCode: '1126' });
    const recurring = await init({ DATA: { OperationInitiatorType: 'R' } });
    expect((await api('Charge', { PaymentId: recurring.body.PaymentId, RebillId: rebill })).body).toMatchObject({ Success: true, Status: 'CONFIRMED' });
  });

  it('[16] Charge switched off is 10; an expired parent\'s RebillId is 262', async () => {
    const rebill = await parent(`c-${randomUUID().slice(0, 8)}`);
    emu.chargeEnabled = false;
    try {
      const a = await init({ DATA: { OperationInitiatorType: 'R' } });
      expect((await api('Charge', { PaymentId: a.body.PaymentId, RebillId: rebill })).body).toMatchObject({ Success: false, ErrorCode: '10' });
    } finally { emu.chargeEnabled = true; }
    emu.expiredRebills.add(rebill);
    const b = await init({ DATA: { OperationInitiatorType: 'R' } });
    expect((await api('Charge', { PaymentId: b.body.PaymentId, RebillId: rebill })).body).toMatchObject({ Success: false, ErrorCode: '262' });
  });

  it('[17] GetCardList names the customer\'s card with its RebillId; RemoveCard deletes it (status D) and its RebillId charges no more', async () => {
    const customer = `c-${randomUUID().slice(0, 8)}`;
    const rebill = await parent(customer);
    const list = (await api('GetCardList', { CustomerKey: customer })).body as unknown as Body[];
    expect(list).toEqual([expect.objectContaining({ RebillId: rebill, Status: 'A', Pan: '430000******0777' })]);
    expect((await api('RemoveCard', { CustomerKey: customer, CardId: list[0]!.CardId })).body).toMatchObject({ Success: true, Status: 'D' });
    expect(((await api('GetCardList', { CustomerKey: customer })).body as unknown as Body[])[0]).toMatchObject({ Status: 'D' });
    const a = await init({ DATA: { OperationInitiatorType: 'R' } });
    expect((await api('Charge', { PaymentId: a.body.PaymentId, RebillId: rebill })).body).toMatchObject({ Success: false });
  });

  it('[18] stateAmount: GetState\'s Amount after a partial refund is what is left, or the payment\'s amount', async () => {
    const a = await init();
    const id = String(a.body.PaymentId);
    emu.payerAction(id, 'pay', { card: '4300000000000777' });
    expect((await api('Cancel', { PaymentId: id, Amount: 5000 })).body).toMatchObject({ Status: 'PARTIAL_REFUNDED', NewAmount: 10000 });
    expect(await state(id)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 10000 });
    emu.stateAmount = 'payment';
    try {
      expect(await state(id)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 15000 });
    } finally { emu.stateAmount = 'left'; }
  });
});
