import { spawn } from 'node:child_process';
import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, TEST_KEY, setupTestApp, type TestApp } from '../helpers/app.js';
import { buildCall, parseArgs, UsageError } from '../../src/admin/cli.js';
import { runCli } from '../../src/entry/admin-cli.js';
import { enqueueTestPostbacks } from '../factories/outbox.js';
import { createMerchant } from '../factories/merchant.js';
import { cardForm, heldPayment, payRequest } from '../factories/payment.js';

let t: TestApp;
beforeAll(async () => {
  t = await setupTestApp();
  await t.db.pool.query(`INSERT INTO sbp_banks (member_id, name, name_en, bic) VALUES (990000000301, 'Б', 'B', '1') ON CONFLICT DO NOTHING`);
});
afterAll(async () => { await t.close(); });

/** The profile the CLI runs with (a test may run it as production). */
let cliProfile = 'sandbox';
const CLI_ENV = (): Record<string, string> => ({
  DATABASE_URL: t.dbUrl, ADMIN_API_TOKEN: ADMIN_TOKEN, TOKEN_ENCRYPTION_KEY: TEST_KEY, PAYMENTS_PROFILE: cliProfile, LOG_LEVEL: 'silent',
  ALLOW_PRIVATE_WEBHOOK_URLS: 'false', TZ: 'Europe/Moscow',
});

function parsed(code: number, stdout: string, stderr: string): { code: number; out: any; stderr: string } {
  let out: unknown = stdout;
  try { out = JSON.parse(stdout); } catch { /* help text */ }
  return { code, out, stderr };
}

/**
 * The CLI's own entry (`runCli`, what `npm run admin -- ...` runs) in this process against this
 * file's database: the same parsing, boot, operator routes and exit codes, without paying a
 * TypeScript start-up per call (the child-process tests below prove the real command).
 */
async function cli(args: string[]): Promise<{ code: number; out: any; stderr: string }> {
  // The CLI reads and sets process.env (as its command does); put it back afterwards, since the
  // next test file of this worker process shares it (vitest.config.ts: isolate false).
  const saved = { ...process.env };
  Object.assign(process.env, CLI_ENV());
  let stdout = '';
  let stderr = '';
  try {
    const code = await runCli(args, { out: (s) => { stdout += s; }, err: (s) => { stderr += s; } })
      .catch((e: unknown) => { stderr += `error: ${(e as Error).message}\n`; return 1; });
    return parsed(code, stdout, stderr);
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** `npm run admin -- ...` as a child process against this file's database. */
function cliProcess(args: string[]): Promise<{ code: number; out: any; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/admin-cli.ts', ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...CLI_ENV() },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve(parsed(code ?? -1, stdout, stderr)));
  });
}

