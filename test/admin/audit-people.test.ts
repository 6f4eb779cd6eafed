import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, TEST_KEY, setupTestApp, type TestApp } from '../helpers/app.js';
import { createPaidPayment } from '../factories/paid-payment.js';
import { payNewBill } from '../factories/payment.js';
import { runCli } from '../../src/entry/admin-cli.js';
import { cabinetMerchant, signedIn, teamMember } from '../cabinet/helpers.js';
import { admin } from './helpers.js';
import { redact } from '../../src/audit/audit.js';

/**
 * Issue 27, item 4: everything that moves money or changes who can is in the audit trail, with a
 * person as the actor (the operator's or cabinet user's email, `admin-token`, `cli:<os user>`)
 * and the request's address; connector changes name which settings changed, never a secret.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

type Entry = { id: string; actor: string; actor_id: string; action: string; object_type: string; object_id: string; before: any; after: any; ip: string | null };

/** The trail of an object through GET /admin/v1/audit, oldest first. */
async function trail(objectId: string, action?: string): Promise<Entry[]> {
  const r = await admin(t, 'GET', `/audit?object_id=${encodeURIComponent(objectId)}${action ? `&action=${action}` : ''}`);
  expect(r.status).toBe(200);
  return (r.body.data as Entry[]).reverse();
}

let n = 0;
async function operator(role: string) {
  n += 1;
  const email = `auditee${n}-${process.pid}@ops.test`;
  const c = await admin(t, 'POST', '/operators', { email, role });
  const k = await admin(t, 'POST', `/operators/${c.body.id}/tokens`, { name: 'ci' });
  return { id: c.body.id as string, email, token: k.body.api_token as string };
}

