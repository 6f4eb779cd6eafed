import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient, enrolledOperator, type OperatorFixture } from './helpers.js';
import { CabinetClient, cabinetMerchant, signedIn, teamMember } from '../cabinet/helpers.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';
import { TBankEmulator } from '../emulators/tbank.js';

/**
 * Issue 30 item 3 over HTTP: the console's onboarding forms (new merchant with its owner and
 * first shop, shops, owners, routing, connectors) and the cabinet's new shop: their validation,
 * their role refusals, their audit entries; secrets never rendered back.
 */
let t: TestApp;
let admin: OperatorFixture;
let yk: YooKassaEmulator;
let tb: TBankEmulator;
let seq = 0;

beforeAll(async () => {
  t = await setupTestApp();
  admin = await enrolledOperator(t, 'admin');
  yk = await YooKassaEmulator.start({ shopId: '500100', secretKey: 'test_ykSecretValue_0123' });
  tb = await TBankEmulator.start({ terminalKey: 'TerminalDEMO', password: 'tbankSecretPassword9' });
});

afterAll(async () => {
  await yk?.stop();
  await tb?.stop();
  await t?.close();
});

const uniq = () => `${++seq}-${Date.now()}`;
const audit = async (action: string, objectId: string) =>
  (await t.db.pool.query<{ actor: string; before: unknown; after: Record<string, unknown> }>(
    'SELECT actor, before, after FROM audit_log WHERE action = $1 AND object_id = $2 ORDER BY id', [action, objectId],
  )).rows;

async function onboard(c: ConsoleClient, fields: Record<string, string>) {
  return c.act('/operator/merchants/new', '/operator/merchants/new', fields);
}

