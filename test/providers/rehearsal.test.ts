import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/service-process.js';
import { ADMIN_TOKEN, TEST_KEY } from '../helpers/app.js';
import { runCli } from '../../src/entry/admin-cli.js';
import { enrolledOperator, type OperatorFixture } from '../operator/helpers.js';
import { TBankEmulator } from '../emulators/tbank.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { admin, one, routedMerchant, startE2E, until, type E2E } from './e2e-service.js';

/**
 * Go-live rehearsals through the operator API against the emulators (docs/adr/0104, 0105): the
 * connector's own code drives a payment the payer completes in Chromium on the provider's page,
 * the notification back, two-stage, refunds and SBP; nothing of it reaches a merchant's money.
 */
const ART = 'test/artifacts/rehearsal';
let e: E2E;
let tb: TBankEmulator;
let yk: YooKassaEmulator;
let m: MerchantFixture;
let op: OperatorFixture;

type Step = { name: string; status: string; detail: string; raw: unknown };
type Report = { id: string; status: string; connector: string; steps: Step[]; passed: number; failed: number; skipped: number };

beforeAll(async () => {
  e = await startE2E(ART);
  tb = await TBankEmulator.start({ retryBaseMs: 50 });
  // YooKassa's notifications go where the shop's settings say (its cabinet), not per payment.
  yk = await YooKassaEmulator.start({ notifyUrl: `${e.base}/providers/yk-rh/notifications`, retryBaseMs: 50 });
  for (const [name, body] of [
    ['tb-rh', { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } }],
    // An emulator on loopback: YooKassa's published networks are the default allow-list.
    ['yk-rh', { kind: 'yookassa', mode: 'test', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.0/8, ::1' } }],
  ] as const) {
    const put = await admin(e, 'PUT', `/connectors/${name}`, body);
    expect(put.status, JSON.stringify(put.body)).toBe(201);
  }
  m = await routedMerchant(e, { payment_card: ['tb-rh'], payment_sbp: ['tb-rh'] });
  op = await enrolledOperator(e.t, 'admin');
}, 60_000);

afterAll(async () => {
  await e?.t.app.services.rehearsals.drain();
  await tb?.stop();
  await yk?.stop();
  await e?.close();
});

async function rehearse(connector: string, body: object): Promise<Report> {
  const started = await admin(e, 'POST', `/connectors/${connector}/rehearsals`, body);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body).toMatchObject({ success: true, status: 'running', connector });
  return until(`rehearsal ${started.body.id} finished`, async () => {
    const r = await admin(e, 'GET', `/connectors/${connector}/rehearsals/${started.body.id}`);
    return r.status === 200 ? r.body as Report : null;
  }, 120_000);
}

const step = (r: Report, name: string) => r.steps.find((s) => s.name === name)!;
const moneyState = async () => ({
  accounts: (await admin(e, 'GET', '/ledger/accounts?currency=RUB')).body.accounts,
  payments: (await one(e, 'SELECT count(*)::int AS n FROM payments')).n,
  refunds: (await one(e, 'SELECT count(*)::int AS n FROM refunds')).n,
  transfers: (await one(e, 'SELECT count(*)::int AS n FROM ledger_transfers')).n,
});

