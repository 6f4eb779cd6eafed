import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decrypt } from '../../src/lib/crypto.js';
import { SANDBOX_CAPABILITIES, SandboxConnector } from '../../src/domain/providers/connectors/sandbox/client.js';
import type { CreatePayout, OperationOutcome } from '../../src/domain/providers/connector.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import type { MerchantFixture } from '../factories/merchant.js';
import { PASSWORD } from '../cabinet/helpers.js';
import { admin, ledgerOk, one, routedMerchant, SIZES, startE2E, until, type E2E } from './e2e-service.js';

/**
 * Issue 29 item 4 through the whole service (workers running) against two YooKassa payout
 * gateways emulated on 127.0.0.1: `yk-nopci` (no PCI DSS: payout_token only, as YooKassa
 * requires) and `yk-pci` (its owner certified, payout_pci_dss on). A card number never reaches a
 * gateway without PCI DSS; a card added through YooKassa's payout widget in the cabinet is kept
 * as YooKassa's token and paid by it (docs/adr/0070).
 */
const ART = 'test/artifacts/payout-token';
const NOPCI = 'yk-nopci';
const PCI = 'yk-pci';
const PAN = '5555555555554477';

let e: E2E;
let ykA: YooKassaEmulator;
let ykB: YooKassaEmulator;

