import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { enrolledOperator, type OperatorFixture } from './helpers.js';
import { createMerchant } from '../factories/merchant.js';
import { enqueueTestPostbacks } from '../factories/outbox.js';
import { formatDateTime } from '../../src/lib/time.js';
import { createPaidPayment } from '../factories/paid-payment.js';

/**
 * Issue 30 item 4: the console writes an error rate as a percentage and every time as the
 * cabinet does, Y-m-d H:i:s in the service time zone (config.tz), never UTC ISO.
 */
let t: TestApp;
let op: OperatorFixture;
beforeAll(async () => {
  t = await setupTestApp({ TZ: 'Europe/Moscow' });
  op = await enrolledOperator(t, 'admin');
});
afterAll(async () => { await t.close(); });

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/;

describe('the console\'s numbers and times', () => {
  it('a connector\'s error rate is a percentage (5 errors in 77 calls: 6.5%)', async () => {
    await t.db.pool.query(`INSERT INTO connector_call_stats (connector, minute, calls, errors, last_error) VALUES ('sandbox', date_trunc('minute', now()), 77, 5, 'boom')
      ON CONFLICT (connector, minute) DO UPDATE SET calls = 77, errors = 5`);
    const page = await op.client.get('/operator/connectors');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('>6.5%<');
    expect(page.body).not.toContain('0.0649');
  });

  it('events and the audit trail show Y-m-d H:i:s in the service time zone', async () => {
    const m = await createMerchant(t);
    await enqueueTestPostbacks(t, m.merchantId, 'https://shop.example/r', 1, 'tz');
    const created = (await t.db.pool.query<{ created_at: Date }>('SELECT created_at FROM outbox_events WHERE merchant_id = $1', [m.merchantId])).rows[0]!.created_at;
    const events = await op.client.get(`/operator/events?status=pending&merchant_id=${m.merchantId}`);
    expect(events.body).toContain(`<td>${formatDateTime(created, 'Europe/Moscow')}</td>`);
    expect(events.body).not.toMatch(ISO);
    const audit = await op.client.get('/operator/audit');
    expect(audit.statusCode).toBe(200);
    expect(audit.body).toContain('When (Europe/Moscow)');
    expect(audit.body).toMatch(/<td class="num">\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}<\/td>/);
    expect(audit.body).not.toMatch(ISO);
  });
});

describe('the console\'s money', () => {
  it('balances, the trial balance and a statement read RUB 1,234.50 as the other faces write it, never 8 decimals', async () => {
    const m = await createMerchant(t);
    await createPaidPayment(t, m, { amount: '1234.50' });
    const merchant = await op.client.get(`/operator/merchants/${m.merchantId}`);
    expect(merchant.statusCode).toBe(200);
    expect(merchant.body).toContain('RUB\u00a01,234.50');
    const ledger = await op.client.get(`/operator/ledger?merchant_id=${m.merchantId}`);
    expect(ledger.body).toContain('RUB\u00a01,234.50');
    for (const body of [merchant.body, ledger.body]) expect(body).not.toMatch(/\d\.\d{8}\b/);
  });

  it('money typed in the merchant form: "150,000.00" and a pasted space are taken; an exponent, a sign or a bare dot is 422 on the field and nothing changes (docs/adr/0077-one-amount-format.md)', async () => {
    const m = await createMerchant(t);
    const row = async () => (await t.db.pool.query(`SELECT payout_max_card::text, payout_daily_limit::text, payment_card_percent::text, payment_card_fixed::text FROM merchants WHERE id = $1`, [m.merchantId])).rows[0];
    const page = `/operator/merchants/${m.merchantId}`;
    const patch = `/operator/merchants/${m.merchantId}/patch`;
    const before = await row();
    for (const [field, value] of [
      ['payout_max_card', '1e6'], ['payout_max_card', '+100'], ['payout_daily_limit', '10.'], ['payout_daily_limit', '-5'],
      ['fees.payment_card_percent', '1e1'], ['fees.payment_card_fixed', '1.005'], ['fees.payment_card_fixed', '1E2'],
    ] as const) {
      const r = await op.client.act(page, patch, { [field]: value });
      expect(r.statusCode, `${field} ${value}`).toBe(422);
      expect(r.body, `${field} ${value}`).toContain(field);
    }
    expect(await row()).toEqual(before);
    const ok = await op.client.act(page, patch, { payout_max_card: '150,000.00', payout_daily_limit: ' 2 500.5 ', 'fees.payment_card_percent': '2.75' });
    expect(ok.statusCode, ok.body.slice(0, 300)).toBe(303);
    expect(await row()).toMatchObject({ payout_max_card: '150000.00000000', payout_daily_limit: '2500.50000000', payment_card_percent: '2.7500' });
  });
});

describe('the console\'s audit trail names people', () => {
  it('an entry written without a name (before names were stored) shows the member\'s email for its actor and its object, not merchant-user:<id>', async () => {
    const m = await createMerchant(t);
    const u = await t.app.services.team.invite(m.merchantId, { email: `named-${Date.now()}@team.test`, role: 'developer' });
    await t.db.pool.query(
      `INSERT INTO audit_log (actor, action, object_type, object_id, before, after) VALUES ($1, 'merchant_user.role', 'merchant_user', $2, '{"role":"developer"}', '{"role":"support"}')`,
      [`merchant-user:${u.member.id}`, u.member.id]);
    const page = await op.client.get(`/operator/audit?object_id=${u.member.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<span data-testid="actor-person">${u.member.email}</span>`);
    expect(page.body).toContain(`<span data-testid="object-person">${u.member.email}</span>`);
  });
});
