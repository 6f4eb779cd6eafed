import { spawn } from 'node:child_process';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { enterProfile, ProfileRefusedError } from '../../src/domain/deployment/deployment.service.js';

/**
 * Live money moves only through live providers (issue 26). In the `production` profile the
 * sandbox serves test mode only: the attack that paid a live bill by SBP through the sandbox
 * with a typed amount credits nothing, a live payout or refund with no live connector is refused
 * before anything moves, routing refuses test connectors on live routes, and the database itself
 * refuses a live operation attached to a connector that is not live.
 */

let t: TestApp;
let m: MerchantFixture;
let testToken: string;

const admin = (method: 'GET' | 'PUT' | 'PATCH' | 'POST', url: string, payload?: object, app = t) =>
  app.app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload ? { payload } : {}) });
const api = (method: 'GET' | 'POST', url: string, token: string, payload?: object) =>
  t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
const one = async <T = Record<string, unknown>>(app: TestApp, sql: string, params: unknown[] = []) => (await app.db.pool.query(sql, params)).rows[0] as T;
const available = async (app: TestApp, merchantId: string) =>
  (await one<{ available: string }>(app, `SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [merchantId])).available;

async function bill(token: string, amount: string): Promise<string> {
  const r = await api('POST', '/api/v1/bill/create', token, { amount, shop_id: m.shopId });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
}

beforeAll(async () => {
  // Connectors here call emulators on loopback.
  t = await setupTestApp({ PAYMENTS_PROFILE: 'production', CONNECTOR_TIMEOUT_MS: '2000', ALLOW_PRIVATE_PROVIDER_URLS: 'true' });
  // A live YooKassa account (its address refuses connections: nothing here reaches a provider)
  // and a YooKassa test shop.
  for (const [name, mode] of [['yk-live', 'live'], ['yk-test', 'test']] as const) {
    const r = await admin('PUT', `/admin/v1/connectors/${name}`, { kind: 'yookassa', mode, settings: { shop_id: '1', secret_key: 'k', base_url: 'http://127.0.0.1:9', payout_agent_id: '2', payout_secret_key: 'p' } });
    expect(r.statusCode, r.body).toBe(201);
  }
  m = await createMerchant(t, { merchant: { verified: true, grantRegularPayouts: true, grantRefunds: true } });
  expect((await admin('PATCH', `/admin/v1/merchants/${m.merchantId}`, { routing: { payment_card: ['yk-live'] } })).statusCode).toBe(200);
  testToken = (await t.app.services.merchants.refreshTestToken(m.merchantId)).apiToken;
});
afterAll(async () => { await t.close(); });

describe('production: live money never meets the sandbox', () => {
  it('the attack: SBP on a live bill whose operator routed only cards, with a typed amount, is refused before any payment opens', async () => {
    const billId = await bill(m.token, '10.00');
    const r = await payRequest(t, billId, { method: 'SBP', amount: '99999999' });
    expect(r.statusCode).toBe(422);
    expect(r.json()).toMatchObject({ success: false, message: 'api:error.method_unavailable' });
    expect(await one(t, 'SELECT count(*)::int AS n FROM payments WHERE bill_id = $1', [billId])).toEqual({ n: 0 });
    expect(await available(t, m.merchantId)).toBe('0.00000000');
    // The page offers the card (the provider's own form) and not SBP.
    const page = await t.app.inject({ method: 'GET', url: `/pay/${billId}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-testid="card-hosted"');
    expect(page.body).not.toContain('data-testid="pay-sbp"');
    expect(page.body).toContain('<meta name="payments-profile" content="production">');
  });

  it('a live bill with no live connector on any route: the page says payment is unavailable', async () => {
    const other = await createMerchant(t);
    const r = await api('POST', '/api/v1/bill/create', other.token, { amount: '10.00', shop_id: other.shopId });
    const page = await t.app.inject({ method: 'GET', url: `/pay/${r.json().bill_id}` });
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain('data-testid="unavailable"');
    const pay = await payRequest(t, r.json().bill_id as string, cardForm());
    expect(pay.json().message).toBe('api:error.method_unavailable');
  });

  it('a live payout with no live connector on its route is refused (direction_not_available) and nothing is locked', async () => {
    await t.app.services.adjustments.create(m.merchantId, { currency: 'RUB', amount: new Decimal('60000'), reason: 'test funds' });
    const r = await api('POST', '/api/v1/payout/regular/create', m.token, {
      amount: '50000', currency: 'RUB', account_type: 'credit_card', account_identifier: '4242424242424242', card_holder: 'IVAN PETROV', account_bank: '',
    });
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().message).toBe('api:error.direction_not_available');
    expect(await available(t, m.merchantId)).toBe('60000.00000000');
    expect(await one(t, 'SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [m.merchantId])).toEqual({ n: 0 });
  });

  it('routing that names the sandbox or a test-mode connector in a live route is refused 422 with why; a live connector is taken', async () => {
    for (const name of ['sandbox', 'yk-test']) {
      const r = await admin('PATCH', `/admin/v1/merchants/${m.merchantId}`, { routing: { payment_sbp: [name] } });
      expect(r.statusCode).toBe(422);
      expect(r.json().errors['routing.payment_sbp'].join(' ')).toMatch(/production profile a live route takes live-mode connectors only/);
    }
    expect((await admin('PATCH', `/admin/v1/merchants/${m.merchantId}`, { routing: { payout_card: ['yk-live'] } })).statusCode).toBe(200);
    // Live routes have no default: what is not set is empty, never the sandbox.
    expect((await admin('GET', `/admin/v1/merchants/${m.merchantId}`)).json().routing)
      .toEqual({ payment_card: ['yk-live'], payment_sbp: [], payout_card: ['yk-live'], payout_sbp: [] });
  });

  it('test mode still pays through the sandbox, on the test balance only', async () => {
    const billId = await bill(testToken, '300.00');
    const p = await payRequest(t, billId, cardForm());
    expect(p.json().status).toBe('SUCCESS');
    const twin = await one<{ id: string }>(t, 'SELECT id FROM merchants WHERE live_merchant_id = $1', [m.merchantId]);
    expect(await one(t, 'SELECT connector, mode, connector_mode FROM payments WHERE bill_id = $1', [billId])).toEqual({ connector: 'sandbox', mode: 'test', connector_mode: 'test' });
    expect(await available(t, twin.id)).toBe('300.00000000');
    expect(await available(t, m.merchantId)).toBe('60000.00000000');
  });

  it('/health and /ready say the profile', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toMatchObject({ status: 'ok', profile: 'production' });
    expect((await t.app.inject({ method: 'GET', url: '/ready' })).json()).toMatchObject({ profile: 'production' });
  });
});