describe('operator CLI (argument parsing)', () => {
  it('maps friendly verbs to operator routes, nesting grants and fees and keeping money as strings', () => {
    expect(buildCall(['merchants:update', 'M1', '--verified', 'true', '--grant-refunds', 'true', '--fee-payment-card-percent', '2.5', '--payout-daily-limit', 'null'])).toEqual({
      method: 'PATCH', path: '/merchants/M1',
      body: { verified: true, grants: { refunds: true }, fees: { payment_card_percent: '2.5' }, payout_daily_limit: null },
    });
    expect(buildCall(['balance:adjust', 'M1', '--currency', 'RUB', '--amount', '-40.5', '--reason', 'fee'])).toMatchObject({
      method: 'POST', path: '/merchants/M1/balance-adjustments', body: { currency: 'RUB', amount: '-40.5', reason: 'fee' },
    });
    expect(buildCall(['rates:set', 'USD', '92.5'])).toEqual({ method: 'PUT', path: '/rates/USD', body: { rub_per_unit: '92.5' } });
    expect(buildCall(['events:redeliver-dead', 'M1'])).toEqual({ method: 'POST', path: '/merchants/M1/events/redeliver-dead' });
    expect(buildCall(['shops:test-postback', 'S1'])).toEqual({ method: 'POST', path: '/shops/S1/test-postback' });
    expect(buildCall(['request', 'POST', '/admin/v1/merchants', '{"name":"A"}'])).toEqual({ method: 'POST', path: '/merchants', body: { name: 'A' } });
    expect(buildCall(['events:list', '--status', 'dead'])).toMatchObject({ method: 'GET', path: '/events', query: { status: 'dead' } });
    expect(buildCall(['payouts:approve', 'P1'])).toMatchObject({ method: 'POST', path: '/payouts/P1/approve' });
    expect(buildCall(['merchants:two-factor-reset', 'M1', '--reason', 'id checked'])).toEqual({ method: 'POST', path: '/merchants/M1/two-factor-reset', body: { reason: 'id checked' } });
    expect(buildCall(['merchants:two-factor-reset', 'M1', 'U1', '--reason', 'id checked'])).toEqual({ method: 'POST', path: '/merchants/M1/two-factor-reset', body: { member_id: 'U1', reason: 'id checked' } });
    expect(() => buildCall(['merchants:two-factor-reset'])).toThrow(UsageError);
    expect(() => buildCall(['merchants:two-factor-reset', 'M1'])).toThrow(/--reason/);
    expect(buildCall(['merchants:password-reset', 'M1'])).toEqual({ method: 'POST', path: '/merchants/M1/password-reset' });
    expect(buildCall(['merchants:password-reset', 'M1', 'U1'])).toEqual({ method: 'POST', path: '/merchants/M1/password-reset', body: { member_id: 'U1' } });
    expect(buildCall(['--help'])).toBe('help');
    expect(() => buildCall(['nope'])).toThrow(UsageError);
    expect(() => buildCall(['merchants:create', '--name', 'X'])).toThrow(/--email/);
    expect(buildCall(['payment', 'capture', 'P1'])).toEqual({ method: 'POST', path: '/payments/P1/capture', body: {} });
    expect(buildCall(['payment', 'capture', 'P1', '--amount', '120.50'])).toEqual({ method: 'POST', path: '/payments/P1/capture', body: { amount: '120.50' } });
    expect(buildCall(['payment', 'cancel', 'P1'])).toEqual({ method: 'POST', path: '/payments/P1/cancel', body: {} });
    expect(() => buildCall(['payment', 'refund', 'P1'])).toThrow(UsageError);
    expect(() => buildCall(['payment', 'capture'])).toThrow(UsageError);
    expect(() => buildCall(['payment', 'capture', 'P1', '--amount'])).toThrow(/--amount needs a value/);
    expect(() => buildCall(['payment', 'cancel', 'P1', '--amount', '1'])).toThrow(UsageError);
    expect(parseArgs(['--a=1', '--b', '--c', 'x', 'pos'])).toEqual({ positional: ['pos'], flags: { a: '1', b: true, c: 'x' } });
  });
});

describe('operator CLI (child process against the database)', () => {
  // Each spawn boots the whole app cold under tsx (seconds of CPU on a shared 2-core machine): the
  // four independent runs go at once in the hook (hookTimeout), the tests read what each left.
  let help: Awaited<ReturnType<typeof cliProcess>>;
  let unknown: Awaited<ReturnType<typeof cliProcess>>;
  let created: Awaited<ReturnType<typeof cliProcess>>;
  let notFound: Awaited<ReturnType<typeof cliProcess>>;
  beforeAll(async () => {
    [help, unknown, created, notFound] = await Promise.all([
      cliProcess(['--help']),
      cliProcess(['frobnicate']),
      cliProcess(['merchants:create', '--name', 'Process shop', '--email', 'process-cli@example.test']),
      cliProcess(['request', 'GET', '/merchants/unknown']),
    ]);
  });

  it('--help lists the verbs and exits 0; an unknown verb exits 2', () => {
    expect(help.code).toBe(0);
    for (const verb of ['merchants:create', 'balance:adjust', 'rates:set', 'payouts:approve', 'events:redeliver', 'ledger:verify', 'request']) {
      expect(help.out).toContain(verb);
    }
    expect(unknown.code).toBe(2);
  });

  it('the command prints the JSON answer and exits 0; a refusal exits 1 with the error JSON', () => {
    expect(created.code, created.stderr).toBe(0);
    expect(created.out.id).toEqual(expect.any(String));
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toContain('HTTP 404');
  });
});

