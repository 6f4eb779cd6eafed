import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { ROLES, type Role } from '../../src/domain/operator/roles.js';
import { adminApi, createOperator, enrolledOperator, stuckPayment, type OperatorFixture } from './helpers.js';
import { ageOf } from '../../src/operator/routes/attention.js';

/**
 * The attention list in the operator console (issue 17 item 1): what was last heard, the age,
 * the connector, links to the object; resolved with an outcome and a note through the operator
 * API's action; admin and finance may resolve, support and auditor only read (403 from the
 * server, nothing changes); every resolution audited.
 */
let t: TestApp;
const ops = {} as Record<Role, OperatorFixture>;
beforeAll(async () => {
  t = await setupTestApp();
  for (const role of ROLES) ops[role] = await enrolledOperator(t, role);
});
afterAll(async () => { await t?.close(); });

const state = async (itemId: string, paymentId: string) => JSON.stringify([
  (await t.db.pool.query('SELECT resolved_at, resolution, note, resolved_by FROM attention_items WHERE id = $1', [itemId])).rows,
  (await t.db.pool.query('SELECT status::text FROM payments WHERE id = $1', [paymentId])).rows,
  (await t.db.pool.query('SELECT count(*) FROM audit_log')).rows,
  (await t.db.pool.query('SELECT count(*) FROM ledger_transfers')).rows,
]);

describe('the attention page', () => {
  it('lists each open item with its object, merchant, age, connector, reference and what was last heard; every role reads it', async () => {
    const s = await stuckPayment(t);
    for (const role of ROLES) {
      const page = await ops[role].client.get('/operator/attention');
      expect(page.statusCode, role).toBe(200);
      const row = page.body.slice(page.body.indexOf(`data-attention="${s.itemId}"`));
      expect(row).toContain(`/operator/audit?object_id=${s.paymentId}`);
      expect(row).toContain(`/operator/merchants/${s.merchantId}`);
      expect(row).toMatch(/data-testid="age">\d+ min</);
      expect(row).toContain('<code>sandbox</code>');
      expect(row).toContain(`ref-${s.paymentId}`);
      expect(row).toContain('<td class="heard"><dl class="kv"><dt>reason</dt><dd>no answer</dd><dt>status</dt><dd>unknown</dd></dl></td>');
      // Only the roles that may resolve get the form.
      expect(page.body.includes(`/operator/attention/${s.itemId}/resolve`), role).toBe(role === 'admin' || role === 'finance');
    }
    // The overview counts the open items and leads to the list.
    const open = (await t.db.pool.query('SELECT count(*)::int AS n FROM attention_items WHERE resolved_at IS NULL')).rows[0].n as number;
    const home = (await ops.auditor.client.get('/operator')).body;
    expect(home).toContain(`<span class="big" id="attention-count">${open}</span>`);
    expect(open).toBeGreaterThan(0);
  });

  it('the age reads in days, hours and minutes', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    expect(ageOf(new Date('2026-11-25T11:55:30Z'), now)).toBe('4 min');
    expect(ageOf(new Date('2026-11-25T08:48:00Z'), now)).toBe('3 h 12 min');
    expect(ageOf(new Date('2026-11-23T09:00:00Z'), now)).toBe('2 d 3 h');
  });
});

describe('resolving from the console', () => {
  for (const role of ['admin', 'finance'] as const) {
    it(`${role} resolves an item SUCCESS with a note: the payment is credited through its states, the item closed, the change audited`, async () => {
      const s = await stuckPayment(t);
      const op = ops[role];
      const r = await op.client.act('/operator/attention', `/operator/attention/${s.itemId}/resolve`, { outcome: 'SUCCESS', note: 'bank statement shows it' });
      expect(r.statusCode).toBe(303);
      expect(r.headers.location).toMatch(/^\/operator\/attention\?ok=/);
      const item = (await t.db.pool.query('SELECT resolution, note, resolved_by FROM attention_items WHERE id = $1', [s.itemId])).rows[0];
      expect(item).toEqual({ resolution: 'SUCCESS', note: 'bank statement shows it', resolved_by: `operator:${op.id}` });
      expect((await t.db.pool.query('SELECT status::text FROM payments WHERE id = $1', [s.paymentId])).rows[0].status).toBe('SUCCESS');
      const audit = (await t.db.pool.query('SELECT actor, after FROM audit_log WHERE action = $1 AND object_id = $2', ['attention.resolve', s.itemId])).rows;
      expect(audit).toEqual([{ actor: `operator:${op.id}`, after: expect.objectContaining({ resolution: 'SUCCESS', note: 'bank statement shows it' }) }]);
      // Gone from the list.
      const page = await op.client.get('/operator/attention');
      expect(page.body).not.toContain(`data-attention="${s.itemId}"`);
    });
  }

  for (const role of ['support', 'auditor'] as const) {
    it(`${role} may not resolve: 403 from the server and nothing changes`, async () => {
      const s = await stuckPayment(t);
      const before = await state(s.itemId, s.paymentId);
      // The form token from a page the role may read: the refusal is the role's.
      const r = await ops[role].client.act('/operator/attention', `/operator/attention/${s.itemId}/resolve`, { outcome: 'SUCCESS', note: 'x' });
      expect(r.statusCode).toBe(403);
      expect(r.body).toContain('Your role does not allow this action');
      expect(await state(s.itemId, s.paymentId)).toBe(before);
    });
  }

  it('a missing outcome is 422 and an item already resolved is 409; nothing changes', async () => {
    const s = await stuckPayment(t);
    const c = ops.finance.client;
    const before = await state(s.itemId, s.paymentId);
    const bad = await c.act('/operator/attention', `/operator/attention/${s.itemId}/resolve`, { outcome: '', note: '' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('outcome');
    expect(await state(s.itemId, s.paymentId)).toBe(before);
    expect((await c.act('/operator/attention', `/operator/attention/${s.itemId}/resolve`, { outcome: 'FAIL' })).statusCode).toBe(303);
    const after = await state(s.itemId, s.paymentId);
    const again = await c.act('/operator/audit', `/operator/attention/${s.itemId}/resolve`, { outcome: 'SUCCESS' });
    expect(again.statusCode).toBe(409);
    expect(await state(s.itemId, s.paymentId)).toBe(after);
  });
});

describe('the operator API follows the same roles', () => {
  const tokenOf = async (role: Role) => {
    const op = await createOperator(t, role);
    return (await adminApi(t, 'POST', `/operators/${op.id}/tokens`, {})).api_token as string;
  };
  it('a finance token resolves through POST /admin/v1/attention/{id}/resolve; a support token gets 403 JSON and nothing changes', async () => {
    const s = await stuckPayment(t);
    const [support, finance] = [await tokenOf('support'), await tokenOf('finance')];
    const before = await state(s.itemId, s.paymentId);
    const denied = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${s.itemId}/resolve`, headers: { authorization: `Bearer ${support}` }, payload: { outcome: 'FAIL' } });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().success).toBe(false);
    expect(await state(s.itemId, s.paymentId)).toBe(before);
    const ok = await t.app.inject({ method: 'POST', url: `/admin/v1/attention/${s.itemId}/resolve`, headers: { authorization: `Bearer ${finance}` }, payload: { outcome: 'FAIL', note: 'declined by bank' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ success: true, resolution: 'FAIL', note: 'declined by bank' });
    expect((await t.db.pool.query('SELECT status::text FROM payments WHERE id = $1', [s.paymentId])).rows[0].status).toBe('FAIL');
  });
});