beforeAll(async () => {
  e = await startE2E(ART);
  ykA = await YooKassaEmulator.start({ notifyUrl: `${e.base}/providers/${NOPCI}/notifications`, retryBaseMs: 50 });
  ykB = await YooKassaEmulator.start({ notifyUrl: `${e.base}/providers/${PCI}/notifications`, retryBaseMs: 50, payoutPciDss: true });
  for (const [name, yk, pci] of [[NOPCI, ykA, false], [PCI, ykB, true]] as const) {
    const r = await admin(e, 'PUT', `/connectors/${name}`, {
      kind: 'yookassa', mode: 'test',
      settings: {
        base_url: yk.apiUrl, shop_id: yk.shopId, secret_key: yk.secretKey, allowed_ips: '127.0.0.1', payout_agent_id: yk.payoutAgentId, payout_secret_key: yk.payoutSecretKey,
        payout_widget_url: `${yk.baseUrl}/payouts-data/widget.js`, ...(pci ? { payout_pci_dss: true } : {}),
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});

afterAll(async () => {
  await ykA?.stop();
  await ykB?.stop();
  await e?.close();
});

const payoutPosts = (yk: YooKassaEmulator) => yk.requests.filter((x) => x.method === 'POST' && x.path === '/v3/payouts').length;

async function funded(routing: Record<string, string[]>): Promise<MerchantFixture> {
  const m = await routedMerchant(e, routing);
  expect((await admin(e, 'POST', `/merchants/${m.merchantId}/balance-adjustments`, { currency: 'RUB', amount: '10000.00', reason: 'funds' })).status).toBe(201);
  return m;
}

const route = async (m: MerchantFixture, payout_card: string[]) =>
  expect((await admin(e, 'PATCH', `/merchants/${m.merchantId}`, { routing: { payout_card } })).status).toBe(200);

async function personal(m: MerchantFixture, accountId: string, amount = '100.00') {
  const r = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/personal/create', headers: m.auth, payload: { amount, payout_account_id: accountId } });
  expect(r.statusCode, r.body).toBe(200);
  const id = (r.json().data as { id: string }[])[0]!.id;
  return until(`payout ${id} final`, async () => {
    const row = await one(e, `SELECT id, status::text, connector, provider_ref, failure_reason FROM payouts WHERE id = $1`, [id]);
    return ['SUCCESS', 'FAIL', 'ERROR'].includes(row.status) ? row : null;
  });
}

/** Every column of a payout account as text: what a database dump of it would show. */
const accountRow = (id: string) => one<{ row: string; identifier_enc: string }>(e, `SELECT row_to_json(a)::text AS row, identifier_enc FROM payout_accounts a WHERE id = $1`, [id]);

describe('a card number and a YooKassa gateway without PCI DSS', () => {
  it('a raw-PAN payout routed only to a non-PCI gateway is refused at creation (400 direction_not_available): no payout, no ledger move, nothing sent; with the sandbox next on the route it is paid there', async () => {
    // A card account stored by number while the merchant paid out through the sandbox.
    const m = await funded({ payout_card: ['sandbox'] });
    const acc = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', identifier: PAN, card_holder: 'IVAN IVANOV' });
    expect(acc.status, JSON.stringify(acc.body)).toBe(201);
    await route(m, [NOPCI]);
    const before = ykA.requests.length;
    const transfers = async () => (await one<{ n: number }>(e, `SELECT count(*)::int AS n FROM ledger_transfers WHERE merchant_id = $1`, [m.merchantId])).n;
    const moves = await transfers();

    const only = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/personal/create', headers: m.auth, payload: { amount: '100.00', payout_account_id: acc.body.id } });
    expect(only.statusCode, only.body).toBe(400);
    expect(only.json()).toEqual({ success: false, message: 'api:error.direction_not_available' });

    // The regular payout names a card number too: refused the same way.
    const reg = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload: {
      amount: '50.00', currency: 'RUB', account_type: 'credit_card', account_identifier: PAN, card_holder: 'IVAN IVANOV',
    } });
    expect(reg.statusCode, reg.body).toBe(400);
    expect(reg.json()).toEqual({ success: false, message: 'api:error.direction_not_available' });

    expect(await one(e, `SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1`, [m.merchantId])).toEqual({ n: 0 });
    expect(await one(e, `SELECT count(*)::int AS n FROM payout_requests WHERE merchant_id = $1`, [m.merchantId])).toEqual({ n: 0 });
    expect(await transfers()).toBe(moves);
    expect(ykA.requests.length).toBe(before);
    const bal0 = await e.t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: m.auth });
    expect(bal0.json().balances.find((b: { currency: string }) => b.currency === 'RUB').balance_available).toBe('10000.00000000');

    // A connector further on the route that takes numbers (the sandbox) makes it payable there.
    await route(m, [NOPCI, 'sandbox']);
    expect(await personal(m, acc.body.id)).toMatchObject({ status: 'SUCCESS', connector: 'sandbox' });
    expect(payoutPosts(ykA)).toBe(0);
    const bal = await e.t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: m.auth });
    // 10000 - the sandbox payout; no fees configured.
    expect(bal.json().balances.find((b: { currency: string }) => b.currency === 'RUB').balance_available).toBe('9900.00000000');
    await ledgerOk(e);
  });

  it('a tokenized card routed only to connectors that cannot use the token is refused at creation (400 direction_not_available), nothing sent', async () => {
    const m = await funded({ payout_card: [NOPCI] });
    const syn = ykA.tokenize('4242424242424242');
    const acc = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', payout_token: syn.payout_token, first6: '424242', last4: '4242' });
    expect(acc.status, JSON.stringify(acc.body)).toBe(201);
    // A card-payout gateway that takes card numbers but no YooKassa tokens (none ships today:
    // a sandbox stand-in that says so and counts what it is asked).
    const asked: string[] = [];
    expect((await admin(e, 'PUT', '/connectors/sbx-numbers', { kind: 'sandbox', mode: 'test', settings: {} })).status).toBe(201);
    e.t.app.services.connectors.override(new class extends SandboxConnector {
      override readonly capabilities = { ...SANDBOX_CAPABILITIES, payoutCardBy: { number: true, tokens: [] } };
      override createPayout(p: CreatePayout): Promise<OperationOutcome> { asked.push(p.payoutId); return super.createPayout(p); }
    }('sbx-numbers'));
    await route(m, ['sbx-numbers']);
    const before = ykA.requests.length;
    const res = await e.t.app.inject({ method: 'POST', url: '/api/v1/payout/personal/create', headers: m.auth, payload: { amount: '100.00', payout_account_id: acc.body.id } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'api:error.direction_not_available' });
    expect(await one(e, `SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1`, [m.merchantId])).toEqual({ n: 0 });
    expect(ykA.requests.length).toBe(before);
    expect(asked).toEqual([]);
  });

  it('no new card account is kept by number when nothing on the merchant\'s route may take one', async () => {
    const m = await funded({ payout_card: [NOPCI] });
    const r = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', identifier: PAN, card_holder: 'IVAN IVANOV' });
    expect(r.status).toBe(422);
    expect(r.body.errors.identifier[0]).toMatch(/payout widget/);
    expect(await one(e, `SELECT count(*)::int AS n FROM payout_accounts WHERE merchant_id = $1`, [m.merchantId])).toEqual({ n: 0 });
  });

  it('with payout_pci_dss true the card number is sent, once, and paid', async () => {
    const m = await funded({ payout_card: [PCI] });
    const acc = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', identifier: PAN, card_holder: 'IVAN IVANOV' });
    expect(acc.status).toBe(201);
    const row = await personal(m, acc.body.id);
    expect(row).toMatchObject({ status: 'SUCCESS', connector: PCI });
    const made = [...ykB.payouts.values()].filter((x) => x.metadata.payout_id === row.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ id: row.provider_ref, _by: 'card_number', payout_destination: { card: { first6: '555555', last4: '4477' } } });
  });
});