describe('operator CLI (its entry in this process, against the database)', () => {
  it('--help lists the verbs and exits 0; an unknown verb exits 2', async () => {
    const h = await cli(['--help']);
    expect(h.code).toBe(0);
    expect(h.out).toContain('merchants:create');
    expect((await cli(['frobnicate'])).code).toBe(2);
  });

  it('creates and configures a merchant, adds a payout account and credits its balance, printing JSON', async () => {
    const c = await cli(['merchants:create', '--name', 'CLI shop', '--email', 'cli@example.test', '--password', 'long-password']);
    expect(c.code).toBe(0);
    expect(c.out).toMatchObject({ success: true, email: 'cli@example.test', verified: false });
    const id = c.out.id as string;
    expect(c.out.api_token).toBeTruthy();

    const u = await cli(['merchants:update', id, '--verified', 'true', '--grant-regular-payouts', 'true', '--fee-payout-card-percent', '1.5', '--payout-max-card', '50000']);
    expect(u.code).toBe(0);
    const row = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id } });
    expect([row.verified, row.grantRegularPayouts, row.payoutCardPercent?.toString(), row.payoutMaxCard.toString()]).toEqual([true, true, '1.5', '50000']);

    const a = await cli(['payout-accounts:create', id, '--type', 'sbp', '--identifier', '+7 912 000 00 02', '--bank-member-id', '990000000301']);
    expect(a.code).toBe(0);
    expect(a.out.identifier_masked).toBe('+79120000002');

    const adj = await cli(['balance:adjust', id, '--currency', 'RUB', '--amount', '250.75', '--reason', 'opening']);
    expect(adj.code).toBe(0);
    expect(adj.out.balance.balance_available).toBe('250.75000000');
  });

  it('exits 1 with the error JSON on a refused request (overdraft, guard, unknown id)', async () => {
    const m = await t.app.services.merchants.create({ name: 'X', email: 'cli-x@example.test' });
    const over = await cli(['balance:adjust', m.merchant.id, '--currency', 'RUB', '--amount', '-1', '--reason', 'x']);
    expect(over.code).toBe(1);
    expect(over.out).toMatchObject({ success: false, message: 'api:error.balance_not_enough' });
    const guard = await cli(['payout-webhook:set', m.merchant.id, 'http://127.0.0.1/hook']);
    expect(guard.code).toBe(1);
    expect(guard.out.errors.url).toBeDefined();
    const nf = await cli(['request', 'GET', '/merchants/unknown']);
    expect(nf.code).toBe(1);
    expect(nf.stderr).toContain('404');
  });

  it('operators:create makes the first operator, printing its id and a generated password once; audit:list shows it', async () => {
    const c = await cli(['operators:create', '--email', 'First@Example.test', '--role', 'admin']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.out).toMatchObject({ success: true, id: expect.any(String), password: expect.stringMatching(/^\S{20,}$/) });
    const row = (await t.db.pool.query('SELECT email, role::text AS role, password_hash FROM operators WHERE id = $1', [c.out.id])).rows[0];
    expect(row).toMatchObject({ email: 'first@example.test', role: 'ADMIN' });
    expect(await bcrypt.compare(c.out.password, row.password_hash)).toBe(true);
    const given = await cli(['operators:create', '--email', 'second@example.test', '--role', 'auditor', '--password', 'a-long-given-password']);
    expect(given.code).toBe(0);
    expect(given.out.password).toBeUndefined();
    const list = await cli(['audit:list', '--object-id', c.out.id]);
    expect(list.code).toBe(0);
    // Issue 27: the CLI names the OS user who ran it, not the token it uses.
    expect(list.out.data).toEqual([expect.objectContaining({ actor: expect.stringMatching(/^cli:\S+$/), action: 'operator.create', object_id: c.out.id })]);
    expect(list.out.data[0].actor_id).toBe(list.out.data[0].actor);
    expect((await cli(['operators:create', '--email', 'x@example.test'])).code).toBe(2);
  });

  it('merchants:two-factor-reset clears the owner\'s or a member\'s TOTP (exit 0); an unknown member exits 1 with 404', async () => {
    const { merchant } = await t.app.services.merchants.create({ name: 'TF', email: 'cli-tf@example.test' });
    const { member, token } = await t.app.services.team.invite(merchant.id, { email: 'cli-tf-dev@example.test', role: 'developer' });
    await t.app.services.team.accept(token, 'member password 0123');
    await t.db.pool.query(`UPDATE merchants SET totp_secret_enc = 'x', totp_enabled_at = now(), recovery_code_hashes = '["h"]' WHERE id = $1`, [merchant.id]);
    await t.db.pool.query(`UPDATE merchant_users SET totp_secret_enc = 'x', totp_enabled_at = now(), recovery_code_hashes = '["h"]' WHERE id = $1`, [member.id]);
    const state = async () => [
      (await t.db.pool.query('SELECT totp_enabled_at IS NOT NULL AS on, recovery_code_hashes AS codes FROM merchants WHERE id = $1', [merchant.id])).rows[0],
      (await t.db.pool.query('SELECT totp_enabled_at IS NOT NULL AS on, recovery_code_hashes AS codes FROM merchant_users WHERE id = $1', [member.id])).rows[0],
    ];
    const nf = await cli(['merchants:two-factor-reset', merchant.id, 'nope', '--reason', 'id checked']);
    expect(nf.code).toBe(1);
    expect(nf.stderr).toContain('404');
    expect(await state()).toEqual([{ on: true, codes: ['h'] }, { on: true, codes: ['h'] }]);
    const mem = await cli(['merchants:two-factor-reset', merchant.id, member.id, '--reason', 'id checked']);
    expect(mem.code, mem.stderr).toBe(0);
    expect(mem.out).toEqual({ success: true, ok: true });
    expect(await state()).toEqual([{ on: true, codes: ['h'] }, { on: false, codes: [] }]);
    expect((await cli(['merchants:two-factor-reset', merchant.id, '--reason', 'id checked'])).code).toBe(0);
    expect(await state()).toEqual([{ on: false, codes: [] }, { on: false, codes: [] }]);
  });

  it('merchants:password-reset prints where the link went (masked), never a password (exit 0); an unknown merchant exits 1', async () => {
    const { merchant } = await t.app.services.merchants.create({ name: 'PR', email: 'cli-pr@example.test' });
    // In the production profile without SMTP_URL no link can go out (503, exit 1).
    cliProfile = 'production';
    try {
      const refused = await cli(['merchants:password-reset', merchant.id]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('503');
      process.env.SMTP_URL = 'smtp://127.0.0.1:9';
      const r = await cli(['merchants:password-reset', merchant.id]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.out).toEqual({ success: true, sent_to: 'c***@example.test' });
      expect((await cli(['merchants:password-reset', 'nope'])).code).toBe(1);
    } finally { delete process.env.SMTP_URL; cliProfile = 'sandbox'; }
  });

  it('events:list pages by --before-id <next_before_id>: 27 events by 5, newest first by number, each once (issue 30)', async () => {
    const { merchant } = await t.app.services.merchants.create({ name: 'Ev', email: 'cli-events@example.test' });
    await t.db.pool.query(`SELECT setval(pg_get_serial_sequence('outbox_events', 'id'), GREATEST(95, (SELECT max(id) FROM outbox_events)))`);
    for (let i = 0; i < 27; i++) await enqueueTestPostbacks(t, merchant.id, 'https://shop.example/result', 1, `cli-ev-${i}`);
    const expected = (await t.db.pool.query<{ id: string }>('SELECT e.id::text AS id FROM outbox_events e WHERE merchant_id = $1 ORDER BY e.id DESC', [merchant.id])).rows.map((r) => r.id);
    const seen: string[][] = [];
    let before: string | null = null;
    do {
      const r = await cli(['events:list', '--merchant-id', merchant.id, '--limit', '5', ...(before ? ['--before-id', before] : [])]);
      expect(r.code, r.stderr).toBe(0);
      seen.push(r.out.data.map((e: { id: string }) => e.id));
      before = r.out.next_before_id;
    } while (before !== null && seen.length < 20);
    expect(seen.map((p) => p.length)).toEqual([5, 5, 5, 5, 5, 2]);
    expect(seen.flat()).toEqual(expected);
  });

  it('payment capture / payment cancel settle a held two-stage payment as the operator API does: once, audited with the CLI user; a second capture exits 1 with 409', async () => {
    const m = await createMerchant(t, { merchant: { paymentCardPercent: '0', paymentCardFixed: '0' } });
    const held = async (amount: string) => {
      const b = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { shop_id: m.shopId, amount, capture: false } });
      expect(b.statusCode, b.body).toBe(200);
      const r = await payRequest(t, b.json().bill_id, cardForm());
      expect(r.json().status).toBe('PROCESS');
      return r.json().payment_id as string;
    };
    const row = async (id: string) => (await t.db.pool.query(
      `SELECT status::text, amount_received::text, failure_reason FROM payments WHERE id = $1`, [id])).rows[0];

    const a = await held('300.00');
    const c = await cli(['payment', 'capture', a, '--amount', '120.50']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.out).toEqual({ success: true, payment_id: a, status: 'SUCCESS', amount: '120.50' });
    expect(await row(a)).toMatchObject({ status: 'SUCCESS', amount_received: '120.50' });
    const again = await cli(['payment', 'capture', a, '--amount', '120.50']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('409');
    const credits = (await t.db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE ref_id = $1 AND kind = 'PAYMENT_CREDIT'`, [a])).rows[0].n;
    expect(credits).toBe(1);

    const b = await held('80.00');
    const x = await cli(['payment', 'cancel', b]);
    expect(x.code, x.stderr).toBe(0);
    expect(x.out).toMatchObject({ success: true, payment_id: b, status: 'FAIL' });
    expect(await row(b)).toMatchObject({ status: 'FAIL', failure_reason: 'canceled' });

    const audit = (await t.db.pool.query(
      `SELECT action, object_id, actor, after FROM audit_log WHERE object_id = ANY($1) ORDER BY at, id`, [[a, b]])).rows;
    expect(audit).toEqual([
      { action: 'payment.capture', object_id: a, actor: expect.stringMatching(/^cli:\S+$/), after: { merchant_id: m.merchantId, captured: '120.50' } },
      { action: 'payment.cancel', object_id: b, actor: expect.stringMatching(/^cli:\S+$/), after: expect.objectContaining({ merchant_id: m.merchantId }) },
    ]);
    expect((await cli(['payment', 'capture', 'unknown1'])).code).toBe(1);
  });

  it('an amount outside the one format (1e3, +10, 10.) exits 1 naming it, typed as a flag or in a request body; nothing is captured, adjusted or set (docs/adr/0077-one-amount-format.md)', async () => {
    const m = await createMerchant(t, { merchant: { paymentCardPercent: '0', paymentCardFixed: '0' } });
    const held = await heldPayment(t, m, '300.00');
    const state = async () => JSON.stringify((await t.db.pool.query(`SELECT
      (SELECT json_agg(json_build_array(status, capture_amount, amount_received)) FROM payments WHERE id = $1) p,
      (SELECT json_agg(b) FROM balances b WHERE merchant_id = $2) b, (SELECT count(*) FROM fx_rates) r,
      (SELECT payment_card_percent FROM merchants WHERE id = $2) f`, [held, m.merchantId])).rows[0]);
    const before = await state();
    for (const args of [
      ['payment', 'capture', held, '--amount', '1e3'], ['payment', 'capture', held, '--amount', '10.'],
      ['request', 'POST', `/payments/${held}/capture`, '{"amount":1e2}'],
      ['balance:adjust', m.merchantId, '--currency', 'RUB', '--amount', '+10', '--reason', 'x'],
      ['balance:adjust', m.merchantId, '--currency', 'RUB', '--amount', '1E2', '--reason', 'x'],
      ['rates:set', 'USD', '9e1'],
      ['merchants:update', m.merchantId, '--fee-payment-card-percent', '1e1'],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(JSON.stringify(r.out.errors), args.join(' ')).toMatch(/digits with an optional dot/);
    }
    expect(await state()).toBe(before);
  });

  it('rates:set and rates:delete change the operator rate', async () => {
    expect((await cli(['rates:set', 'EUR', '99.5'])).code).toBe(0);
    expect((await t.db.prisma.fxRate.findUniqueOrThrow({ where: { currency: 'EUR' } })).rubPerUnit.toString()).toBe('99.5');
    expect((await cli(['rates:delete', 'EUR'])).code).toBe(0);
    expect(await t.db.prisma.fxRate.findUnique({ where: { currency: 'EUR' } })).toBeNull();
  });

  it('ledger:verify exits 0 on balanced books and 1 when a balance drifts from its entries', async () => {
    const ok = await cli(['ledger:verify']);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatchObject({ ok: true, problems: [] });
    const m = await t.app.services.merchants.create({ name: 'D', email: 'drift@example.test' });
    await t.db.pool.query(`UPDATE balances SET available = available + 1 WHERE merchant_id = $1 AND currency = 'RUB'`, [m.merchant.id]);
    const bad = await cli(['ledger:verify']);
    expect(bad.code).toBe(1);
    expect(bad.out.problems).toHaveLength(1);
    expect(bad.out.problems[0]).toMatchObject({ type: 'balance_drift', merchant_id: m.merchant.id, currency: 'RUB' });
    const accounts = await cli(['ledger:accounts', '--currency', 'RUB', '--merchant_id', m.merchant.id]);
    expect(accounts.code).toBe(0);
    expect(accounts.out.accounts.map((a: { id: string }) => a.id).sort()).toEqual(
      ['available', 'hold', 'locked'].map((b) => `RUB:merchant:${m.merchant.id}:${b}`));
  });
});
