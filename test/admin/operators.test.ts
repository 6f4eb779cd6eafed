import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { admin, adminMerchant } from './helpers.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { writeAudit } from '../../src/audit/audit.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const FORBIDDEN = { success: false, message: 'This action is unauthorized.' };
type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

async function as(token: string, method: Method, url: string, payload?: unknown) {
  const r = await t.app.inject({
    method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  let body: Record<string, any> = {};
  try { body = r.json(); } catch { /* CSV */ }
  return { status: r.statusCode, body, text: r.body };
}

let n = 0;
/** An operator of `role` with a personal token, made through the operator API. */
async function operator(role: string) {
  n += 1;
  const c = await admin(t, 'POST', '/operators', { email: `Op${n}-${role}@Example.test`, role });
  expect(c.status).toBe(201);
  const k = await admin(t, 'POST', `/operators/${c.body.id}/tokens`, { name: 'ci' });
  expect(k.status).toBe(201);
  return { id: c.body.id as string, token: k.body.api_token as string };
}

const auditCount = async () => Number((await t.db.pool.query('SELECT count(*) FROM audit_log')).rows[0].count);

describe('operator accounts and personal tokens', () => {
  it('creates an operator (email lowercased, unique) and a token stored only as its SHA-256', async () => {
    const o = await operator('auditor');
    const row = (await t.db.pool.query('SELECT email, role::text, password_hash FROM operators WHERE id = $1', [o.id])).rows[0];
    expect(row).toEqual({ email: `op${n}-auditor@example.test`, role: 'AUDITOR', password_hash: null });
    const toks = (await t.db.pool.query('SELECT * FROM operator_tokens WHERE operator_id = $1', [o.id])).rows;
    expect(toks).toHaveLength(1);
    expect(toks[0].token_hash).toBe(sha256Hex(o.token));
    expect(JSON.stringify(toks)).not.toContain(o.token);
    const dup = await admin(t, 'POST', '/operators', { email: row.email.toUpperCase(), role: 'admin' });
    expect(dup.status).toBe(422);
    expect(dup.body.errors.email).toBeDefined();
    const list = await as(o.token, 'GET', '/operators');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toMatch(/password_hash|token_hash|totp_secret/);
  });

  it('a disabled operator is refused at once (401); re-enabled, the tokens issued before the disable stay revoked (issue 27), a new one works', async () => {
    const o = await operator('admin');
    const second = (await admin(t, 'POST', `/operators/${o.id}/tokens`, { name: 'laptop' })).body.api_token as string;
    expect((await as(o.token, 'GET', '/merchants')).status).toBe(200);
    expect((await admin(t, 'PATCH', `/operators/${o.id}`, { status: 'disabled' })).status).toBe(200);
    const r = await as(o.token, 'GET', '/merchants');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ success: false, message: 'Unauthenticated.' });
    expect((await admin(t, 'PATCH', `/operators/${o.id}`, { status: 'active' })).status).toBe(200);
    for (const old of [o.token, second]) {
      const again = await as(old, 'GET', '/merchants');
      expect(again.status).toBe(401);
      expect(again.body).toEqual({ success: false, message: 'Unauthenticated.' });
      expect((await as(old, 'POST', '/operators', { email: `z${n}@example.test`, role: 'admin' })).status).toBe(401);
    }
    const shown = (await admin(t, 'GET', `/operators/${o.id}`)).body.tokens as { revoked_at: string | null }[];
    expect(shown.every((x) => x.revoked_at !== null)).toBe(true);
    const trail = (await admin(t, 'GET', `/audit?object_id=${o.id}&action=operator.update`)).body.data;
    expect(trail.map((e: { after: unknown }) => e.after)).toEqual([{ status: 'active' }, { status: 'disabled', tokens_revoked: 2 }]);
    const fresh = (await admin(t, 'POST', `/operators/${o.id}/tokens`, { name: 'new' })).body.api_token as string;
    expect((await as(fresh, 'GET', '/merchants')).status).toBe(200);
  });

  it('a revoked token fails; a role change applies to the next request', async () => {
    const o = await operator('admin');
    expect((await as(o.token, 'POST', '/operators', { email: `x${n}@example.test`, role: 'auditor' })).status).toBe(201);
    await admin(t, 'PATCH', `/operators/${o.id}`, { role: 'auditor' });
    expect((await as(o.token, 'POST', '/operators', { email: `y${n}@example.test`, role: 'auditor' })).status).toBe(403);
    const tokenId = (await t.db.pool.query('SELECT id FROM operator_tokens WHERE operator_id = $1', [o.id])).rows[0].id;
    expect((await admin(t, 'DELETE', `/operators/${o.id}/tokens/${tokenId}`)).status).toBe(200);
    expect((await as(o.token, 'GET', '/merchants')).status).toBe(401);
  });
});