describe('a card kept as YooKassa\'s payout_token', () => {
  it('the operator API adds one from the widget\'s answer (no card number stored) and it pays out through YooKassa with payout_token, once; the sandbox takes it too', async () => {
    const m = await funded({ payout_card: [NOPCI] });
    const syn = ykA.tokenize('4242424242424242');
    const bad = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', payout_token: syn.payout_token, identifier: '4242424242424242', first6: '424242', last4: '4242' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors)).toEqual(['identifier']);
    const noMask = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'card', payout_token: syn.payout_token });
    expect(Object.keys(noMask.body.errors).sort()).toEqual(['first6', 'last4']);
    const sbp = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, { type: 'sbp', payout_token: syn.payout_token, identifier: '+79161234567', bank_member_id: 100000000111 });
    expect(sbp.status).toBe(422);
    expect(sbp.body.errors.payout_token).toBeDefined();

    const acc = await admin(e, 'POST', `/merchants/${m.merchantId}/payout-accounts`, {
      type: 'card', payout_token: syn.payout_token, first6: syn.first6, last4: syn.last4, card_type: syn.card_type, issuer_name: syn.issuer_name,
    });
    expect(acc.status, JSON.stringify(acc.body)).toBe(201);
    expect(acc.body).toMatchObject({ type: 'card', identifier_masked: '424242******4242', token_provider: 'yookassa', card_type: 'Visa', card_issuer: 'EMULATOR BANK', card_holder: null });
    expect(JSON.stringify(acc.body)).not.toContain(syn.payout_token);
    const stored = await accountRow(acc.body.id);
    expect(stored.row).not.toContain('4242424242424242');
    expect(decrypt(e.t.config.tokenEncryptionKey, stored.identifier_enc)).toBe(`token:yookassa:${syn.payout_token}`);

    const row = await personal(m, acc.body.id);
    expect(row).toMatchObject({ status: 'SUCCESS', connector: NOPCI });
    const made = [...ykA.payouts.values()].filter((x) => x.metadata.payout_id === row.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ id: row.provider_ref, _by: 'payout_token', payout_destination: { card: { first6: '424242', last4: '4242' } } });
    expect(JSON.stringify(await one(e, `SELECT row_to_json(p)::text AS row FROM payouts p WHERE id = $1`, [row.id]))).not.toContain('4242424242424242');

    await route(m, ['sandbox']);
    expect(await personal(m, acc.body.id)).toMatchObject({ status: 'SUCCESS', connector: 'sandbox' });
    await ledgerOk(e);
  });

  it('a tokenized account created through the cabinet\'s YooKassa widget page (Chromium) stores no card number and pays out through YooKassa with payout_token exactly once', async () => {
    const m = await funded({ payout_card: [NOPCI] });
    await e.t.app.services.merchants.setPassword(m.merchantId, PASSWORD);
    const { email } = await one<{ email: string }>(e, `SELECT email FROM merchants WHERE id = $1`, [m.merchantId]);
    const ctx = await e.browser.newContext({ viewport: SIZES.desktop, locale: 'ru-RU' });
    const page = await ctx.newPage();
    const cspErrors: string[] = [];
    page.on('console', (msg) => { if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text()); });
    await page.goto(`${e.base}/cabinet/login?lang=ru`);
    await page.locator('input[name="email"]').fill(email);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('form button[type="submit"]').click();
    await page.waitForURL(`${e.base}/cabinet`);

    await page.goto(`${e.base}/cabinet/accounts?lang=ru`);
    await page.getByTestId('payout-widget').waitFor();
    // Nothing on this route takes a card number: the page offers no field for one.
    await page.getByTestId('numbers-off').waitFor();
    expect(await page.locator('#type-card').count()).toBe(0);
    const widget = page.frameLocator('#payout-widget-form iframe');
    await widget.locator('#card_number').waitFor();
    await page.screenshot({ path: `${ART}/cabinet-widget-desktop.png`, fullPage: true });
    await page.setViewportSize(SIZES.phone);
    await page.screenshot({ path: `${ART}/cabinet-widget-phone.png`, fullPage: true });
    await page.setViewportSize(SIZES.desktop);
    // The card typed into YooKassa's form (its iframe, its origin): the page only ever gets the synonym.
    await widget.locator('#card_number').fill('5555 5555 5555 4444');
    await widget.locator('button[type="submit"]').click();
    await page.waitForURL(/\/cabinet\/accounts\?ok=acc\.created$/);
    await page.getByTestId('tokenized').waitFor();
    await page.screenshot({ path: `${ART}/cabinet-widget-added-desktop.png`, fullPage: true });
    expect(cspErrors).toEqual([]);
    await ctx.close();

    const acc = await one<{ id: string; identifier_masked: string; token_provider: string; card_type: string }>(e,
      `SELECT id, identifier_masked, token_provider, card_type FROM payout_accounts WHERE merchant_id = $1`, [m.merchantId]);
    expect(acc).toMatchObject({ identifier_masked: '555555******4444', token_provider: 'yookassa', card_type: 'MasterCard' });
    const stored = await accountRow(acc.id);
    expect(stored.row).not.toContain('5555555555554444');
    const held = decrypt(e.t.config.tokenEncryptionKey, stored.identifier_enc);
    expect(held).toMatch(/^token:yookassa:pt-/);
    expect(ykA.payoutTokens.get(held.slice('token:yookassa:'.length))!.number).toBe('5555555555554444');
    // The audit trail names the account, never the card.
    const audit = (await e.t.db.pool.query(`SELECT action, after FROM audit_log WHERE object_type = 'payout_account' AND object_id = $1`, [acc.id])).rows;
    expect(audit).toMatchObject([{ action: 'payout_account.create', after: { identifier_masked: '555555******4444', card_type: 'MasterCard' } }]);
    expect(JSON.stringify(audit)).not.toContain('5555555555554444');

    const before = payoutPosts(ykA);
    const row = await personal(m, acc.id, '250.00');
    expect(row).toMatchObject({ status: 'SUCCESS', connector: NOPCI });
    expect(payoutPosts(ykA)).toBe(before + 1);
    const made = [...ykA.payouts.values()].filter((x) => x.metadata.payout_id === row.id);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ id: row.provider_ref, _by: 'payout_token', amount: { value: '250.00' }, payout_destination: { card: { first6: '555555', last4: '4444' } } });
    await ledgerOk(e);
  });
});