describe('New merchant', () => {
  it('creates the merchant, mails its owner an invitation and creates its first shop, each step audited; the owner signs in and sees the shop', async () => {
    const n = uniq();
    const r = await onboard(admin.client, { name: `Flowers ${n}`, email: `contact-${n}@flowers.test`, owner_email: `Owner-${n}@Flowers.test`, shop_name: 'Flowers online', shop_currency: 'RUB' });
    expect(r.statusCode).toBe(200);
    const m = await t.db.prisma.merchant.findUniqueOrThrow({ where: { email: `contact-${n}@flowers.test` } });
    expect(r.body).toContain(`Invitation mailed to <strong>owner-${n}@flowers.test</strong>`);
    // The API token, once.
    expect(r.body).toMatch(/id="secret" readonly value="[^"]{20,}"/);
    const members = await t.app.services.team.list(m.id);
    expect(members).toMatchObject([{ email: `owner-${n}@flowers.test`, role: 'owner', state: 'invited' }]);
    const shops = await t.app.services.shops.list(m.id);
    expect(shops).toMatchObject([{ name: 'Flowers online', defaultCurrency: 'RUB' }]);

    const actor = `operator:${admin.id}`;
    expect(await audit('merchant.create', m.id)).toMatchObject([{ actor }]);
    expect(await audit('merchant_user.invite', members[0]!.id)).toMatchObject([{ actor, after: { role: 'owner', merchant_id: m.id } }]);
    expect(await audit('shop.create', shops[0]!.id)).toMatchObject([{ actor, after: { name: 'Flowers online', merchant_id: m.id } }]);
    // The console's audit page shows them.
    const page = await admin.client.get(`/operator/audit?object_id=${shops[0]!.id}`);
    expect(page.body).toContain('shop.create');

    // The owner's side: the mailed link, a password, the cabinet with the shop in the new bill form.
    const mail = (await t.app.services.mail.list()).find((x) => x.kind === 'team_invite' && x.to === `owner-${n}@flowers.test`);
    const link = /\/cabinet\/team\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0];
    expect(link).toBeDefined();
    const owner = new CabinetClient(t);
    const form = await owner.get(link!);
    expect(form.statusCode).toBe(200);
    const accepted = await owner.post(link!, { _csrf: CabinetClient.csrfOf(form.body), password: 'owner chosen password 1' });
    expect(accepted.statusCode).toBe(303);
    const bill = await owner.get('/cabinet/bills/new');
    expect(bill.statusCode).toBe(200);
    expect(bill.body).toContain('Flowers online');
  });

  it('a sole trader: the owner\'s address may be the contact email; the merchant\'s own login is then mailed a link to set its password, which opens the cabinet', async () => {
    const n = uniq();
    const r = await onboard(admin.client, { name: `Sole ${n}`, email: `sole-${n}@trader.test`, owner_email: `Sole-${n}@Trader.test`, shop_name: 'Sole shop', shop_currency: 'RUB' });
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain(`Invitation mailed to <strong>sole-${n}@trader.test</strong>`);
    const m = await t.db.prisma.merchant.findUniqueOrThrow({ where: { email: `sole-${n}@trader.test` } });
    // No team member: the merchant's own login is the owner.
    expect(await t.db.prisma.merchantUser.count({ where: { merchantId: m.id } })).toBe(0);
    expect(await audit('merchant.password.invite', m.id)).toMatchObject([{ actor: `operator:${admin.id}`, after: { link_sent_to: `sole-${n}@trader.test`, valid_days: 7 } }]);
    const mail = (await t.app.services.mail.list()).find((x) => x.to === `sole-${n}@trader.test`);
    expect(mail?.text).toContain('for 7 days');
    // The welcome names the merchant (whose cabinet it is), in its subject and its text.
    expect(mail?.subject).toBe(`Your merchant cabinet of Sole ${n} is ready`);
    expect(mail?.text).toContain(`The merchant cabinet of Sole ${n} was opened for you`);
    const link = /\/cabinet\/password-reset\?token=[\w-]+/.exec(mail?.text ?? '')?.[0];
    expect(link).toBeDefined();
    const valid = (await t.db.pool.query(`SELECT extract(epoch FROM expires_at - created_at)::int AS s FROM cabinet_password_resets WHERE merchant_id = $1`, [m.id])).rows;
    expect(valid).toEqual([{ s: 7 * 24 * 3600 }]);
    const owner = new CabinetClient(t);
    const form = await owner.get(link!);
    expect(form.statusCode).toBe(200);
    const token = /name="token" value="([^"]+)"/.exec(form.body)![1]!;
    expect((await owner.post('/cabinet/password-reset', { _csrf: CabinetClient.csrfOf(form.body), token, password: 'sole trader password 1' })).statusCode).toBe(303);
    expect((await owner.login(`sole-${n}@trader.test`, 'sole trader password 1')).headers.location).toBe('/cabinet');
    expect((await owner.get('/cabinet/bills/new')).body).toContain('Sole shop');
  });

  it('refuses bad input with 422 on each field and creates nothing', async () => {
    const n = uniq();
    const taken = await cabinetMerchant(t);
    const before = await t.db.prisma.merchant.count();
    // The summary names each field in words, not by its form name.
    const WORDS: Record<string, string> = { name: 'Name', email: 'Contact email', owner_email: 'Owner&#39;s email', shop_name: 'First shop&#39;s name', shop_currency: 'Currency' };
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ name: '', email: `a-${n}@x.test`, owner_email: `b-${n}@x.test`, shop_name: 'S' }, 'name', /Required/],
      [{ name: 'N', email: 'not-an-email', owner_email: `b-${n}@x.test`, shop_name: 'S' }, 'email', /email address/],
      [{ name: 'N', email: `a-${n}@x.test`, owner_email: taken.email, shop_name: 'S' }, 'owner_email', /taken/],
      [{ name: 'N', email: taken.email, owner_email: `b-${n}@x.test`, shop_name: 'S' }, 'email', /taken/],
      [{ name: 'N', email: `a-${n}@x.test`, owner_email: `b-${n}@x.test`, shop_name: '' }, 'shop_name', /Required/],
      [{ name: 'N', email: `a-${n}@x.test`, owner_email: `b-${n}@x.test`, shop_name: 'S', shop_currency: 'XXX' }, 'shop_currency', /One of RUB/],
    ];
    for (const [fields, field, message] of cases) {
      const r = await onboard(admin.client, fields);
      expect(r.statusCode, field).toBe(422);
      expect(r.body).toMatch(new RegExp(`<strong>${WORDS[field]}</strong>: [^<]*${message.source}`));
    }
    expect(await t.db.prisma.merchant.count()).toBe(before);
    expect(await t.db.prisma.merchantUser.count({ where: { email: `b-${n}@x.test` } })).toBe(0);
  });

  it('the old merchant-only POST /operator/merchants is gone (404, nothing created): onboarding is /operator/merchants/new', async () => {
    const n = uniq();
    const before = await t.db.prisma.merchant.count();
    const r = await admin.client.act('/operator/merchants', '/operator/merchants', { name: `Old ${n}`, email: `old-${n}@shop.test` });
    expect(r.statusCode).toBe(404);
    expect(await t.db.prisma.merchant.count()).toBe(before);
    expect((await admin.client.get('/operator/merchants')).body).not.toMatch(/<form[^>]*method="post"[^>]*action="\/operator\/merchants"/);
  });
});

