import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { enrolledOperator, moderatedPayout, type OperatorFixture } from './helpers.js';
import { CabinetClient, cabinetMerchant, signedIn } from '../cabinet/helpers.js';

/**
 * Words people read, over HTTP: the routing form saved unchanged keeps the profile's defaults,
 * the team invitation names the merchant that invites.
 */
let t: TestApp;
let admin: OperatorFixture;
let seq = 0;

beforeAll(async () => {
  t = await setupTestApp();
  admin = await enrolledOperator(t, 'admin');
});

afterAll(async () => { await t?.close(); });

const routingOf = async (id: string) => (await t.db.prisma.merchant.findUniqueOrThrow({ where: { id } })).routing;

describe('the routing form', () => {
  it('saving the form unchanged keeps every route a profile default (nothing stored); a changed route alone is stored', async () => {
    const m = await cabinetMerchant(t);
    const setup = `/operator/merchants/${m.merchantId}/setup`;
    const url = `/operator/merchants/${m.merchantId}/routing`;
    // What the form shows and sends back untouched: the sandbox profile's default on every route.
    const page = await admin.client.get(setup);
    expect(page.body).toContain('id="route-payment_card-note">Now: sandbox (the profile&#39;s default)');
    const unchanged = { 'routing.payment_card.0': 'sandbox', 'routing.payment_sbp.0': 'sandbox', 'routing.payout_card.0': 'sandbox', 'routing.payout_sbp.0': 'sandbox' };
    const saved = await admin.client.act(setup, url, unchanged);
    expect(saved.statusCode).toBe(303);
    expect(await routingOf(m.merchantId)).toEqual({});
    const after = await admin.client.get(setup);
    for (const r of ['payment_card', 'payment_sbp', 'payout_card', 'payout_sbp']) expect(after.body).toContain(`id="route-${r}-note">Now: sandbox (the profile&#39;s default)`);

    // One route changed (a second connector after the sandbox): only that one becomes explicit.
    await t.app.services.connectors.put(`sbx-${++seq}`, { kind: 'sandbox', mode: 'test', settings: {} });
    const changed = await admin.client.act(setup, url, { ...unchanged, 'routing.payment_sbp.1': `sbx-${seq}` });
    expect(changed.statusCode).toBe(303);
    expect(await routingOf(m.merchantId)).toEqual({ payment_sbp: ['sandbox', `sbx-${seq}`] });
  });
});

describe('the team invitation mail', () => {
  it('names the merchant that invites, from the cabinet and from the console, and the role in words', async () => {
    const m = await cabinetMerchant(t);
    const name = (await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).name;
    const owner = await signedIn(t, m);
    const page = await owner.get('/cabinet/team');
    const n = `${++seq}-${Date.now()}`;
    expect((await owner.post('/cabinet/team', { _csrf: CabinetClient.csrfOf(page.body), email: `dev-${n}@team.test`, role: 'developer' })).statusCode).toBe(200);
    const setup = `/operator/merchants/${m.merchantId}/setup`;
    expect((await admin.client.act(setup, `/operator/merchants/${m.merchantId}/owners`, { owner_email: `owner-${n}@team.test` })).statusCode).toBe(303);

    const mails = await t.app.services.mail.list();
    for (const [to, role] of [[`dev-${n}@team.test`, 'developer'], [`owner-${n}@team.test`, 'owner']] as const) {
      const mail = mails.find((x) => x.kind === 'team_invite' && x.to === to);
      expect(mail?.subject).toBe(`You were invited to the merchant cabinet of ${name}`);
      expect(mail?.text).toContain(`the merchant cabinet of ${name} with the role "${role}"`);
    }
  });
});

describe('the payout queue', () => {
  it('names each payout\'s merchant and says its status and account kind in words', async () => {
    const { merchantId, payoutId } = await moderatedPayout(t);
    const name = (await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: merchantId } })).name;
    const page = (await admin.client.get('/operator/payouts')).body;
    const row = new RegExp(`<tr data-payout="${payoutId}"[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
    expect(row).toContain(`data-testid="payout-merchant">${name}</a>`);
    expect(row).toContain('>Waiting for moderation</span>');
    expect(row).toContain('>Card</span>');
    expect(row).not.toMatch(/>MODERATING</);
    expect(page).toContain('<option value="MODERATING" selected>Waiting for moderation</option>');
    // Filtered by one merchant: its name is said under the id.
    expect((await admin.client.get(`/operator/payouts?merchant_id=${merchantId}`)).body).toContain(`id="merchant-name">${name}</p>`);
  });
});
