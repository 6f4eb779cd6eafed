import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { until } from './e2e-service.js';

/**
 * A YooKassa payout whose answer was lost, resolved FAIL by the operator, then paid by YooKassa
 * (docs/adr/0080-unconfirmed-conflict-holds-the-money.md), through HTTP against the emulator on
 * 127.0.0.1: the service stored no reference of it (the answer that carried it was lost), so
 * YooKassa's `payout.succeeded` is confirmed by reading the payout the notification names, our
 * payout id checked in its metadata. The money that left is debited and a second payout of it is
 * refused. The payout worker is driven by the test (processDue), so each step is one pass.
 */
const YK = 'yk-hold';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

let t: TestApp;
let yk: YooKassaEmulator;
let m: MerchantFixture;

beforeAll(async () => {
  const l = await listeningTestApp('test/artifacts/yookassa-payout-conflict', { CONNECTOR_TIMEOUT_MS: '3000' });
  t = l.t;
  // Payouts settle only when the test says (settlePayout), which then notifies the service.
  yk = await YooKassaEmulator.start({ notifyUrl: `${l.base}/providers/${YK}/notifications`, retryBaseMs: 50, payoutSettleMs: null, payoutPciDss: true });
  const c = await t.app.inject({ method: 'PUT', url: `/admin/v1/connectors/${YK}`, headers: admin, payload: {
    kind: 'yookassa', mode: 'test',
    settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1', payout_agent_id: yk.payoutAgentId, payout_secret_key: yk.payoutSecretKey, payout_pci_dss: true },
  } });
  expect(c.statusCode, c.body).toBe(201);
  m = await createMerchant(t);
  const r = await t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: {
    verified: true, grants: { regular_payouts: true }, routing: { payout_card: [YK] },
    fees: { payout_card_percent: '0', payout_card_fixed: '0' },
  } });
  expect(r.statusCode, r.body).toBe(200);
});

afterAll(async () => {
  await yk?.stop();
  await t?.close();
});

const one = async (sql: string, v: unknown[] = []) => (await t.db.pool.query(sql, v)).rows[0];

async function merchantBalance() {
  const r = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: m.auth });
  expect(r.statusCode, r.body).toBe(200);
  return (r.json().balances as Array<{ currency: string }>).find((b) => b.currency === 'RUB');
}

function payout(amount: string) {
  return t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: {
    amount, currency: 'RUB', account_type: 'credit_card', account_identifier: '5555555555554477', card_holder: 'IVAN IVANOV',
  } });
}

describe('a YooKassa payout resolved FAIL after its answer was lost, then paid by YooKassa', () => {
  it('is confirmed by reading the payout the notification names: available is debited and a second payout of the same money is refused', async () => {
    const fund = await t.app.inject({ method: 'POST', url: `/admin/v1/merchants/${m.merchantId}/balance-adjustments`, headers: admin, payload: { currency: 'RUB', amount: '300.00', reason: 'funds' } });
    expect(fund.statusCode, fund.body).toBeLessThan(300);

    // YooKassa makes the payout; its answer never arrives.
    yk.misbehave({ op: 'payouts.create', timeoutAfterApply: 'drop' });
    const created = await payout('300.00');
    expect(created.statusCode, created.body).toBe(200);
    const id = (created.json().data as Array<{ id: string }>)[0]!.id;
    await t.app.services.payouts.processDue();
    expect(await one(`SELECT status::text, connector, provider_ref FROM payouts WHERE id = $1`, [id])).toEqual({ status: 'PROCESS', connector: YK, provider_ref: null });
    const made = [...yk.payouts.values()].filter((x) => x.metadata?.payout_id === id);
    expect(made).toHaveLength(1);
    const ref = made[0]!.id;

    // A day later its Idempotence-Key has expired: no repeat may be sent, the operator decides.
    await t.db.pool.query(`UPDATE payouts SET sent_at = now() - interval '24 hours', next_check_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await t.app.services.payouts.processDue();
    const list = (await t.app.inject({ method: 'GET', url: '/admin/v1/attention', headers: admin })).json().data as Array<{ id: string; object_id: string; kind: string }>;
    const item = list.find((i) => i.object_id === id && i.kind === 'unknown_outcome');
    expect(item).toBeTruthy();
    const resolved = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${item!.id}/resolve`, headers: admin, payload: { outcome: 'FAIL', note: 'no trace of it' } });
    expect(resolved.json()).toMatchObject({ resolution: 'FAIL', resolved_by: 'admin-token' });
    expect(await merchantBalance()).toMatchObject({ balance_available: '300.00000000' });

    // YooKassa pays it and notifies payout.succeeded (our payout id in its metadata).
    yk.settlePayout(ref, 'succeeded');
    const conflict = await until('the conflict recorded', async () => one(`SELECT * FROM attention_items WHERE object_id = $1 AND kind = 'conflict'`, [id]));
    expect(conflict.last_heard).toMatchObject({
      ours: { status: 'FAIL', set_by: 'admin-token' },
      provider: { status: 'succeeded', ref, via: 'notification+read' },
      money: { transfer: `PAYOUT_CONFLICT_DEBIT:${id}` },
    });
    expect(conflict.provider_ref).toBe(ref);
    expect((await one(`SELECT status::text FROM payouts WHERE id = $1`, [id])).status).toBe('FAIL');
    expect(await merchantBalance()).toMatchObject({ balance_available: '0.00000000' });

    // The same 300.00 again: refused as the spec says, nothing sent to YooKassa.
    const again = await payout('300.00');
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    expect(yk.payouts.size).toBe(1);
    expect((await one(`SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1`, [m.merchantId])).n).toBe(1);
    const books = await t.app.inject({ method: 'GET', url: '/admin/v1/ledger/verify', headers: admin });
    expect(books.json()).toMatchObject({ ok: true, problems: [] });
  });
});
