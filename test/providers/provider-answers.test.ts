import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TBankEmulator } from '../emulators/tbank.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { admin, billFor, ledgerOk, one, refundFinal, refundVia, routedMerchant, startE2E, until, type E2E } from './e2e-service.js';

/**
 * Issue 29 items 2, 3 and 6 through the whole service (workers running, reconciliation fast)
 * against the emulators on 127.0.0.1: providers that answer 202, 429 and lose answers to
 * operations they do not deduplicate, and the service moving the money exactly once.
 */
const ART = 'test/artifacts/provider-answers';
const TB = 'tb-answers';
const YK = 'yk-answers';

let e: E2E;
let tb: TBankEmulator;
let yk: YooKassaEmulator;
let m: MerchantFixture;

beforeAll(async () => {
  e = await startE2E(ART);
  tb = await TBankEmulator.start({ retryBaseMs: 50 });
  // A payout gateway enabled for card numbers (payout_pci_dss): these payouts send the number.
  yk = await YooKassaEmulator.start({ notifyUrl: `${e.base}/providers/${YK}/notifications`, retryBaseMs: 50, payoutSettleMs: 100, payoutPciDss: true });
  expect((await admin(e, 'PUT', `/connectors/${TB}`, { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } })).status).toBe(201);
  expect((await admin(e, 'PUT', `/connectors/${YK}`, {
    kind: 'yookassa', mode: 'test',
    settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1', payout_agent_id: yk.payoutAgentId, payout_secret_key: yk.payoutSecretKey, payout_pci_dss: true },
  })).status).toBe(201);
  m = await routedMerchant(e, { payment_sbp: [TB], payout_card: [YK] });
});

afterAll(async () => {
  await tb?.stop();
  await yk?.stop();
  await e?.close();
});

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const postForm = (url: string, form: Record<string, string>) => e.t.app.inject({
  method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, payload: new URLSearchParams(form).toString(),
});

/** An SBP payment at T-Bank paid through the service: the form posted, the payer confirming in the bank app. */
async function paidSbp(amount: string): Promise<{ paymentId: string; ref: string }> {
  const billId = await billFor(e, m, { amount, paymentMethod: 'SBP' });
  const form = await e.t.app.inject({ method: 'GET', url: `/pay/${billId}?lang=en` });
  expect((await postForm(`/pay/${billId}`, { _csrf: csrfOf(form.body), method: 'SBP', lang: 'en' })).statusCode).toBe(303);
  const { id: paymentId, provider_ref: ref } = await one(e, `SELECT id, provider_ref FROM payments WHERE bill_id = $1`, [billId]);
  tb.payerAction(ref, 'sbp-confirm');
  await until('SBP payment SUCCESS', async () => (await one(e, `SELECT status::text FROM payments WHERE id = $1`, [paymentId])).status === 'SUCCESS');
  return { paymentId, ref };
}