describe('production: the database refuses a live operation through a connector that is not live (bypassing the service)', () => {
  it('attaching the sandbox to a live payment fails in production and is allowed only while the database runs as sandbox', async () => {
    // A live card payment: yk-live refuses the connection, the payment ends FAIL on yk-live.
    const billId = await bill(m.token, '20.00');
    await payRequest(t, billId, { method: 'BANK_CARD' });
    const p = await one<{ id: string; connector: string; mode: string; connector_mode: string }>(t, 'SELECT id, connector, mode, connector_mode FROM payments WHERE bill_id = $1', [billId]);
    expect(p).toMatchObject({ connector: 'yk-live', mode: 'live', connector_mode: 'live' });
    await expect(t.db.pool.query(`UPDATE payments SET connector = 'sandbox' WHERE id = $1`, [p.id])).rejects.toThrow(/cannot go through the test connector sandbox in the production profile/);
    // Writing the recorded modes does not help: they are taken from the merchant and the connector.
    await expect(t.db.pool.query(`UPDATE payments SET connector = 'sandbox', connector_mode = 'live' WHERE id = $1`, [p.id])).rejects.toThrow(/live_money_live_connector|production profile/);
    await expect(t.db.pool.query(`UPDATE payments SET connector = 'yk-test' WHERE id = $1`, [p.id])).rejects.toThrow(/production profile/);
    // The same statement in a sandbox deployment: allowed (there the whole deployment is a test instrument).
    const c = await t.db.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query(`UPDATE deployment SET profile = 'sandbox'`);
      await c.query(`UPDATE payments SET connector = 'sandbox' WHERE id = $1`, [p.id]);
      expect((await c.query('SELECT connector_mode FROM payments WHERE id = $1', [p.id])).rows[0]).toEqual({ connector_mode: 'test' });
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
  });

  it('a test operation never goes through a live connector, in any profile', async () => {
    const billId = await bill(testToken, '5.00');
    await payRequest(t, billId, cardForm());
    const p = await one<{ id: string }>(t, 'SELECT id FROM payments WHERE bill_id = $1', [billId]);
    await expect(t.db.pool.query(`UPDATE payments SET connector = 'yk-live' WHERE id = $1`, [p.id])).rejects.toThrow(/test-mode payments.* cannot go through the live connector yk-live/);
  });

  it("a used connector's mode stays what it is (a test account never becomes a live one)", async () => {
    const r = await admin('PUT', '/admin/v1/connectors/yk-live', { kind: 'yookassa', mode: 'test', settings: { shop_id: '1', secret_key: 'k', base_url: 'http://127.0.0.1:9' } });
    expect(r.statusCode, r.body).toBe(422);
    expect(r.json().errors.mode, r.body).toBeDefined();
    expect(await one(t, `SELECT mode FROM connectors WHERE name = 'yk-live'`)).toEqual({ mode: 'live' });
  });
});

