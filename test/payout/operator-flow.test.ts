import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

async function op(method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: Record<string, unknown>) {
  const res = await t.app.inject({ method, url: `/admin/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.json();
}

describe('payouts driven the way outside tools do: operator API, then the merchant API', () => {
  it('personal payout to an operator-created account, moderated, approved, paid; the balance endpoint follows', async () => {
    const m = await op('POST', '/merchants', { name: 'Flow', email: `flow-${Date.now()}@example.test` });
    const auth = { authorization: `Bearer ${m.api_token}` };
    await op('PATCH', `/merchants/${m.id}`, { verified: true, moderation_threshold: '500', fees: { payout_card_percent: '1', payout_card_fixed: '0' } });
    const acc = await op('POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4242 4242 4242 4242', card_holder: 'IVAN IVANOV' });
    await op('POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '1000', reason: 'test' });

    const res = await t.app.inject({ method: 'POST', url: '/api/v1/payout/personal/create', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: `amount=600&payout_account_id=${acc.id}&order_id=f-1` });
    expect(res.statusCode).toBe(200);
    const p = res.json().data[0];
    expect(p).toMatchObject({ status: 'MODERATING', amount: 600, commission: 6, account_identifier: '424242******4242', currency: 'RUB' });

    await op('POST', `/payouts/${p.id}/approve`);
    // The approval is in the audit trail, written with it (docs/adr/0032-audit-trail.md), after
    // the creation through the merchant API (issue 27), newest first.
    const trail = await op('GET', `/audit?object_id=${p.id}`);
    expect(trail.data.map((e: Record<string, unknown>) => [e.actor_id, e.action, e.before]))
      .toEqual([['admin-token', 'payout.approve', { status: 'MODERATING' }], [`merchant-api:${m.id}`, 'payout.create', null]]);
    expect(trail.data[0].after).toEqual({ status: 'PROCESS' });
    await t.app.services.payouts.processDue();
    const st = await t.app.inject({ method: 'GET', url: '/api/v1/payout/status?order_id=f-1', headers: auth });
    expect(st.json()).toMatchObject({ id: p.id, status: 'SUCCESS', success: true });

    const bal = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: auth });
    expect(bal.statusCode).toBe(200);
    const rub = bal.json().balances.find((b: { currency: string }) => b.currency === 'RUB');
    expect(rub).toMatchObject({ balance_available: '394.00000000', balance_locked: '0.00000000', balance_hold: '0.00000000' });
  });

  it('regular payout needs the grant set by the operator', async () => {
    const m = await op('POST', '/merchants', { name: 'Flow2', email: `flow2-${Date.now()}@example.test` });
    const auth = { authorization: `Bearer ${m.api_token}` };
    await op('PATCH', `/merchants/${m.id}`, { verified: true });
    await op('POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '100', reason: 'test' });
    const body = { amount: '10', currency: 'RUB', account_type: 'sbp', account_identifier: '+79161234567', account_bank: 100000000111 };
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: auth, payload: body })).statusCode).toBe(403);
    await op('PATCH', `/merchants/${m.id}`, { grants: { regular_payouts: true } });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: auth, payload: body });
    expect(res.statusCode).toBe(200);
    expect(res.json().data[0]).toMatchObject({ status: 'PROCESS', account_identifier: '+79161234567' });
  });
});
