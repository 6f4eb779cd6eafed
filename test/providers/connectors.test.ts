import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decrypt } from '../../src/lib/crypto.js';
import type { CreatePayment, PaymentOutcome } from '../../src/domain/providers/connector.js';
import { SandboxConnector } from '../../src/domain/providers/connectors/sandbox/index.js';
import { buildCall, UsageError, type Call } from '../../src/admin/cli.js';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, payRequest } from '../factories/payment.js';
import { card, fund, payoutMerchant, regular } from '../payout/helpers.js';

let t: TestApp;
// A short provider timeout, so the hanging connector below times out quickly.
beforeAll(async () => { t = await setupTestApp({ CONNECTOR_TIMEOUT_MS: '300', SANDBOX_PROCESSING_DELAY_MS: '0' }); });
afterAll(async () => { await t.close(); });

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const put = (name: string, payload: unknown) => t.app.inject({ method: 'PUT', url: `/admin/v1/connectors/${name}`, headers: admin, payload: payload as object });
const get = (url: string) => t.app.inject({ method: 'GET', url, headers: admin });
const route = (m: MerchantFixture, routing: Record<string, string[]>) =>
  t.app.inject({ method: 'PATCH', url: `/admin/v1/merchants/${m.merchantId}`, headers: admin, payload: { routing } });
const one = async (sql: string, v: unknown[]) => (await t.db.pool.query(sql, v)).rows[0];
const count = async (sql: string, v: unknown[] = []) => (await one(sql, v)).n as number;