describe('T-Bank: a refund T-Bank does not deduplicate', () => {
  it('a T-Bank SBP refund whose Cancel answer is lost refunds exactly once: the repeat reads GetState and sends no second Cancel', async () => {
    const { paymentId, ref } = await paidSbp('1000.00');
    // The Cancel is applied and its answer lost; the emulator, as T-Bank, would refund again on a
    // repeated SBP Cancel even with the same ExternalRequestId.
    tb.misbehave({ op: 'Cancel', timeoutAfterApply: 'drop' });
    const r = await refundVia(e, m, paymentId, '300.00');
    expect(await refundFinal(e, r.id)).toMatchObject({ status: 'SUCCESS' });
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 70000 });
    expect(tb.payments.get(ref)!.history.filter((s) => s === 'ASYNC_REFUNDING')).toHaveLength(1);
    expect(tb.requests.filter((x) => x.op === 'GetState' && x.paymentId === ref).length).toBeGreaterThanOrEqual(1);
    expect((await one(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE kind = 'REFUND_DEBIT' AND ref_id = $1`, [r.id])).n).toBe(1);
    // A second refund of the same payment is still made (the repeat rule does not block new refunds).
    const r2 = await refundVia(e, m, paymentId, '200.00');
    expect(await refundFinal(e, r2.id)).toMatchObject({ status: 'SUCCESS' });
    await until('the second SBP refund settled', async () => tb.payments.get(ref)!.Status === 'PARTIAL_REFUNDED' && tb.payments.get(ref)!.Amount === 50000);
    await ledgerOk(e);
  });

  it('a Cancel answered 9001 ("retry later") is not a failure: the refund stays PROCESS, is decided from GetState and made once', async () => {
    const { paymentId, ref } = await paidSbp('500.00');
    tb.misbehave({ op: 'Cancel', errorCode: '9001' });
    const r = await refundVia(e, m, paymentId, '100.00');
    expect(await refundFinal(e, r.id)).toMatchObject({ status: 'SUCCESS', failure_reason: null });
    expect(tb.payments.get(ref)).toMatchObject({ Status: 'PARTIAL_REFUNDED', Amount: 40000 });
    expect(tb.payments.get(ref)!.history.filter((s) => s === 'ASYNC_REFUNDING')).toHaveLength(1);
    await ledgerOk(e);
  });
});

describe('YooKassa: 202 and 429 on a payout', () => {
  async function payout(orderId: string) {
    expect((await admin(e, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { currency: 'RUB', amount: '1000.00', reason: 'funds' })).status).toBeLessThan(300);
    const r = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: {
      amount: '300.00', currency: 'RUB', account_type: 'credit_card', account_identifier: '5555555555554477', card_holder: 'IVAN IVANOV', order_id: orderId,
    } });
    expect(r.statusCode, r.body).toBe(200);
    const id = (r.json().data as { id: string }[])[0]!.id;
    return until(`payout ${id} final`, async () => {
      const row = await one(e, `SELECT id, status::text, provider_ref, connector FROM payouts WHERE id = $1`, [id]);
      return row.status === 'SUCCESS' || row.status === 'ERROR' || row.status === 'FAIL' ? row : null;
    });
  }

  it('a YooKassa payout answered 202 then succeeded pays out exactly once (the same Idempotence-Key, after retry_after)', async () => {
    yk.misbehave({ op: 'payouts.create', processing: { answers: 2, retryAfterMs: 30 } });
    const row = await payout('po-202');
    expect(row).toMatchObject({ status: 'SUCCESS', connector: YK });
    const made = [...yk.payouts.values()].filter((x) => x.metadata.payout_id === row.id);
    expect(made).toHaveLength(1);
    expect(made[0]!.id).toBe(row.provider_ref);
    const answered = yk.requests.filter((x) => x.method === 'POST' && x.path === '/v3/payouts').map((x) => x.status);
    expect(answered.slice(-3)).toEqual([202, 202, 200]);
    await ledgerOk(e);
  });

  it('a YooKassa payout answered 429 is repeated after a back-off and pays out once', async () => {
    yk.misbehave({ op: 'payouts.create', status429: {}, times: 2 });
    const before = yk.requests.length;
    const row = await payout('po-429');
    expect(row).toMatchObject({ status: 'SUCCESS', connector: YK });
    expect([...yk.payouts.values()].filter((x) => x.metadata.payout_id === row.id)).toHaveLength(1);
    expect(yk.requests.slice(before).filter((x) => x.method === 'POST' && x.path === '/v3/payouts').map((x) => x.status)).toEqual([429, 429, 200]);
    await ledgerOk(e);
  });

  it('a payout still answered 202 after the repeats is never routed elsewhere nor failed: it stays PROCESS, is asked again with the same key, and pays once', async () => {
    yk.misbehave({ op: 'payouts.create', processing: { answers: 6, retryAfterMs: 20 } });
    const row = await payout('po-202-long');
    expect(row).toMatchObject({ status: 'SUCCESS', connector: YK });
    expect([...yk.payouts.values()].filter((x) => x.metadata.payout_id === row.id)).toHaveLength(1);
    await ledgerOk(e);
  });

  it('a payout whose Idempotence-Key has outlived YooKassa\'s 24 h is never sent again: an attention item at once, no second payout', async () => {
    // Still "processing" on every repeat: the payout stays PROCESS with no reference of YooKassa's.
    yk.misbehave({ op: 'payouts.create', processing: { answers: 10_000, retryAfterMs: 5 } });
    // And its notification lost, so nothing but a repeat could tell the service what happened.
    yk.misbehave({ notifications: 'lost' });
    expect((await admin(e, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { currency: 'RUB', amount: '1000.00', reason: 'funds' })).status).toBeLessThan(300);
    const r = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: {
      amount: '300.00', currency: 'RUB', account_type: 'credit_card', account_identifier: '5555555555554477', card_holder: 'IVAN IVANOV', order_id: 'po-key-life',
    } });
    expect(r.statusCode, r.body).toBe(200);
    const id = (r.json().data as { id: string }[])[0]!.id;
    await until('payout sent to YooKassa', async () => (await one(e, `SELECT connector, sent_at FROM payouts WHERE id = $1`, [id])).sent_at !== null);
    // 23 h 50 min later: within the key's last quarter hour (24 h life), so a repeat could
    // create a second payout, yet before RECONCILE_GIVE_UP_MS (24 h). Made due now (its backoff
    // would otherwise put the next question minutes away).
    await e.t.db.pool.query(`UPDATE payouts SET sent_at = now() - interval '23 hours 50 minutes', next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const item = await until('attention item naming the expired key', async () =>
      (await e.t.db.pool.query(`SELECT reason, last_heard FROM attention_items WHERE object_id = $1 AND kind = 'unknown_outcome' AND resolved_at IS NULL`, [id])).rows[0] ?? null);
    expect(item.reason).toMatch(/idempotency key/);
    expect(item.last_heard).toMatchObject({ status: 'unknown', reason: 'idempotence_key_expired' });
    // No payout of anyone else is in flight here: every POST /v3/payouts from now on would be this one's.
    const posts = () => yk.requests.filter((x) => x.method === 'POST' && x.path === '/v3/payouts').length;
    const sent = posts();
    // Time is the subject: 1.5 s of worker passes in which no second POST /v3/payouts is sent.
    await new Promise((res) => setTimeout(res, 1500));
    expect(posts()).toBe(sent);
    expect([...yk.payouts.values()].filter((x) => x.metadata.payout_id === id)).toHaveLength(1);
    expect((await one(e, `SELECT status::text FROM payouts WHERE id = $1`, [id])).status).toBe('PROCESS');
    yk.clearMisbehaviour();
  });
});
