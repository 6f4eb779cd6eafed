import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { freePort } from '../helpers/service-process.js';
import { ADMIN_TOKEN, TEST_KEY } from '../helpers/app.js';
import { runCli } from '../../src/entry/admin-cli.js';
import { buildApp } from '../../src/app.js';
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
type Report = { id: string; status: string; connector: string; steps: Step[]; passed: number; failed: number; skipped: number; findings: Record<string, unknown> };

beforeAll(async () => {
  e = await startE2E(ART);
  tb = await TBankEmulator.start({ retryBaseMs: 50 });
  // YooKassa's notifications go where the shop's settings say (its cabinet), not per payment.
  yk = await YooKassaEmulator.start({ notifyUrl: `${e.base}/providers/yk-rh/notifications`, retryBaseMs: 50 });
  for (const [name, body] of [
    ['tb-rh', { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } }],
    // An emulator on loopback: YooKassa's published networks are the default allow-list.
    // With the test payout gateway's pair (payout_token only: the payout goes by SBP).
    ['yk-rh', { kind: 'yookassa', mode: 'test', settings: {
      base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.0/8, ::1', payout_agent_id: yk.payoutAgentId, payout_secret_key: yk.payoutSecretKey,
    } }],
  ] as const) {
    const put = await admin(e, 'PUT', `/connectors/${name}`, body);
    expect(put.status, JSON.stringify(put.body)).toBe(201);
  }
  m = await routedMerchant(e, { payment_card: ['tb-rh'], payment_sbp: ['tb-rh'] });
  op = await enrolledOperator(e.t, 'admin');
});

afterAll(async () => {
  await e?.t.app.services.rehearsals.drain();
  await tb?.stop();
  await yk?.stop();
  await e?.close();
});

/**
 * Starts a rehearsal and waits for its report. A rehearsal is one background run of the service
 * at the connector's pace (the payer in Chromium on the provider's page, the notification, each
 * settle), so the tests run it in a `beforeAll` (hookTimeout) and read the report it left; the
 * bound stays under the hook's so a run that does not end fails here, by name.
 */
async function rehearse(connector: string, body: object): Promise<Report> {
  const started = await admin(e, 'POST', `/connectors/${connector}/rehearsals`, body);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body).toMatchObject({ success: true, status: 'running', connector });
  return until(`rehearsal ${started.body.id} finished`, async () => {
    const r = await admin(e, 'GET', `/connectors/${connector}/rehearsals/${started.body.id}`);
    return r.status === 200 ? r.body as Report : null;
  }, 50_000);
}

const step = (r: Report, name: string) => r.steps.find((s) => s.name === name)!;
const moneyState = async () => ({
  accounts: (await admin(e, 'GET', '/ledger/accounts?currency=RUB')).body.accounts,
  payments: (await one(e, 'SELECT count(*)::int AS n FROM payments')).n,
  refunds: (await one(e, 'SELECT count(*)::int AS n FROM refunds')).n,
  transfers: (await one(e, 'SELECT count(*)::int AS n FROM ledger_transfers')).n,
  payouts: (await one(e, 'SELECT count(*)::int AS n FROM payouts')).n,
  methods: (await one(e, 'SELECT count(*)::int AS n FROM saved_payment_methods')).n,
});