/** connector_calls_total for these labels, as /metrics shows it (0 when absent). */
async function calls(connector: string, operation: string, outcome: string): Promise<number> {
  const r = await get('/metrics');
  const line = r.body.split('\n').find((l) => l.startsWith('connector_calls_total{') && l.includes(`connector="${connector}"`)
    && l.includes(`operation="${operation}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function pay(m: MerchantFixture, number = '4242424242424242') {
  const billId = await createBill(t, m, { amount: '100.00' });
  const r = await payRequest(t, billId, cardForm(number));
  const p = await one(`SELECT id, status::text, connector, provider_ref, failure_reason, failure_message FROM payments WHERE bill_id = $1`, [billId]);
  return { r, p };
}

describe('connector registry (operator API)', () => {
  it('the built-in sandbox is present; PUT creates (201) then updates (200); list and show', async () => {
    const list0 = (await get('/admin/v1/connectors')).json();
    expect(list0.data.map((c: { name: string }) => c.name)).toContain('sandbox');
    const a = await put('sbx-crud', { kind: 'sandbox', mode: 'test', settings: {} });
    expect(a.statusCode).toBe(201);
    expect(a.json()).toMatchObject({ name: 'sbx-crud', kind: 'sandbox', mode: 'test', enabled: true, settings: {} });
    const b = await put('sbx-crud', { kind: 'sandbox', mode: 'test', settings: { refuse: true } });
    expect(b.statusCode).toBe(200);
    // The sandbox is a test instrument: never a live-mode connector.
    const live = await put('sbx-crud', { kind: 'sandbox', mode: 'live', settings: {} });
    expect(live.statusCode).toBe(422);
    expect(live.json().errors.mode).toBeDefined();
    const shown = (await get('/admin/v1/connectors/sbx-crud')).json();
    expect(shown).toMatchObject({ name: 'sbx-crud', mode: 'test', settings: { refuse: true }, health: { last_success_at: null, recent_calls: 0, recent_error_rate: null }, unknown_outcomes: 0 });
    expect((await get('/admin/v1/connectors/nope')).statusCode).toBe(404);
  });

  it('an unknown kind, a bad mode, a missing setting or a bad name is 422 with the field, and nothing is stored', async () => {
    const before = await count('SELECT count(*)::int AS n FROM connectors');
    const r1 = await put('bad-kind', { kind: 'paypal', mode: 'live', settings: {} });
    expect(r1.statusCode).toBe(422);
    expect(Object.keys(r1.json().errors)).toEqual(['kind']);
    const r2 = await put('yk-missing', { kind: 'yookassa', mode: 'live', settings: { shop_id: '1' } });
    expect(r2.statusCode).toBe(422);
    expect(Object.keys(r2.json().errors)).toEqual(['settings.secret_key']);
    const r3 = await put('tb', { kind: 'tbank', mode: 'sometimes', settings: { terminal_key: 'T', password: 'p' } });
    expect(Object.keys(r3.json().errors)).toEqual(['mode']);
    const r4 = await put('Bad_Name', { kind: 'sandbox', mode: 'test', settings: {} });
    expect(r4.statusCode).toBe(422);
    expect(Object.keys(r4.json().errors)).toEqual(['name']);
    expect(await count('SELECT count(*)::int AS n FROM connectors')).toBe(before);
  });

  it('secrets are encrypted at rest and never returned: masked in PUT, show and list', async () => {
    const secret = 'live_SECRET_key_0123456789';
    const r = await put('yk-main', { kind: 'yookassa', mode: 'live', settings: { shop_id: '123456', secret_key: secret, base_url: 'http://127.0.0.1:1/api/v3' } });
    expect(r.statusCode).toBe(201);
    expect(r.json().settings).toEqual({ shop_id: '123456', secret_key: '********', base_url: 'http://127.0.0.1:1/api/v3' });
    for (const body of [r.body, (await get('/admin/v1/connectors/yk-main')).body, (await get('/admin/v1/connectors')).body]) {
      expect(body).not.toContain(secret);
    }
    const row = await one(`SELECT settings::text AS s, secrets_enc FROM connectors WHERE name = 'yk-main'`, []);
    expect(row.s).not.toContain(secret);
    expect(row.secrets_enc).not.toContain(secret);
    expect(JSON.parse(decrypt(t.config.tokenEncryptionKey, row.secrets_enc))).toEqual({ secret_key: secret });
  });
});

describe('merchant routing', () => {
  it('defaults to ["sandbox"] per route; unknown names and routes a connector cannot take (yookassa payouts without payout credentials) are 422, nothing changes', async () => {
    const m = await createMerchant(t);
    const view = (await get(`/admin/v1/merchants/${m.merchantId}`)).json();
    expect(view.routing).toEqual({ payment_card: ['sandbox'], payment_sbp: ['sandbox'], payout_card: ['sandbox'], payout_sbp: ['sandbox'] });
    const bad = await route(m, { payment_card: ['nope', 'sandbox'] });
    expect(bad.statusCode).toBe(422);
    expect(Object.keys(bad.json().errors)).toEqual(['routing.payment_card']);
    await put('yk-route', { kind: 'yookassa', mode: 'test', settings: { shop_id: '1', secret_key: 's' } });
    // No payout_agent_id / payout_secret_key: this yookassa connector cannot pay out.
    const notYet = await route(m, { payout_sbp: ['yk-route'] });
    expect(notYet.statusCode).toBe(422);
    expect(Object.keys(notYet.json().errors)).toEqual(['routing.payout_sbp']);
    expect((await route(m, { payment_card: [] })).statusCode).toBe(422);
    expect((await get(`/admin/v1/merchants/${m.merchantId}`)).json().routing.payment_card).toEqual(['sandbox']);
    await put('sbx-other', { kind: 'sandbox', mode: 'test', settings: {} });
    const ok = await route(m, { payment_sbp: ['sbx-other', 'sandbox'] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().routing).toEqual({ payment_card: ['sandbox'], payment_sbp: ['sbx-other', 'sandbox'], payout_card: ['sandbox'], payout_sbp: ['sandbox'] });
  });

  it('a payment takes the first connector of its list; the connector and its reference are recorded', async () => {
    await put('sbx-first', { kind: 'sandbox', mode: 'test', settings: {} });
    const m = await createMerchant(t);
    expect((await route(m, { payment_card: ['sbx-first', 'sandbox'] })).statusCode).toBe(200);
    const { r, p } = await pay(m);
    expect(r.json().status).toBe('SUCCESS');
    expect(p).toMatchObject({ status: 'SUCCESS', connector: 'sbx-first', provider_ref: expect.stringMatching(/^sbx_/) });
    // The ledger's clearing account is that connector's.
    expect(await count(`SELECT count(*)::int AS n FROM ledger_entries WHERE debit_account = 'RUB:acquirer_clearing:sbx-first'`)).toBeGreaterThan(0);
  });

  it('a refusal before money moved falls back to the next connector; a refusal by all fails the payment as provider_unavailable, the provider\'s code kept in its message', async () => {
    await put('sbx-down', { kind: 'sandbox', mode: 'test', settings: { refuse: true } });
    const m = await createMerchant(t);
    await route(m, { payment_card: ['sbx-down', 'sandbox'] });
    const refusedBefore = await calls('sbx-down', 'create_payment', 'refused');
    const { p } = await pay(m);
    expect(p).toMatchObject({ status: 'SUCCESS', connector: 'sandbox' });
    expect(await calls('sbx-down', 'create_payment', 'refused')).toBe(refusedBefore + 1);
    await route(m, { payment_card: ['sbx-down'] });
    const only = await pay(m);
    expect(only.p).toMatchObject({ status: 'FAIL', connector: 'sbx-down', failure_reason: 'provider_unavailable', failure_message: expect.stringMatching(/^sandbox_refuse: /) });
    const h = (await get('/admin/v1/connectors/sbx-down')).json();
    expect(h.health.recent_error_rate).toBe(1);
    expect(h.health.last_success_at).toBeNull();
  });

  it('a timeout is unknown: no fallback, the payment stays PROCESS with that connector and counts as waiting on it', async () => {
    await put('sbx-slow', { kind: 'sandbox', mode: 'test', settings: {} });
    t.app.services.connectors.override(new class extends SandboxConnector {
      override createPayment(_r: CreatePayment): Promise<PaymentOutcome> { return new Promise(() => undefined); }
    }('sbx-slow'));
    const m = await createMerchant(t);
    await route(m, { payment_card: ['sbx-slow', 'sandbox'] });
    const sandboxBefore = await calls('sandbox', 'create_payment', 'ok');
    const { r, p } = await pay(m);
    // JSON mode answers PROCESS without an action: nothing to do but wait (reconciliation asks).
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ payment_id: p.id, status: 'PROCESS' });
    expect(p).toMatchObject({ status: 'PROCESS', connector: 'sbx-slow' });
    expect(await calls('sandbox', 'create_payment', 'ok')).toBe(sandboxBefore);
    expect(await calls('sbx-slow', 'create_payment', 'unknown')).toBe(1);
    // Its latency is the timeout's (300 ms): the histogram counts it above 0.25 s.
    const metrics = (await get('/metrics')).body;
    const bucket = (le: string) => Number(metrics.split('\n').find((l) => l.startsWith('connector_call_duration_seconds_bucket{')
      && l.includes('connector="sbx-slow"') && l.includes('operation="create_payment"') && l.includes(`le="${le}"`))?.split(' ').pop());
    expect(bucket('0.25')).toBe(0);
    expect(bucket('1')).toBe(1);
    const h = (await get('/admin/v1/connectors/sbx-slow')).json();
    expect(h.unknown_outcomes).toBe(1);
    expect(h.health.last_error).toMatch(/timeout/);
  });

  it('the declined cards keep their error code and message on the payment', async () => {
    const m = await createMerchant(t);
    expect((await pay(m, '4000000000000002')).p).toMatchObject({ status: 'FAIL', failure_reason: 'card_declined', failure_message: 'The card was declined.' });
    expect((await pay(m, '4000000000009995')).p).toMatchObject({ status: 'FAIL', failure_reason: 'insufficient_funds' });
  });
});

describe('refunds and payouts', () => {
  it('a refund goes through the connector that took its payment, even after the routing changed', async () => {
    await put('sbx-refund', { kind: 'sandbox', mode: 'test', settings: {} });
    const m = await createMerchant(t, { merchant: { grantRefunds: true } });
    await route(m, { payment_card: ['sbx-refund'] });
    const { p } = await pay(m);
    expect(p.connector).toBe('sbx-refund');
    await route(m, { payment_card: ['sandbox'] });
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/refund/full/create', headers: m.auth, payload: { payment_id: p.id } });
    expect(created.statusCode).toBe(200);
    const before = await calls('sbx-refund', 'refund', 'ok');
    await t.db.pool.query(`UPDATE refunds SET process_after = now() - interval '1 second' WHERE payment_id = $1`, [p.id]);
    await t.app.services.refunds.processDue();
    expect(await one(`SELECT status::text, connector FROM refunds WHERE payment_id = $1`, [p.id])).toEqual({ status: 'SUCCESS', connector: 'sbx-refund' });
    expect(await calls('sbx-refund', 'refund', 'ok')).toBe(before + 1);
  });

  it('a payout follows its route with the same fallback, and records the connector', async () => {
    await put('sbx-pay-down', { kind: 'sandbox', mode: 'test', settings: { refuse: true } });
    await put('sbx-pay', { kind: 'sandbox', mode: 'test', settings: {} });
    const m = await payoutMerchant(t);
    await fund(t, m.merchantId, '1000');
    expect((await route(m, { payout_card: ['sbx-pay-down', 'sbx-pay'] })).statusCode).toBe(200);
    const id = (await regular(t, m, card('10'))).json().data[0].id;
    await t.db.pool.query(`UPDATE payouts SET process_after = now() - interval '1 second' WHERE id = $1`, [id]);
    await t.app.services.payouts.processDue();
    expect(await one(`SELECT status::text, connector FROM payouts WHERE id = $1`, [id])).toEqual({ status: 'SUCCESS', connector: 'sbx-pay' });
    expect(await calls('sbx-pay-down', 'create_payout', 'refused')).toBe(1);
    expect(await calls('sbx-pay', 'create_payout', 'ok')).toBe(1);
  });
});

describe('CLI verbs', () => {
  it('connectors:set|list|show map to the operator routes, settings nested and kept as strings', async () => {
    expect(buildCall(['connectors:set', 'yk-cli', '--kind', 'yookassa', '--mode', 'test', '--setting-shop-id', '0123', '--setting-secret-key', 'sk'])).toEqual({
      method: 'PUT', path: '/connectors/yk-cli', body: { kind: 'yookassa', mode: 'test', settings: { shop_id: '0123', secret_key: 'sk' } },
    });
    expect(buildCall(['connectors:set', 'sbx-cli', '--kind', 'sandbox', '--mode', 'test'])).toMatchObject({ body: { settings: {} } });
    expect(buildCall(['connectors:list'])).toEqual({ method: 'GET', path: '/connectors' });
    expect(buildCall(['connectors:show', 'sandbox'])).toEqual({ method: 'GET', path: '/connectors/sandbox' });
    expect(() => buildCall(['connectors:set', 'x', '--kind', 'sandbox'])).toThrow(UsageError);
    // The call the verb builds is answered by the route (what the CLI sends through app.inject).
    const c = buildCall(['connectors:set', 'sbx-cli', '--kind', 'sandbox', '--mode', 'test']) as Call;
    const r = await t.app.inject({ method: c.method, url: `/admin/v1${c.path}`, headers: admin, payload: c.body });
    expect(r.statusCode).toBe(201);
  });
});