describe('a database that ran as sandbox starts as production only without sandbox money on live balances', () => {
  let s: TestApp;
  let sm: MerchantFixture;
  let started: { code: number | null; stderr: string };
  beforeAll(async () => {
    s = await setupTestApp();
    sm = await createMerchant(s);
    const r = await s.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: sm.auth, payload: { amount: '777.00', shop_id: sm.shopId } });
    expect((await payRequest(s, r.json().bill_id, cardForm())).json().status).toBe('SUCCESS');
    // The real start in production is a cold tsx process (its exit is the subject, 20-25 s on a
    // loaded machine): it runs here, in the hook's time, and the test reads what it left.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/main.ts'], {
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, DATABASE_URL: s.dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, PAYMENTS_PROFILE: 'production', PORT: '0', LOG_LEVEL: 'warn', RUN_WORKERS: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => { clearTimeout(timer); resolve(c); }));
    started = { code, stderr };
  });
  afterAll(async () => { await s.close(); });

  it('the production start is refused, naming the merchant, the money and the command that clears it', async () => {
    const err = await enterProfile(s.db.pool, { profile: 'production' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProfileRefusedError);
    const text = (err as ProfileRefusedError).lines.join('\n');
    expect(text).toContain(sm.merchantId);
    expect(text).toContain('777.00 RUB');
    expect(text).toContain('npm run admin -- sandbox-money:clear');
    expect(await one(s, 'SELECT profile FROM deployment')).toEqual({ profile: 'sandbox' });

    // The real start (in the hook): exit 78 with the same lines on stderr, nothing served.
    expect(started.code, started.stderr).toBe(78);
    expect(started.stderr).toContain(sm.merchantId);
    expect(started.stderr).toContain('sandbox-money:clear');
  });

  it('the operator clears it (an audited debit of the live balance), then production starts', async () => {
    const shown = (await admin('GET', '/admin/v1/deployment', undefined, s)).json();
    expect(shown.sandbox_money).toEqual([expect.objectContaining({ merchant_id: sm.merchantId, currency: 'RUB', amount: '777.00000000' })]);
    const r = await admin('POST', '/admin/v1/deployment/sandbox-money/clear', { reason: 'going live' }, s);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().cleared).toEqual([expect.objectContaining({ merchant_id: sm.merchantId, debited: '777.00000000', written_off: '0.00000000' })]);
    expect(await available(s, sm.merchantId)).toBe('0.00000000');
    expect(await one(s, `SELECT actor, action FROM audit_log WHERE action = 'merchant.sandbox_money.clear' AND object_id = $1`, [sm.merchantId]))
      .toEqual({ actor: 'admin-token', action: 'merchant.sandbox_money.clear' });
    expect((await admin('GET', '/ledger/verify', undefined, s)).statusCode).toBeLessThan(500);
    await enterProfile(s.db.pool, { profile: 'production' });
    expect(await one(s, 'SELECT profile FROM deployment')).toEqual({ profile: 'production' });
  });
});