describe('a go-live rehearsal of a connector', () => {
  it('enabling a live connector whose kind never passed a rehearsal warns in the console (not refused)', async () => {
    const put = await admin(e, 'PUT', '/connectors/yk-live', { kind: 'yookassa', mode: 'live', enabled: false, settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey } });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const on = await op.client.act('/operator/connectors/yk-live', '/operator/connectors/yk-live/enabled', { enabled: 'true' });
    expect(on.statusCode).toBe(303);
    expect(decodeURIComponent(String(on.headers.location))).toContain('Warning: no rehearsal of a yookassa connector has ever passed');
    expect((await e.t.app.services.connectors.find('yk-live'))!.enabled).toBe(true);
    // The operator API says the same in its answer's `warnings`, and enables all the same.
    const patched = await admin(e, 'PATCH', '/connectors/yk-live', { enabled: true });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ success: true, enabled: true, warnings: [expect.stringContaining('no rehearsal of a yookassa connector has ever passed')] });
    // A test connector, or switching off, is no cause for a warning.
    expect((await admin(e, 'PATCH', '/connectors/yk-rh', { enabled: true })).body.warnings).toEqual([]);
    expect((await op.client.get('/operator/connectors/yk-live')).body).toContain('id="unrehearsed-warning"');
    // Created already enabled, or replaced while enabled, it warns the same; created disabled, it does not.
    const created = await admin(e, 'PUT', '/connectors/yk-live-2', { kind: 'yookassa', mode: 'live', settings: { base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ enabled: true, warnings: [expect.stringContaining('no rehearsal of a yookassa connector has ever passed')] });
    expect(put.body.warnings).toEqual([]);
    expect((await admin(e, 'PATCH', '/connectors/yk-live-2', { enabled: false })).body.warnings).toEqual([]);
  });

  it('a live connector is never rehearsed: 422 naming it, nothing recorded, nothing sent', async () => {
    const before = (await one(e, `SELECT count(*)::int AS n FROM connector_rehearsals`, [])).n;
    const r = await admin(e, 'POST', '/connectors/yk-live/rehearsals', {});
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(JSON.stringify(r.body)).toContain('only on a test connector');
    expect((await one(e, `SELECT count(*)::int AS n FROM connector_rehearsals`, [])).n).toBe(before);
  });

  for (const [connector, provider] of [['tb-rh', 'T-Bank'], ['yk-rh', 'YooKassa']] as const) {
    describe(`${provider}, rehearsed in full`, () => {
      let r: Report;
      let before: Awaited<ReturnType<typeof moneyState>>;
      let after: Awaited<ReturnType<typeof moneyState>>;
      beforeAll(async () => {
        before = await moneyState();
        r = await rehearse(connector, { shop_id: m.shopId, public_url: e.base });
        after = await moneyState();
      });

      it(`${provider}: payment on the provider's page, notification, two-stage, partial and full refund, SBP, a saved card charged and (YooKassa) a payout pass; no merchant's balance, payment, payout or ledger transfer changes`, async () => {
        for (const name of ['transport', 'credentials', 'payment', 'notification', 'two_stage', 'refund', 'sbp', 'saved_card']) {
          expect(step(r, name), JSON.stringify(r.steps, null, 1)).toMatchObject({ status: 'passed' });
        }
        expect(r.status).toBe('passed');
        expect(step(r, 'transport').detail).toContain('plain http: emulator/loopback');
        // The shop does not fiscalize: the receipt step says so instead of passing.
        expect(step(r, 'receipt')).toMatchObject({ status: 'skipped', detail: expect.stringContaining('does not fiscalize') });
        expect(step(r, 'saved_card').detail).toMatch(/100\.00 paid with the card saved.*a charge of 10\.00 by the saved card with no payer: paid/);
        if (provider === 'T-Bank') {
          // What GetState's Amount says after each refund is recorded as read, and answers the question.
          expect(step(r, 'refund').detail).toMatch(/partial refund of 30\.00 succeeded; provider says \w+, GetState Amount \d+\.\d\d \(/);
          expect(step(r, 'refund').detail).toMatch(/full refund of 70\.00 succeeded/);
          expect(step(r, 'payout')).toMatchObject({ status: 'skipped', detail: 'the connector makes no payouts (tbank)' });
          expect(r.findings).toEqual({ getstate_amount_after_refund: 'left', charge_enabled: true });
          // The charge went by the RebillId T-Bank's notification gave: Init, then Charge.
          expect(tb.requests.filter((q) => q.op === 'Charge').length).toBeGreaterThanOrEqual(1);
        } else {
          expect(step(r, 'payout')).toMatchObject({ status: 'passed', detail: expect.stringMatching(/a payout of 10\.00 to SBP \+79000000001 at .+ succeeded/) });
          expect([...yk.payouts.values()].filter((x) => x.metadata?.payout_id === `rh-${r.id}-o1`)).toHaveLength(1);
          expect(r.findings).toEqual({ charge_enabled: true });
          // The saved card's id at the provider charges it: the report masks it.
          expect(JSON.stringify(step(r, 'saved_card').raw)).toContain('"providerId":"********"');
        }
        expect(JSON.stringify(r.steps)).not.toContain(connector === 'tb-rh' ? tb.password : yk.secretKey);
        expect(after).toEqual(before);
        expect((await one(e, `SELECT count(*)::int AS n FROM provider_notifications WHERE connector = $1`, [connector])).n).toBe(0);
      });
    });
  }

  describe('a provider requiring receipts', () => {
    let r: Report;
    beforeAll(async () => {
      tb.fiscalization = true;
      try {
        r = await rehearse('tb-rh', { shop_id: m.shopId });
      } finally {
        tb.fiscalization = false;
      }
    });

    it('with the provider requiring receipts and the shop not fiscalized, the payment step fails naming the receipt', () => {
      expect(r.status).toBe('failed');
      expect(step(r, 'payment').status).toBe('failed');
      expect(step(r, 'payment').detail).toMatch(/receipt/i);
      expect(step(r, 'payment').detail).toContain(`the shop ${m.shopId} does not fiscalize`);
      expect(step(r, 'notification')).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no public_url') });
    });
  });

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
  });

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
      // Nothing answered what the documents leave open: the report says so.
      expect(out).toContain('finding getstate_amount_after_refund: open\n  finding charge_enabled: open\n');
      let json = '';
      expect(await runCli(['rehearse', 'tb-down', '--json'], { out: (s) => { json += s; }, err: () => {} })).toBe(1);
      expect(JSON.parse(json)).toMatchObject({ success: true, connector: 'tb-down', status: 'failed', failed: 1, skipped: 9 });
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  it('the console: Rehearse on the connector page starts one (audited), the page shows the latest result step by step; once a kind passed, no warning', async () => {
    const started = await op.client.act('/operator/connectors/tb-down', '/operator/connectors/tb-down/rehearse', { shop_id: '', public_url: '' });
    expect(started.statusCode).toBe(303);
    await e.t.app.services.rehearsals.drain();
    const page = (await op.client.get('/operator/connectors/tb-down')).body;
    expect(page).toContain('id="rehearsal-status">failed<');
    expect(page).toContain('<span data-finding="charge_enabled">charge_enabled = open</span>');
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
  describe('a T-Bank terminal without Charge', () => {
    let r: Report;
    beforeAll(async () => {
      const put = await admin(e, 'PUT', '/connectors/tb-nocharge', { kind: 'tbank', mode: 'test', settings: { base_url: tb.apiUrl, terminal_key: tb.terminalKey, password: tb.password } });
      expect(put.status).toBe(201);
      tb.chargeEnabled = false;
      try {
        r = await rehearse('tb-nocharge', { public_url: e.base });
      } finally {
        tb.chargeEnabled = true;
      }
    });

    it('T-Bank with Charge not enabled on the terminal: saved_card fails with T-Bank\'s code 10 and says so; the report records charge_enabled false', () => {
      expect(r.status).toBe('failed');
      expect(step(r, 'saved_card')).toMatchObject({ status: 'failed', detail: expect.stringContaining('Charge is not enabled on this terminal') });
      expect(step(r, 'saved_card').detail).toContain('error 10');
      expect(step(r, 'sbp').status).toBe('passed');
      expect(r.findings).toMatchObject({ charge_enabled: false });
    });
  });

  describe('a rehearsal without public_url', () => {
    let r: Report;
    beforeAll(async () => { r = await rehearse('tb-nocharge', {}); });

    it('without public_url, T-Bank\'s saved card (named only in its notification) is skipped with why; a report says "open" for what no step answered', () => {
      expect(step(r, 'saved_card')).toMatchObject({ status: 'skipped', detail: expect.stringContaining('no public_url') });
      expect(r.findings).toEqual({ getstate_amount_after_refund: 'left', charge_enabled: 'open' });
    });
  });

  it('a rehearsal\'s finding narrows the connector at the same API address: GetState Amount found "left", a refund the state does not show is no longer taken as done (an operator decides); elsewhere the status alone decides', async () => {
    // The T-Bank rehearsals above found GetState's Amount to be what is left, at tb.apiUrl.
    const other = await TBankEmulator.start({ retryBaseMs: 50, password: 'other-password', terminalKey: 'OTHER1234DEMO' });
    try {
      for (const [name, em] of [['tb-found', tb], ['tb-elsewhere', other]] as const) {
        const put = await admin(e, 'PUT', `/connectors/${name}`, { kind: 'tbank', mode: 'test', settings: { base_url: em.apiUrl, terminal_key: em.terminalKey, password: em.password } });
        expect(put.status).toBe(201);
      }
      const refundDone = async (name: string, em: TBankEmulator) => {
        const c = (await e.t.app.services.connectors.get(name))!;
        const call = <T extends { status: string }>(op: 'create_payment' | 'refund' | 'get_refund', fn: (ctx: { signal: AbortSignal }) => Promise<T>) => e.t.app.services.connectors.call(c, op, fn);
        const made = await call('create_payment', (ctx) => c.createPayment({ paymentId: `rh-Fnd${Date.now()}`, method: 'card', amount: new Decimal('100.00') }, ctx));
        if (made.status !== 'action') throw new Error(made.status);
        em.payerAction(made.ref, 'pay', { card: '4300000000000777' });
        const r = await call('refund', (ctx) => c.refund({ refundId: `rh-Rf${Date.now()}`, paymentId: 'p', paymentRef: made.ref, amount: new Decimal('30.00'), amountRub: null, currency: 'RUB', fromCard: null }, ctx));
        expect(r).toEqual({ status: 'succeeded', ref: `${made.ref}:7000` });
        // The provider's state now reads its Amount the other way (what the payment was).
        em.stateAmount = 'payment';
        try {
          return await call('get_refund', (ctx) => c.getRefund({ refundId: 'x', ref: `${made.ref}:7000` }, ctx));
        } finally { em.stateAmount = 'left'; }
      };
      const found = await refundDone('tb-found', tb);
      expect(found).toMatchObject({ status: 'unknown', reason: expect.stringMatching(/^needs_operator: tbank: the payment is PARTIAL_REFUNDED but GetState's Amount 10000 \(what is left, as a rehearsal of this API found\)/) });
      expect(await refundDone('tb-elsewhere', other)).toMatchObject({ status: 'succeeded' });
    } finally {
      await other.stop();
    }
  });

  it('a run whose process is gone (still running past its timeout) becomes failed, "interrupted", when listed; a recent one of another process is left running', async () => {
    await e.t.db.pool.query(`INSERT INTO connector_rehearsals (id, connector, kind, started_at) VALUES ('Intr1old', 'tb-rh', 'tbank', now() - interval '2 hours'), ('Intr1new', 'tb-rh', 'tbank', now())`);
    const l = await admin(e, 'GET', '/connectors/tb-rh/rehearsals');
    const data = l.body.data as Report[];
    expect(data.find((x) => x.id === 'Intr1old')).toMatchObject({ status: 'failed', failed: 1 });
    expect(data.find((x) => x.id === 'Intr1new')).toMatchObject({ status: 'running' });
    const old = (await admin(e, 'GET', '/connectors/tb-rh/rehearsals/Intr1old')).body as Report;
    expect(old.steps).toEqual([expect.objectContaining({ name: 'rehearsal', status: 'failed', detail: expect.stringContaining('interrupted') })]);
    // Ended once: a later read changes nothing.
    expect(await e.t.app.services.rehearsals.endInterrupted()).toBe(0);
    await e.t.db.pool.query(`DELETE FROM connector_rehearsals WHERE id = 'Intr1new'`);
  });

  it('a restarted service ends, at boot, a run its predecessor left running past its timeout', async () => {
    await e.t.db.pool.query(`INSERT INTO connector_rehearsals (id, connector, kind, started_at) VALUES ('Intr2old', 'tb-rh', 'tbank', now() - interval '2 hours')`);
    const restarted = await buildApp({ config: e.t.config, db: e.t.db, logger: false });
    try {
      await restarted.ready();
      expect(await one(e, `SELECT status, failed_steps, steps->-1->>'detail' AS why FROM connector_rehearsals WHERE id = 'Intr2old'`))
        .toMatchObject({ status: 'failed', failed_steps: 1, why: expect.stringMatching(/^interrupted: /) });
    } finally {
      await restarted.close();
    }
  });
});