describe('roles on operator routes', () => {
  let m: { id: string };
  let shopId: string;
  const roles: Record<string, { token: string }> = {};
  beforeAll(async () => {
    m = await adminMerchant(t);
    shopId = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'S' })).body.id;
    for (const r of ['admin', 'finance', 'support', 'auditor']) roles[r] = await operator(r);
  });

  const snapshot = async () => ({
    balances: (await t.db.pool.query('SELECT currency, available, locked, hold FROM balances WHERE merchant_id = $1 ORDER BY currency', [m.id])).rows,
    ledger: Number((await t.db.pool.query('SELECT count(*) FROM ledger_entries')).rows[0].count),
    merchant: (await t.db.pool.query('SELECT * FROM merchants WHERE id = $1', [m.id])).rows[0],
    operators: Number((await t.db.pool.query('SELECT count(*) FROM operators')).rows[0].count),
    audit: await auditCount(),
  });

  // [permission, request, the status when allowed]
  const cases: Array<[string, () => [Method, string, unknown?], number]> = [
    ['read', () => ['GET', `/merchants/${m.id}`], 200],
    ['read', () => ['GET', '/audit'], 200],
    ['balance.adjust', () => ['POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '10.5', reason: 'r' }], 201],
    ['payouts.moderate', () => ['POST', '/payouts/nope/approve'], 404],
    ['events.redeliver', () => ['POST', '/events/999999/redeliver'], 404],
    ['merchants.password-reset', () => ['POST', `/merchants/${m.id}/password-reset`], 202],
    ['merchants.two-factor-reset', () => ['POST', `/merchants/${m.id}/two-factor-reset`, { reason: 'identified by phone' }], 200],
    ['admin', () => ['PATCH', `/merchants/${m.id}`, { verified: true }], 200],
    ['admin', () => ['PUT', '/rates/USD', { rub_per_unit: '90' }], 200],
    ['admin', () => ['POST', '/operators', { email: `new${Math.random()}@example.test`, role: 'auditor' }], 201],
    // Issue 27: money and connectors move only at an admin's hand.
    ['admin', () => ['POST', '/payments/nope/chargebacks', { amount: '1.00', reason: 'x' }], 404],
    ['admin', () => ['PATCH', '/connectors/sandbox', { enabled: true }], 200],
    ['admin', () => ['PUT', '/connectors/sandbox', { kind: 'sandbox', mode: 'test', settings: {} }], 200],
  ];
  const allowed: Record<string, string[]> = {
    admin: ['read', 'balance.adjust', 'payouts.moderate', 'events.redeliver', 'merchants.password-reset', 'merchants.two-factor-reset', 'admin'],
    finance: ['read', 'balance.adjust', 'payouts.moderate'],
    support: ['read', 'events.redeliver', 'merchants.password-reset'],
    auditor: ['read'],
  };

  for (const role of ['admin', 'finance', 'support', 'auditor']) {
    it(`${role}: allowed where its role permits, 403 with nothing changed elsewhere`, async () => {
      for (const [perm, req, okStatus] of cases) {
        const [method, url, body] = req();
        const before = await snapshot();
        const r = await as(roles[role]!.token, method, url, body);
        if (allowed[role]!.includes(perm)) {
          expect(r.status, `${role} ${method} ${url}`).toBe(okStatus);
        } else {
          expect(r.status, `${role} ${method} ${url}`).toBe(403);
          expect(r.body).toEqual(FORBIDDEN);
          expect(await snapshot(), `${role} ${method} ${url} changed something`).toEqual(before);
        }
      }
    });
  }

  it('support cannot post a balance adjustment: balance and ledger unchanged', async () => {
    const before = await snapshot();
    const r = await as(roles.support!.token, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '1000', reason: 'x' });
    expect(r.status).toBe(403);
    expect(await snapshot()).toEqual(before);
  });

  it('support may send a test postback; auditor may not', async () => {
    expect((await as(roles.auditor!.token, 'POST', `/shops/${shopId}/test-postback`)).status).toBe(403);
    expect((await as(roles.support!.token, 'POST', `/shops/${shopId}/test-postback`)).status).not.toBe(403);
  });

  it('a non-GET route that declares no permission is for admins only (fail closed)', async () => {
    // DELETE /rates/:currency declares none.
    expect((await as(roles.finance!.token, 'DELETE', '/rates/EUR')).status).toBe(403);
    expect((await as(roles.admin!.token, 'DELETE', '/rates/EUR')).status).toBe(404);
  });
});