describe('setup page: owners, shops, routing', () => {
  it('creates a shop and invites another owner, audited; refuses an empty shop name and a taken address', async () => {
    const m = await cabinetMerchant(t);
    const setup = `/operator/merchants/${m.merchantId}/setup`;
    const shop = await admin.client.act(setup, `/operator/merchants/${m.merchantId}/shops`, { shop_name: 'Second shop', shop_currency: 'EUR' });
    expect(shop.statusCode).toBe(303);
    const created = (await t.app.services.shops.list(m.merchantId)).find((s) => s.name === 'Second shop');
    expect(created?.defaultCurrency).toBe('EUR');
    expect(await audit('shop.create', created!.id)).toHaveLength(1);
    const empty = await admin.client.act(setup, `/operator/merchants/${m.merchantId}/shops`, { shop_name: '  ' });
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toContain('aria-invalid="true"');

    const n = uniq();
    const inv = await admin.client.act(setup, `/operator/merchants/${m.merchantId}/owners`, { owner_email: `second-${n}@owner.test` });
    expect(inv.statusCode).toBe(303);
    expect((await t.app.services.team.list(m.merchantId)).map((x) => x.email)).toContain(`second-${n}@owner.test`);
    const again = await admin.client.act(setup, `/operator/merchants/${m.merchantId}/owners`, { owner_email: m.email });
    expect(again.statusCode).toBe(422);
    expect(again.body).toMatch(/already been taken/);
  });

  it('routing: the API\'s rules refuse with the route named (unknown, twice, a kind that cannot take it), nothing stored; a valid order is stored and audited', async () => {
    const m = await cabinetMerchant(t);
    const setup = `/operator/merchants/${m.merchantId}/setup`;
    const url = `/operator/merchants/${m.merchantId}/routing`;
    await t.app.services.connectors.put(`tb-${seq}`, { kind: 'tbank', mode: 'test', settings: { terminal_key: 'T', password: 'p', base_url: tb.apiUrl } });
    const bad: [Record<string, string>, RegExp][] = [
      [{ 'routing.payment_card.0': 'nope' }, /Card payments<\/strong>: Unknown connector nope/],
      [{ 'routing.payment_card.0': 'sandbox', 'routing.payment_card.1': 'sandbox' }, /Card payments<\/strong>: A connector may appear once/],
      [{ 'routing.payout_card.0': `tb-${seq}` }, /Card payouts<\/strong>: Connector tb-\d+ \(tbank\) cannot take payout_card/],
      [{}, /Choose at least one connector/],
    ];
    for (const [fields, message] of bad) {
      const r = await admin.client.act(setup, url, fields);
      expect(r.statusCode).toBe(422);
      expect(r.body).toMatch(message);
    }
    expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).routing).toEqual({});
    const ok = await admin.client.act(setup, url, { 'routing.payment_card.0': `tb-${seq}`, 'routing.payment_card.1': 'sandbox' });
    expect(ok.statusCode).toBe(303);
    expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).routing).toMatchObject({ payment_card: [`tb-${seq}`, 'sandbox'] });
    const entries = await audit('merchant.update', m.merchantId);
    expect(JSON.stringify(entries.at(-1)!.after)).toContain(`tb-${seq}`);
    // The page shows the stored order selected.
    const page = await admin.client.get(setup);
    expect(page.body).toMatch(new RegExp(`<option value="tb-${seq}" selected>`));
  });
});