describe('a go-live rehearsal of a connector', () => {
  it('enabling a live connector whose kind never passed a rehearsal warns in the console (not refused)', async () => {
    const put = await admin(e, 'PUT', '/connectors/yk-live', { kind: 'yookassa', mode: 'live', enabled: false, settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey } });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const on = await op.client.act('/operator/connectors/yk-live', '/operator/connectors/yk-live/enabled', { enabled: 'true' });
    expect(on.statusCode).toBe(303);
    expect(decodeURIComponent(String(on.headers.location))).toContain('Warning: no rehearsal of a yookassa connector has ever passed');
    expect((await e.t.app.services.connectors.find('yk-live'))!.enabled).toBe(true);
    expect((await op.client.get('/operator/connectors/yk-live')).body).toContain('id="unrehearsed-warning"');
  });

  it('a live connector is never rehearsed: 422 naming it, nothing recorded, nothing sent', async () => {
    const before = (await one(e, `SELECT count(*)::int AS n FROM connector_rehearsals`, [])).n;
    const r = await admin(e, 'POST', '/connectors/yk-live/rehearsals', {});
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(JSON.stringify(r.body)).toContain('only on a test connector');
    expect((await one(e, `SELECT count(*)::int AS n FROM connector_rehearsals`, [])).n).toBe(before);
  });

  for (const [connector, provider] of [['tb-rh', 'T-Bank'], ['yk-rh', 'YooKassa']] as const) {
    it(`${provider}: payment on the provider's page, notification, two-stage, partial and full refund and SBP pass; no merchant's balance, payment or ledger transfer changes`, async () => {
      const before = await moneyState();
      const r = await rehearse(connector, { shop_id: m.shopId, public_url: e.base });
      for (const name of ['transport', 'credentials', 'payment', 'notification', 'two_stage', 'refund', 'sbp']) {
        expect(step(r, name), JSON.stringify(r.steps, null, 1)).toMatchObject({ status: 'passed' });
      }
      expect(r.status).toBe('passed');
      expect(step(r, 'transport').detail).toContain('plain http: emulator/loopback');
      // The shop does not fiscalize: the receipt step says so instead of passing.
      expect(step(r, 'receipt')).toMatchObject({ status: 'skipped', detail: expect.stringContaining('does not fiscalize') });
      expect(step(r, 'payout')).toMatchObject({ status: 'skipped' });
      if (provider === 'T-Bank') {
        // What GetState's Amount says after each refund is recorded as read.
        expect(step(r, 'refund').detail).toMatch(/partial refund of 30\.00 succeeded; provider says \w+, GetState Amount \d+\.\d\d \(/);
        expect(step(r, 'refund').detail).toMatch(/full refund of 70\.00 succeeded/);
      }
      expect(JSON.stringify(r.steps)).not.toContain(connector === 'tb-rh' ? tb.password : yk.secretKey);
      expect(await moneyState()).toEqual(before);
      expect((await one(e, `SELECT count(*)::int AS n FROM provider_notifications WHERE connector = $1`, [connector])).n).toBe(0);
    }, 180_000);
  }

  it('with the provider requiring receipts and the shop not fiscalized, the payment step fails naming the receipt', async () => {
    tb.fiscalization = true;
    try {
      const r = await rehearse('tb-rh', { shop_id: m.shopId });
      expect(r.status).toBe('failed');
      expect(step(r, 'payment').status).toBe('failed');
      expect(step(r, 'payment').detail).toMatch(/receipt/i);
      expect(step(r, 'payment').detail).toContain(`the shop ${m.shopId} does not fiscalize`);
      expect(step(r, 'notification')).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no public_url') });
    } finally {
      tb.fiscalization = false;
    }
  }, 180_000);

  it('against an unreachable host the transport step fails and every other step is skipped with why', async () => {
    const port = await freePort();
    const put = await admin(e, 'PUT', '/connectors/tb-down', { kind: 'tbank', mode: 'test', settings: { base_url: `http://127.0.0.1:${port}/v2`, terminal_key: 'T', password: 'p' } });
    expect(put.status).toBe(201);
    const r = await rehearse('tb-down', {});
    expect(r.status).toBe('failed');
    expect(step(r, 'transport')).toMatchObject({ status: 'failed', detail: expect.stringContaining('ECONNREFUSED') });
    const rest = r.steps.filter((s) => s.name !== 'transport');
    expect(rest.map((s) => s.name)).toEqual(['credentials', 'payment', 'notification', 'receipt', 'two_stage', 'refund', 'sbp', 'saved_card', 'payout']);
    for (const s of rest) expect(s).toMatchObject({ status: 'skipped', detail: expect.stringContaining('the transport step failed') });
    const metrics = (await e.t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body;
    expect(metrics).toContain('payments_connector_rehearsal_failed{connector="tb-down"} 1');
  }, 60_000);

  it('npm run admin -- rehearse waits for the end, prints each step, exits 1 when a step failed; --json prints the report', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { DATABASE_URL: e.t.dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, LOG_LEVEL: 'silent' });
    try {
      let out = '';
      const code = await runCli(['rehearse', 'tb-down'], { out: (s) => { out += s; }, err: () => {} });
      expect(code).toBe(1);
      expect(out).toMatch(/^rehearsal \w+ of tb-down \(tbank\): failed\n/);
      expect(out).toMatch(/failed\s+transport\s+cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED/);
      expect(out).toMatch(/skipped\s+payment\s+not run: the transport step failed/);
      let json = '';
      expect(await runCli(['rehearse', 'tb-down', '--json'], { out: (s) => { json += s; }, err: () => {} })).toBe(1);
      expect(JSON.parse(json)).toMatchObject({ success: true, connector: 'tb-down', status: 'failed', failed: 1, skipped: 9 });
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  }, 60_000);

  it('the console: Rehearse on the connector page starts one (audited), the page shows the latest result step by step; once a kind passed, no warning', async () => {
    const started = await op.client.act('/operator/connectors/tb-down', '/operator/connectors/tb-down/rehearse', { shop_id: '', public_url: '' });
    expect(started.statusCode).toBe(303);
    await e.t.app.services.rehearsals.drain();
    const page = (await op.client.get('/operator/connectors/tb-down')).body;
    expect(page).toContain('id="rehearsal-status">failed<');
    expect(page).toMatch(/data-step="transport"><td>transport<\/td><td><span class="badge">failed<\/span><\/td><td>cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED/);
    expect((await one(e, `SELECT count(*)::int AS n FROM audit_log WHERE action = 'connector.rehearse' AND object_id = 'tb-down' AND actor LIKE 'operator:%'`)).n).toBe(1);
    // A YooKassa rehearsal passed above: a live YooKassa connector is no longer warned about.
    const off = await op.client.act('/operator/connectors/yk-live', '/operator/connectors/yk-live/enabled', { enabled: 'false' });
    expect(off.statusCode).toBe(303);
    const on = await op.client.act('/operator/connectors/yk-live', '/operator/connectors/yk-live/enabled', { enabled: 'true' });
    expect(decodeURIComponent(String(on.headers.location))).not.toContain('Warning');
    expect((await op.client.get('/operator/connectors/yk-live')).body).not.toContain('unrehearsed-warning');
  });

  it('rehearsals are listed newest first with their counts, each start is audited, bad input is a 422 naming the field', async () => {
    const l = await admin(e, 'GET', '/connectors/tb-rh/rehearsals');
    expect(l.status).toBe(200);
    const data = l.body.data as Array<Report & { started_at: string; steps?: unknown }>;
    expect(data.length).toBeGreaterThanOrEqual(2);
    expect(data.map((x) => x.started_at)).toEqual([...data.map((x) => x.started_at)].sort().reverse());
    expect(data[0]).toMatchObject({ status: 'failed', passed: 2 });
    expect(data[0]!.failed).toBeGreaterThanOrEqual(1);
    expect(data[0]!.steps).toBeUndefined();
    expect((await one(e, `SELECT count(*)::int AS n FROM audit_log WHERE action = 'connector.rehearse' AND object_id = 'tb-rh'`)).n).toBe(data.length);
    expect((await admin(e, 'POST', '/connectors/tb-rh/rehearsals', { public_url: 'ftp://x' })).body.errors).toHaveProperty('public_url');
    expect((await admin(e, 'POST', '/connectors/tb-rh/rehearsals', { shop_id: 'nope' })).status).toBe(422);
    expect((await admin(e, 'POST', '/connectors/sandbox/rehearsals', {})).status).toBe(422);
    expect((await admin(e, 'POST', '/connectors/nope/rehearsals', {})).status).toBe(404);
    expect((await admin(e, 'GET', '/connectors/tb-rh/rehearsals/nope')).status).toBe(404);
  });
});