describe('audit trail', () => {
  it('a committed change writes exactly one entry with the actor, ip and changed fields', async () => {
    const o = await operator('admin');
    const m = await adminMerchant(t);
    const before = await auditCount();
    const r = await as(o.token, 'PATCH', `/merchants/${m.id}`, { verified: true, payout_daily_limit: '500' });
    expect(r.status).toBe(200);
    expect(await auditCount()).toBe(before + 1);
    const list = await as(o.token, 'GET', `/audit?object_id=${m.id}&action=merchant.update`);
    expect(list.body.data).toHaveLength(1);
    const e = list.body.data[0];
    expect(Object.keys(e).sort()).toEqual(['action', 'actor', 'actor_id', 'after', 'at', 'before', 'id', 'ip', 'object_id', 'object_name', 'object_type']);
    // Issue 27: the actor is the person (the operator's email), the stable key beside it.
    expect(e).toMatchObject({
      actor: `op${n}-admin@example.test`, actor_id: `operator:${o.id}`, action: 'merchant.update', object_type: 'merchant', object_id: m.id,
      before: { verified: false, payout_daily_limit: null }, after: { verified: true, payout_daily_limit: '500.00000000' },
    });
    expect(e.ip).toBeTruthy();
    expect(Object.keys(e.after).sort()).toEqual(['payout_daily_limit', 'verified']);
  });

  it('a refused change writes no entry', async () => {
    const m = await adminMerchant(t);
    const before = await auditCount();
    const r = await admin(t, 'PUT', `/merchants/${m.id}/payout-webhook`, { url: 'not a url' });
    expect(r.status).toBe(422);
    expect((await admin(t, 'POST', '/operators', { email: 'bad', role: 'admin' })).status).toBe(422);
    expect(await auditCount()).toBe(before);
  });

  it('the entry and the change share one transaction: a failing audit step rolls the change back', async () => {
    const m = await adminMerchant(t);
    const before = await auditCount();
    await expect(t.app.services.merchants.update(m.id, { verified: true }, async (c) => {
      await writeAudit(c, { actor: 'admin-token', ip: null }, { action: 'merchant.update', objectType: 'merchant', objectId: m.id, after: { verified: true } });
      throw new Error('after the entry, before the commit');
    })).rejects.toThrow('before the commit');
    expect((await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.id } })).verified).toBe(false);
    expect(await auditCount()).toBe(before);
    await expect(t.app.services.operators.create({ email: 'rolled@example.test', role: 'admin' }, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect((await t.db.pool.query("SELECT count(*) FROM operators WHERE email = 'rolled@example.test'")).rows[0].count).toBe('0');
  });

  it('balance adjustments, rates and SBP banks: one entry per committed change, none for a refused one', async () => {
    const m = await adminMerchant(t);
    let before = await auditCount();
    expect((await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '-5', reason: 'too much' })).status).toBe(422);
    expect(await auditCount()).toBe(before);
    expect((await admin(t, 'POST', `/merchants/${m.id}/balance-adjustments`, { currency: 'RUB', amount: '7.25', reason: 'bonus' })).status).toBe(201);
    expect(await auditCount()).toBe(before + 1);
    const adj = (await admin(t, 'GET', `/audit?object_id=${m.id}&action=balance.adjust`)).body.data[0];
    expect(adj.after).toMatchObject({ currency: 'RUB', amount: '7.25000000', reason: 'bonus' });
    before = await auditCount();
    expect((await admin(t, 'PUT', '/rates/EUR', { rub_per_unit: '101.5' })).status).toBe(200);
    expect((await admin(t, 'PUT', '/rates/EUR', { rub_per_unit: '102' })).status).toBe(200);
    expect((await admin(t, 'DELETE', '/rates/EUR')).status).toBe(200);
    expect((await admin(t, 'DELETE', '/rates/EUR')).status).toBe(404);
    const rates = (await admin(t, 'GET', '/audit?object_id=EUR')).body.data;
    expect(rates.map((e: any) => [e.action, e.before, e.after])).toEqual([
      ['rate.delete', { rub_per_unit: '102' }, null],
      ['rate.set', { rub_per_unit: '101.5' }, { rub_per_unit: '102' }],
      ['rate.set', null, { rub_per_unit: '101.5' }],
    ]);
    const bank = (await admin(t, 'GET', '/sbp-banks')).body.data[0];
    expect((await admin(t, 'PATCH', `/sbp-banks/${bank.member_id}`, { active: !bank.active })).status).toBe(200);
    expect(await auditCount()).toBe(before + 4);
    const b = (await admin(t, 'GET', `/audit?action=sbp_bank.set&object_id=${bank.member_id}`)).body.data[0];
    expect([b.before, b.after]).toEqual([{ active: bank.active }, { active: !bank.active }]);
  });

  it('shops and payout accounts: entries with masked card numbers only', async () => {
    const m = await adminMerchant(t);
    const before = await auditCount();
    const shop = (await admin(t, 'POST', `/merchants/${m.id}/shops`, { name: 'Audited' })).body;
    expect((await admin(t, 'PATCH', `/shops/${shop.id}`, { name: 'Renamed', result_url: 'not a url' })).status).toBe(422);
    expect((await admin(t, 'PATCH', `/shops/${shop.id}`, { name: 'Renamed' })).status).toBe(200);
    const acc = (await admin(t, 'POST', `/merchants/${m.id}/payout-accounts`, { type: 'card', identifier: '4111 1111 1111 1111', card_holder: 'IVAN IVANOV' })).body;
    expect((await admin(t, 'PATCH', `/payout-accounts/${acc.id}`, { status: 'banned' })).status).toBe(200);
    expect(await auditCount()).toBe(before + 4);
    const s = (await admin(t, 'GET', `/audit?object_id=${shop.id}`)).body.data;
    expect(s.map((e: any) => e.action)).toEqual(['shop.update', 'shop.create']);
    expect([s[0].before, s[0].after]).toEqual([{ name: 'Audited' }, { name: 'Renamed' }]);
    const a = (await admin(t, 'GET', `/audit?object_id=${acc.id}`)).body.data;
    expect(a.map((e: any) => e.action)).toEqual(['payout_account.status', 'payout_account.create']);
    expect(a[1].after.identifier_masked).toBe('411111******1111');
    const all = JSON.stringify((await t.db.pool.query('SELECT * FROM audit_log')).rows);
    expect(all).not.toContain('4111111111111111');
    expect(all).not.toContain('4111 1111 1111 1111');
  });

  it('the database refuses UPDATE, DELETE and TRUNCATE of audit_log', async () => {
    const m = await adminMerchant(t);
    expect(await auditCount()).toBeGreaterThan(0);
    await expect(t.db.pool.query("UPDATE audit_log SET actor = 'x'")).rejects.toThrow(/append-only/);
    await expect(t.db.pool.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
    await expect(t.db.pool.query('TRUNCATE audit_log')).rejects.toThrow(/append-only/);
    expect((await admin(t, 'GET', `/audit?object_id=${m.id}`)).body.data[0].action).toBe('merchant.create');
  });

  it('secrets never reach the trail (tokens, passwords, hashes)', async () => {
    const password = 'merchant-secret-pass-123';
    const m = await adminMerchant(t, { password });
    const refreshed = (await admin(t, 'POST', `/merchants/${m.id}/token`)).body.api_token as string;
    // Issue 27: the operator gets no password, only where the link went; the link's token
    // (read here from the sandbox's dev mailbox) is not in the trail either.
    const sent = await admin(t, 'POST', `/merchants/${m.id}/password-reset`);
    expect(sent.status).toBe(202);
    expect(sent.body.password).toBeUndefined();
    const mail = (await t.app.services.mail.list()).find((x) => x.kind === 'password_reset' && x.merchant_id === m.id)!;
    const reset = /token=([A-Za-z0-9_-]+)/.exec(mail.text!)![1]!;
    const opPassword = 'operator-secret-pass-123';
    const op = await admin(t, 'POST', '/operators', { email: 'secret-op@example.test', role: 'finance', password: opPassword });
    const opToken = (await admin(t, 'POST', `/operators/${op.body.id}/tokens`)).body.api_token as string;
    const merchantRow = (await t.db.pool.query('SELECT password_hash, api_token_hash, api_token_enc FROM merchants WHERE id = $1', [m.id])).rows[0];
    const all = JSON.stringify((await t.db.pool.query('SELECT * FROM audit_log')).rows);
    for (const secret of [password, m.api_token, refreshed, reset, opPassword, opToken, sha256Hex(opToken),
      merchantRow.password_hash, merchantRow.api_token_hash, merchantRow.api_token_enc]) {
      expect(all).not.toContain(secret);
    }
    const actions = (await admin(t, 'GET', `/audit?object_id=${m.id}`)).body.data.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['merchant.password.reset', 'merchant.token.refresh', 'merchant.create']);
  });

  it('pages newest first by before_id, filters by actor and dates, exports CSV; every role reads it', async () => {
    const aud = await operator('auditor');
    const page1 = await as(aud.token, 'GET', '/audit?limit=2&actor=admin-token');
    expect(page1.status).toBe(200);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.data.every((e: { actor: string }) => e.actor === 'admin-token')).toBe(true);
    const page2 = await as(aud.token, 'GET', `/audit?limit=2&actor=admin-token&before_id=${page1.body.next_before_id}`);
    expect(new Decimal(page2.body.data[0].id).lt(page1.body.data[1].id)).toBe(true);
    expect((await as(aud.token, 'GET', '/audit?start_date=2999-01-01')).body.data).toEqual([]);
    expect((await as(aud.token, 'GET', '/audit?start_date=yesterday')).status).toBe(422);
    const csv = await as(aud.token, 'GET', '/audit.csv?actor=admin-token');
    expect(csv.status).toBe(200);
    expect(csv.text.split('\n')[0]).toBe('id,at,actor,actor_id,action,object_type,object_id,before,after,ip');
    expect(csv.text).toContain('merchant.create');
  });
});