describe('connectors', () => {
  const ykSettings = (name: string, secret = 'test_ykSecretValue_0123') => ({
    kind: 'yookassa', name, mode: 'test', enabled: 'true', 'settings.shop_id': '500100', 'settings.secret_key': secret, 'settings.base_url': yk.apiUrl,
  });

  it('a YooKassa connector: its secret is never rendered back (shown as set), blank keeps it, test connection reads GET /me; every step audited', async () => {
    const name = `yk-${uniq()}`.slice(0, 40);
    const created = await admin.client.act('/operator/connectors/new?kind=yookassa', '/operator/connectors/new', ykSettings(name));
    expect(created.statusCode).toBe(303);
    const page = await admin.client.get(`/operator/connectors/${name}`);
    expect(page.body).not.toContain('test_ykSecretValue_0123');
    expect(page.body).toMatch(/data-testid="secret-state-secret_key">set</);
    expect(page.body).toMatch(/data-testid="secret-state-payout_secret_key">not set</);

    const test1 = await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/test`);
    expect(test1.statusCode).toBe(200);
    expect(test1.body).toMatch(/Connection works\.<\/strong> YooKassa accepted the shop&#39;s credentials \(account 500100, a test shop\)/);
    expect(test1.body).not.toContain('test_ykSecretValue_0123');

    // A change with the secret left blank keeps it (the test still passes); the audit names no secret changed.
    const kept = await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}`, { mode: 'test', 'settings.shop_id': '500100', 'settings.base_url': yk.apiUrl, 'settings.allowed_ips': '127.0.0.1' });
    expect(kept.statusCode).toBe(303);
    expect((await t.app.services.connectors.find(name))!.settings).toMatchObject({ allowed_ips: '127.0.0.1', secret_key: '********' });
    const test2 = await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/test`);
    expect(test2.body).toContain('Connection works.');

    // A wrong key: the provider's refusal is the answer.
    await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}`, { mode: 'test', 'settings.shop_id': '500100', 'settings.secret_key': 'test_wrong', 'settings.base_url': yk.apiUrl });
    const test3 = await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/test`);
    expect(test3.body).toMatch(/Connection failed\.<\/strong> YooKassa answered HTTP 401 invalid_credentials/);
    expect(yk.requests.filter((x) => x.path === '/v3/me').map((x) => x.status)).toEqual([200, 200, 401]);

    const create = await audit('connector.create', name);
    expect(create).toMatchObject([{ actor: `operator:${admin.id}`, after: { credentials_set: ['secret_key'] } }]);
    const updates = await audit('connector.update', name);
    expect(updates.map((u) => u.after.credentials_changed)).toEqual([[], ['secret_key']]);
    expect((await audit('connector.test', name)).map((x) => x.after.ok)).toEqual([true, true, false]);
    const all = JSON.stringify([create, updates]);
    expect(all).not.toContain('test_ykSecretValue_0123');
    expect(all).not.toContain('test_wrong');
  });

  it('a T-Bank connector\'s test connection is a CheckOrder: accepted with the right password, refused with a wrong one', async () => {
    const name = `tb-${uniq()}`.slice(0, 40);
    const fields = { kind: 'tbank', name, mode: 'test', enabled: 'true', 'settings.terminal_key': 'TerminalDEMO', 'settings.password': 'tbankSecretPassword9', 'settings.base_url': tb.apiUrl };
    expect((await admin.client.act('/operator/connectors/new?kind=tbank', '/operator/connectors/new', fields)).statusCode).toBe(303);
    const ok = await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/test`);
    expect(ok.body).toContain('T-Bank accepted the terminal key and the password.');
    expect(ok.body).not.toContain('tbankSecretPassword9');
    await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}`, { mode: 'test', 'settings.terminal_key': 'TerminalDEMO', 'settings.password': 'wrong-password', 'settings.base_url': tb.apiUrl });
    const bad = await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/test`);
    expect(bad.body).toMatch(/Connection failed\.<\/strong> T-Bank refused: error 204/);
  });

  it('the create form refuses with 422 per field (required settings, a bad URL, a taken name, a live sandbox) and does not echo a typed secret', async () => {
    const name = `yk-${uniq()}`.slice(0, 40);
    const missing = await admin.client.act('/operator/connectors/new?kind=yookassa', '/operator/connectors/new', { kind: 'yookassa', name, mode: 'test', 'settings.secret_key': 'typed-secret-value', 'settings.base_url': 'ftp://x' });
    expect(missing.statusCode).toBe(422);
    expect(missing.body).toContain('The shop_id setting is required for yookassa.');
    expect(missing.body).toContain('Must be an http(s) URL.');
    expect(missing.body).not.toContain('typed-secret-value');
    const taken = await admin.client.act('/operator/connectors/new?kind=sandbox', '/operator/connectors/new', { kind: 'sandbox', name: 'sandbox', mode: 'test' });
    expect(taken.statusCode).toBe(422);
    expect(taken.body).toContain('A connector of this name exists already.');
    const live = await admin.client.act('/operator/connectors/new?kind=sandbox', '/operator/connectors/new', { kind: 'sandbox', name: `sbx-${seq}`, mode: 'live' });
    expect(live.statusCode).toBe(422);
    expect(live.body).toContain('A sandbox connector is a test instrument');
    expect(await t.app.services.connectors.find(name)).toBeNull();
  });

  it('disable and enable, audited', async () => {
    const name = `sbx-${uniq()}`.slice(0, 40);
    expect((await admin.client.act('/operator/connectors/new?kind=sandbox', '/operator/connectors/new', { kind: 'sandbox', name, mode: 'test', enabled: 'true' })).statusCode).toBe(303);
    const off = await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/enabled`, { enabled: 'false' });
    expect(off.statusCode).toBe(303);
    expect((await t.app.services.connectors.find(name))!.enabled).toBe(false);
    await admin.client.act(`/operator/connectors/${name}`, `/operator/connectors/${name}/enabled`, { enabled: 'true' });
    expect((await t.app.services.connectors.find(name))!.enabled).toBe(true);
    expect((await audit('connector.disable', name))).toHaveLength(1);
    expect((await audit('connector.enable', name))).toHaveLength(1);
  });
});

describe('roles', () => {
  it.each(['support', 'auditor', 'finance'] as const)('%s sees no onboarding, connector or routing form and is refused (403) on submit; nothing changes', async (role) => {
    const op = await enrolledOperator(t, role);
    const m = await cabinetMerchant(t);
    const list = await op.client.get('/operator/merchants');
    expect(list.body).not.toContain('/operator/merchants/new');
    expect((await op.client.get('/operator/merchants/new')).statusCode).toBe(403);
    await t.db.prisma.shop.update({ where: { id: m.shopId }, data: { fiscalization: { enabled: true, tax_system_code: 1, vat_code: 11, payment_subject: 'commodity', payment_mode: 'full_payment', ffd_version: '1.2' } } });
    const setup = await op.client.get(`/operator/merchants/${m.merchantId}/setup`);
    expect(setup.statusCode).toBe(200);
    // Each shop's receipts in words (docs/connectors/fiscal.md).
    expect(setup.body).toContain('on: General (OSN), VAT 22%, FFD 1.2');
    expect(setup.body).not.toMatch(/action="\/operator\/merchants\/[^"]+\/(shops|owners|routing)"/);
    const connectors = await op.client.get('/operator/connectors');
    expect(connectors.body).not.toContain('/operator/connectors/new');
    const sandbox = await op.client.get('/operator/connectors/sandbox');
    expect(sandbox.statusCode).toBe(200);
    expect(sandbox.body).not.toContain('Test connection</button>');
    expect(sandbox.body).not.toContain('id="connector-edit"');

    const posts: [string, Record<string, string>][] = [
      ['/operator/merchants/new', { name: 'X', email: `x-${uniq()}@x.test`, owner_email: `y-${seq}@x.test`, shop_name: 'S' }],
      [`/operator/merchants/${m.merchantId}/shops`, { shop_name: 'Refused shop' }],
      [`/operator/merchants/${m.merchantId}/owners`, { owner_email: `z-${seq}@x.test` }],
      [`/operator/merchants/${m.merchantId}/routing`, { 'routing.payment_card.0': 'sandbox' }],
      ['/operator/connectors/new', { kind: 'sandbox', name: `refused-${seq}`, mode: 'test' }],
      ['/operator/connectors/sandbox', { mode: 'test', 'settings.refuse': 'true' }],
      ['/operator/connectors/sandbox/enabled', { enabled: 'false' }],
      ['/operator/connectors/sandbox/test', {}],
    ];
    for (const [url, fields] of posts) expect((await op.client.act('/operator', url, fields)).statusCode, url).toBe(403);
    expect(await t.app.services.shops.list(m.merchantId)).toHaveLength(1);
    expect(await t.app.services.team.list(m.merchantId)).toHaveLength(0);
    expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).routing).toEqual({});
    expect(await t.app.services.connectors.find(`refused-${seq}`)).toBeNull();
    expect(await t.app.services.connectors.find('sandbox')).toMatchObject({ enabled: true, settings: {} });
  });
});

describe('cabinet: new shop', () => {
  it('the owner creates a shop (audited as the owner) and lands on its settings; an empty name is a 422', async () => {
    const m = await cabinetMerchant(t);
    const c = await signedIn(t, m);
    const list = await c.get('/cabinet/shops');
    expect(list.body).toContain('href="/cabinet/shops/new"');
    const empty = await c.submit('/cabinet/shops/new', '/cabinet/shops', { name: ' ', default_currency: 'RUB' });
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toContain('id="err-name"');
    const r = await c.submit('/cabinet/shops/new', '/cabinet/shops', { name: 'Cabinet shop', default_currency: 'USD' });
    expect(r.statusCode).toBe(303);
    const shop = (await t.app.services.shops.list(m.merchantId)).find((s) => s.name === 'Cabinet shop');
    expect(shop?.defaultCurrency).toBe('USD');
    expect(r.headers.location).toBe(`/cabinet/shops/${shop!.id}?ok=common.saved`);
    expect(await audit('shop.create', shop!.id)).toMatchObject([{ actor: `merchant:${m.merchantId}` }]);
  });

  it.each(['developer', 'accountant', 'support'] as const)('a %s sees no "New shop" and is refused (403); nothing is created', async (role) => {
    const m = await cabinetMerchant(t);
    const member = await teamMember(t, m, role);
    const list = await member.client.get('/cabinet/shops');
    expect(list.body).not.toContain('/cabinet/shops/new');
    expect((await member.client.get('/cabinet/shops/new')).statusCode).toBe(403);
    const r = await member.client.submit('/cabinet/shops', '/cabinet/shops', { name: 'Refused', default_currency: 'RUB' });
    expect(r.statusCode).toBe(403);
    expect(await t.app.services.shops.list(m.merchantId)).toHaveLength(1);
  });
});