const asOperator = async (token: string, method: 'POST' | 'PUT' | 'PATCH', url: string, payload: Record<string, unknown>, ip = '203.0.113.7') => {
  const r = await t.app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${token}` }, payload, remoteAddress: ip });
  return { status: r.statusCode, body: r.json() as Record<string, any> };
};

describe('chargebacks are audited (operator API and CLI)', () => {
  it("an operator's chargeback names the operator's email and address; GET /audit keeps the stable key in actor_id", async () => {
    const m = await cabinetMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '300.00' });
    const op = await operator('admin');
    const r = await asOperator(op.token, 'POST', `/payments/${p.paymentId}/chargebacks`, { amount: '120.50', reason: 'fraud' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(await trail(r.body.id)).toEqual([expect.objectContaining({
      actor: op.email, actor_id: `operator:${op.id}`, action: 'chargeback.create', object_type: 'chargeback', ip: '203.0.113.7',
      before: null, after: { payment_id: p.paymentId, merchant_id: m.merchantId, amount: '120.50', currency: 'RUB', reason: 'fraud' },
    })]);
  });

  it('a refused chargeback (more than received) leaves no entry', async () => {
    const m = await cabinetMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '10.00' });
    expect((await admin(t, 'POST', `/payments/${p.paymentId}/chargebacks`, { amount: '10.01', reason: 'x' })).status).toBe(422);
    const r = await t.db.pool.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'chargeback.create' AND after->>'payment_id' = $1", [p.paymentId]);
    expect(r.rows[0].n).toBe(0);
  });

  it('the CLI verb chargebacks:create names cli:<os user>', async () => {
    const m = await cabinetMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '50.00' });
    const saved = { ...process.env };
    Object.assign(process.env, { DATABASE_URL: t.dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, LOG_LEVEL: 'silent', SUDO_USER: '' });
    let out = '';
    try {
      expect(await runCli(['chargebacks:create', p.paymentId, '--amount', '5.00', '--reason', 'scheme'], { out: (s) => { out += s; }, err: () => {} })).toBe(0);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
    const id = JSON.parse(out).id as string;
    const [e] = await trail(id);
    expect(e).toMatchObject({ actor: `cli:${userInfo().username}`, actor_id: `cli:${userInfo().username}`, action: 'chargeback.create' });
  });

  it('the CLI header means nothing over HTTP: a guessed value stays admin-token', async () => {
    const m = await cabinetMerchant(t);
    const p = await createPaidPayment(t, m, { amount: '50.00' });
    const r = await t.app.inject({
      method: 'POST', url: `/admin/v1/payments/${p.paymentId}/chargebacks`, payload: { amount: '1.00', reason: 'x' },
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-payments-cli': 'cli:someone-else' },
    });
    expect(r.statusCode).toBe(201);
    expect((await trail(r.json().id))[0]).toMatchObject({ actor: 'admin-token', actor_id: 'admin-token' });
  });
});

describe('connectors are audited without their secrets', () => {
  it('create, credential change, base URL change, disable and enable: one entry each, the names of changed secrets only', async () => {
    const op = await operator('admin');
    const put = (settings: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      asOperator(op.token, 'PUT', '/connectors/tb-audit', { kind: 'tbank', mode: 'live', settings, ...extra });
    expect((await put({ terminal_key: 'TK1', password: 'first-password-s3cret' })).status).toBe(201);
    expect((await put({ terminal_key: 'TK1', password: 'second-password-s3cret' })).status).toBe(200);
    expect((await put({ terminal_key: 'TK1', password: 'second-password-s3cret', base_url: 'https://evil.example/v2' })).status).toBe(200);
    expect((await asOperator(op.token, 'PATCH', '/connectors/tb-audit', { enabled: false })).status).toBe(200);
    expect((await admin(t, 'GET', '/connectors/tb-audit')).body.enabled).toBe(false);
    expect((await put({ terminal_key: 'TK1', password: 'second-password-s3cret', base_url: 'https://evil.example/v2' }, { enabled: true })).status).toBe(200);

    const entries = await trail('tb-audit');
    expect(entries.map((e) => [e.action, e.actor, e.ip])).toEqual([
      ['connector.create', op.email, '203.0.113.7'],
      ['connector.update', op.email, '203.0.113.7'],
      ['connector.update', op.email, '203.0.113.7'],
      ['connector.disable', op.email, '203.0.113.7'],
      ['connector.enable', op.email, '203.0.113.7'],
    ]);
    expect(entries[0]!.after).toEqual({ kind: 'tbank', mode: 'live', enabled: true, credentials_set: ['password'], 'settings.terminal_key': 'TK1', credentials_changed: ['password'] });
    // "password changed": its name, never its value.
    expect(entries[1]!.before).toEqual({});
    expect(entries[1]!.after).toEqual({ credentials_changed: ['password'] });
    expect(entries[2]!.before).toEqual({ 'settings.base_url': null });
    expect(entries[2]!.after).toEqual({ 'settings.base_url': 'https://evil.example/v2', credentials_changed: [] });
    expect(entries[3]!).toMatchObject({ before: { enabled: true }, after: { enabled: false, credentials_changed: [] } });
    const raw = JSON.stringify((await t.db.pool.query("SELECT * FROM audit_log WHERE object_id = 'tb-audit'")).rows);
    expect(raw).not.toContain('password-s3cret');
  });

  it('an unknown connector cannot be switched (404) and a refused PUT (422) leaves no entry', async () => {
    expect((await admin(t, 'PATCH', '/connectors/nope-nope', { enabled: false })).status).toBe(404);
    expect((await admin(t, 'PUT', '/connectors/yk-bad', { kind: 'yookassa', mode: 'live', settings: { shop_id: '1' } })).status).toBe(422);
    expect(await trail('yk-bad')).toEqual([]);
  });
});

describe('the audit filter keeps what is not a secret and drops what is', () => {
  it('redact keeps token_provider, the names of secrets and when a token was issued; drops tokens, passwords, ciphertexts and card numbers at any depth', () => {
    expect(redact({
      token_provider: 'yookassa', identifier_masked: '424242******4242', api_token_issued_at: 'x', credentials_set: ['secret_key'],
      payout_token: 'pt-1', api_token: 'a', password: 'p', identifier: '4242424242424242', identifier_enc: 'v1:..', settings: { secret_key: 's', shop_id: '1' },
    })).toEqual({
      token_provider: 'yookassa', identifier_masked: '424242******4242', api_token_issued_at: 'x', credentials_set: ['secret_key'], settings: { shop_id: '1' },
    });
  });

  it('a YooKassa connector keeps every plain setting (shop_id, payout_agent_id, payout_widget_url, payout_pci_dss) and no secret value', async () => {
    const r = await admin(t, 'PUT', '/connectors/yk-audit', { kind: 'yookassa', mode: 'test', settings: {
      shop_id: '5150', secret_key: 'test_shop-secret-value-1', payout_agent_id: '505', payout_secret_key: 'test_payout-secret-value-2',
      payout_widget_url: 'https://yookassa.ru/payouts-data/3.1.0/widget.js', payout_pci_dss: true,
    } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const [e] = await trail('yk-audit');
    expect(e!.after).toEqual({
      kind: 'yookassa', mode: 'test', enabled: true, credentials_set: ['payout_secret_key', 'secret_key'], credentials_changed: ['payout_secret_key', 'secret_key'],
      'settings.shop_id': '5150', 'settings.payout_agent_id': '505', 'settings.payout_widget_url': 'https://yookassa.ru/payouts-data/3.1.0/widget.js',
      'settings.payout_pci_dss': true,
    });
    const raw = JSON.stringify((await t.db.pool.query("SELECT * FROM audit_log WHERE object_id = 'yk-audit'")).rows);
    expect(raw).not.toContain('secret-value');
  });

  it('a card account kept as a YooKassa payout_token: its audit entry keeps token_provider and the mask, never the token or a card number', async () => {
    const m = await cabinetMerchant(t);
    const token = 'pt-audit-synonym-0123456789';
    const r = await admin(t, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', payout_token: token, first6: '424242', last4: '4242', card_type: 'Visa' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const [e] = await trail(r.body.id);
    expect(e!.action).toBe('payout_account.create');
    expect(e!.after).toMatchObject({ type: 'card', token_provider: 'yookassa', identifier_masked: '424242******4242', card_type: 'Visa' });
    const byNumber = await admin(t, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', identifier: '5555555555554477', card_holder: 'IVAN IVANOV' });
    expect(byNumber.status, JSON.stringify(byNumber.body)).toBe(201);
    const [n] = await trail(byNumber.body.id);
    expect(n!.after).toMatchObject({ token_provider: null, identifier_masked: expect.stringMatching(/^555555\*+4477$/) });
    const raw = JSON.stringify((await t.db.pool.query('SELECT * FROM audit_log WHERE object_id = ANY($1)', [[r.body.id, byNumber.body.id]])).rows);
    expect(raw).not.toContain(token);
    expect(raw).not.toContain('5555555555554477');
  });
});

describe('routing, token refreshes and the operator console face name the operator', () => {
  it('PATCH merchants routing: the changed routes with the email', async () => {
    const op = await operator('admin');
    const m = await cabinetMerchant(t);
    await admin(t, 'PUT', '/connectors/sbx-two', { kind: 'sandbox', mode: 'test', settings: {} });
    const r = await asOperator(op.token, 'PATCH', `/merchants/${m.merchantId}`, { routing: { payment_card: ['sbx-two', 'sandbox'] } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [e] = await trail(m.merchantId, 'merchant.update');
    expect(e).toMatchObject({ actor: op.email, ip: '203.0.113.7', before: { routing: { payment_card: ['sandbox'] } }, after: { routing: { payment_card: ['sbx-two', 'sandbox'] } } });
  });
});

describe('cabinet changes name the cabinet user', () => {
  it("a team member's payout account, payout, refund, shop settings, allow-list, token refresh and role change: the member's email, never merchant-user:<id>", async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true } });
    const owner = await teamMember(t, m, 'owner');
    const other = await teamMember(t, m, 'support');
    const c = owner.client;
    const { paymentId } = await payNewBill(t, m, { amount: '1000.00' });

    expect((await c.submit('/cabinet/accounts', '/cabinet/accounts', { type: 'card', identifier: '4111111111111111', card_holder: 'IVAN IVANOV' })).statusCode).toBe(303);
    const acc = await t.db.prisma.payoutAccount.findFirstOrThrow({ where: { merchantId: m.merchantId } });
    expect((await c.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '100' })).statusCode).toBe(303);
    const payout = await t.db.prisma.payout.findFirstOrThrow({ where: { merchantId: m.merchantId } });
    expect((await c.submit(`/cabinet/payments/${paymentId}`, `/cabinet/payments/${paymentId}/refund`, { mode: 'partial', amount: '10' })).statusCode).toBe(303);
    const refund = await t.db.prisma.refund.findFirstOrThrow({ where: { paymentId } });
    expect((await c.submit(`/cabinet/shops/${m.shopId}`, `/cabinet/shops/${m.shopId}`, { default_currency: 'RUB', result_url: 'https://shop.example/result' })).statusCode).toBe(303);
    expect((await c.submit('/cabinet/api', '/cabinet/api/allowlist', { api_ip_allowlist: '198.51.100.0/24' })).statusCode).toBe(303);
    expect((await c.submit('/cabinet/api/refresh', '/cabinet/api/refresh', {})).statusCode).toBe(303);
    expect((await c.submit('/cabinet/team', `/cabinet/team/${other.id}/role`, { role: 'accountant' })).statusCode).toBe(303);

    const seen = [
      ...(await trail(acc.id)), ...(await trail(payout.id)), ...(await trail(refund.id)), ...(await trail(m.shopId)),
      ...(await trail(m.merchantId)).filter((e) => e.action !== 'merchant.sign_in'), ...(await trail(other.id)),
    ].filter((e) => e.actor_id === `merchant-user:${owner.id}`);
    expect(seen.map((e) => e.action).sort()).toEqual([
      'merchant.ip_allowlist.update', 'merchant.token.refresh', 'merchant_user.role', 'payout.create', 'payout_account.create', 'refund.create', 'shop.update',
    ]);
    for (const e of seen) expect(e, e.action).toMatchObject({ actor: owner.email, ip: expect.any(String) });
    // The member is removed: the entries still name them.
    await t.db.pool.query('DELETE FROM merchant_users WHERE id = $1', [owner.id]);
    expect((await trail(refund.id))[0]!.actor).toBe(owner.email);
  });

  it("the merchant's own login is named by the merchant's email", async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true } });
    const c = await signedIn(t, m);
    expect((await c.submit('/cabinet/api', '/cabinet/api/allowlist', { api_ip_allowlist: '' })).statusCode).toBe(303);
    const [e] = await trail(m.merchantId, 'merchant.ip_allowlist.update');
    expect(e).toMatchObject({ actor: m.email, actor_id: `merchant:${m.merchantId}` });
  });
});

describe('money moved with the API token is audited too', () => {
  it('payout/regular/create and refund/partial/create: one entry each, "api-token of <merchant email>"', async () => {
    const m = await cabinetMerchant(t, { merchant: { verified: true, grantRefunds: true, grantRegularPayouts: true } });
    const { paymentId } = await payNewBill(t, m, { amount: '1000.00' });
    const po = await t.app.inject({
      method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, remoteAddress: '198.51.100.9',
      payload: { amount: '100', currency: 'RUB', account_type: 'credit_card', account_identifier: '4111111111111111', card_holder: 'IVAN IVANOV' },
    });
    expect(po.statusCode, po.body).toBe(200);
    const rf = await t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: paymentId, amount: '5' } });
    expect(rf.statusCode, rf.body).toBe(200);
    const [p] = await trail(po.json().data[0].id);
    expect(p).toMatchObject({ action: 'payout.create', actor: `api-token of ${m.email}`, actor_id: `merchant-api:${m.merchantId}`, ip: '198.51.100.9' });
    expect(JSON.stringify(p)).not.toContain('4111111111111111');
    expect((await trail(rf.json().id))[0]).toMatchObject({ action: 'refund.create', actor: `api-token of ${m.email}` });
  });
});

describe('the trail reads as people, old entries too', () => {
  it('entries written before issue 27 (key only) show the email the key names today, and the actor filter finds them by email', async () => {
    const op = await operator('auditor');
    await t.db.pool.query(
      `INSERT INTO audit_log (actor, action, object_type, object_id, before, after, ip) VALUES
         ($1, 'merchant.update', 'merchant', 'old-row-1', NULL, '{"verified":true}', '10.0.0.1'),
         ('merchant-user:gone-member', 'refund.create', 'refund', 'old-row-2', NULL, NULL, NULL)`,
      [`operator:${op.id}`],
    );
    expect((await trail('old-row-1'))[0]).toMatchObject({ actor: op.email, actor_id: `operator:${op.id}` });
    // An account that no longer exists: its key is all there is.
    expect((await trail('old-row-2'))[0]).toMatchObject({ actor: 'merchant-user:gone-member', actor_id: 'merchant-user:gone-member' });
    const byEmail = await admin(t, 'GET', `/audit?actor=${encodeURIComponent(op.email)}`);
    expect(byEmail.body.data.map((e: Entry) => e.object_id)).toContain('old-row-1');
    const byKey = await admin(t, 'GET', `/audit?actor=${encodeURIComponent(`operator:${op.id}`)}`);
    expect(byKey.body.data.map((e: Entry) => e.object_id)).toContain('old-row-1');
    const csv = await t.app.inject({ method: 'GET', url: '/admin/v1/audit.csv?object_id=old-row-1', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(csv.body.split('\n')[0]).toBe('id,at,actor,actor_id,action,object_type,object_id,before,after,ip');
    expect(csv.body).toContain(`,${op.email},operator:${op.id},merchant.update,`);
  });
});
