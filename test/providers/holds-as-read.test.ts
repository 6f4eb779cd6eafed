import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { heldPayment } from '../factories/payment.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { CabinetClient, PASSWORD } from '../cabinet/helpers.js';
import { enrolledOperator, type OperatorFixture } from '../operator/helpers.js';
import { admin } from '../admin/helpers.js';

/**
 * Holds as people read them (docs/adr/0096-holds-as-people-read-them.md): the payer's page of an
 * authorised payment says so and goes back to the shop's Success URL; a hold the shop cancelled
 * reads as cancelled (no decline wording, no trip back to the form); the cabinet, its CSV and
 * the console say "Authorised (held)", "Captured", "Cancelled by the shop"; the API keeps its statuses.
 */
let t: TestApp;
let adm: OperatorFixture;
beforeAll(async () => {
  t = await setupTestApp();
  adm = await enrolledOperator(t, 'admin');
});
afterAll(async () => { await t?.close(); });

const shopUrls = { successUrl: 'https://shop.test/ok', failUrl: 'https://shop.test/fail' };
async function merchant() {
  const m = await createMerchant(t, { shop: shopUrls });
  await t.db.prisma.shop.update({ where: { id: m.shopId }, data: shopUrls });
  await t.app.services.merchants.setPassword(m.merchantId, PASSWORD);
  const email = (await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } })).email;
  const cabinet = new CabinetClient(t);
  if ((await cabinet.login(email, PASSWORD)).statusCode !== 303) throw new Error('cabinet sign-in');
  return { ...m, cabinet };
}
const billOf = async (paymentId: string) => (await t.db.pool.query('SELECT bill_id FROM payments WHERE id = $1', [paymentId])).rows[0].bill_id as string;
const apiStatus = async (m: { auth: Record<string, string> }, id: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${id}`, headers: m.auth })).json();

describe("the payer's page", () => {
  it('an authorised payment says so and returns to the Success URL with signed fields; its JSON keeps PROCESS and says held', async () => {
    const m = await merchant();
    const id = await heldPayment(t, m, '700.00');
    const bill = await billOf(id);
    const page = await t.app.inject({ method: 'GET', url: `/pay/${bill}/payments/${id}?lang=en` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Payment authorised');
    expect(page.body).not.toContain('checking your payment');
    expect(page.body).toContain('action="https://shop.test/ok"');
    const token = m.token;
    expect(page.body).toContain(`name="SignatureValue" value="${md5Upper(`700.00::${token}`)}"`);
    const json = (await t.app.inject({ method: 'GET', url: `/pay/${bill}/payments/${id}`, headers: { accept: 'application/json' } })).json();
    expect(json).toMatchObject({ status: 'PROCESS', hold: 'HELD' });
    const ru = await t.app.inject({ method: 'GET', url: `/pay/${bill}/payments/${id}?lang=ru` });
    expect(ru.body).toContain('Платёж авторизован');
  });

  it('a hold the shop cancelled reads as cancelled: no decline words, no redirect to the form or the Fail URL; a new payment only while the bill takes one', async () => {
    const m = await merchant();
    const id = await heldPayment(t, m, '300.00');
    const bill = await billOf(id);
    expect((await admin(t, 'POST', `/payments/${id}/cancel`)).status).toBe(200);
    const page = await t.app.inject({ method: 'GET', url: `/pay/${bill}/payments/${id}?lang=en` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('The shop cancelled the payment');
    expect(page.body).not.toMatch(/declined|try another card/i);
    expect(page.body).not.toContain('https://shop.test/fail');
    expect(page.body).toContain('data-testid="pay-again"');
    // The bill closed by the shop: nothing offered.
    await t.db.pool.query('UPDATE bills SET active = false WHERE id = $1', [bill]);
    const closed = await t.app.inject({ method: 'GET', url: `/pay/${bill}/payments/${id}?lang=ru` });
    expect(closed.body).toContain('Магазин отменил платёж');
    expect(closed.body).not.toContain('data-testid="pay-again"');
    // The form's "declined" view is not offered for it either.
    const form = await t.app.inject({ method: 'GET', url: `/pay/${bill}?declined=${id}&lang=en` });
    expect(form.body).not.toMatch(/was declined/);
    // The API and the postback keep their statuses.
    expect((await apiStatus(m, id)).data?.status ?? (await apiStatus(m, id)).status).toBe('FAIL');
  });
});

describe('the cabinet, its CSV and the console', () => {
  it('say "Authorised (held)", "Captured", "Cancelled by the shop" (and in Russian); no failure reason for a cancel', async () => {
    const m = await merchant();
    const held = await heldPayment(t, m, '100.00');
    const captured = await heldPayment(t, m, '200.00');
    const cancelled = await heldPayment(t, m, '300.00');
    expect((await admin(t, 'POST', `/payments/${captured}/capture`, {})).status).toBe(200);
    expect((await admin(t, 'POST', `/payments/${cancelled}/cancel`)).status).toBe(200);

    const list = (await m.cabinet.get('/cabinet/payments?lang=en')).body;
    const rowOf = (html: string, id: string) => html.split('<tr>').find((r) => r.includes(`/payments/${id}"`)) ?? '';
    expect(rowOf(list, held)).toContain('Authorised (held)');
    expect(rowOf(list, captured)).toContain('Captured');
    expect(rowOf(list, cancelled)).toContain('Cancelled by the shop');
    expect(rowOf(list, cancelled)).not.toContain('data-testid="failure-reason"');
    expect((await m.cabinet.get(`/cabinet/payments/${held}?lang=ru`)).body).toContain('Авторизован (холд)');

    const csv = (await m.cabinet.get('/cabinet/payments/export.csv?lang=en')).body;
    const line = (id: string) => csv.split('\n').find((l) => l.includes(id)) ?? '';
    expect(line(held)).toContain('Authorised (held)');
    expect(line(captured)).toContain('Captured');
    expect(line(cancelled)).toContain('Cancelled by the shop');
    expect(line(cancelled)).not.toMatch(/declined/i);

    for (const [id, words] of [[held, 'Authorised (held)'], [captured, 'Captured'], [cancelled, 'Cancelled by the shop']] as const) {
      const p = await adm.client.get(`/operator/payments/${id}`);
      expect(p.statusCode).toBe(200);
      expect(p.body).toMatch(new RegExp(`data-testid="payment-status">${words.replace(/[()]/g, '\\$&')}<`));
    }
    // The API keeps its statuses.
    expect((await apiStatus(m, held)).data?.status ?? (await apiStatus(m, held)).status).toBe('PROCESS');
  });
});

describe('the console captures and cancels holds', () => {
  it('from the merchant page (partial capture) and the payment page (cancel), audited; other roles see no buttons and get 403', async () => {
    const m = await merchant();
    const a = await heldPayment(t, m, '500.00');
    const b = await heldPayment(t, m, '400.00');
    const page = await adm.client.get(`/operator/merchants/${m.merchantId}`);
    expect(page.body).toContain(`/operator/payments/${a}/capture`);
    const cap = await adm.client.act(`/operator/merchants/${m.merchantId}`, `/operator/payments/${a}/capture`, { amount: '350.00', back: `/operator/merchants/${m.merchantId}` });
    expect(cap.statusCode).toBe(303);
    expect(cap.headers.location).toMatch(new RegExp(`^/operator/merchants/${m.merchantId}\\?ok=Captured`));
    const can = await adm.client.act(`/operator/payments/${b}`, `/operator/payments/${b}/cancel`);
    expect(can.statusCode).toBe(303);
    const rows = (await t.db.pool.query('SELECT id, status::text, amount_received::text FROM payments WHERE id = ANY($1) ORDER BY amount DESC', [[a, b]])).rows;
    expect(rows).toEqual([{ id: a, status: 'SUCCESS', amount_received: '350.00' }, { id: b, status: 'FAIL', amount_received: '0.00' }]);
    const audit = (await t.db.pool.query("SELECT actor, action FROM audit_log WHERE object_id = ANY($1) AND action LIKE 'payment.%' ORDER BY id", [[a, b]])).rows;
    expect(audit).toEqual([{ actor: `operator:${adm.id}`, action: 'payment.capture' }, { actor: `operator:${adm.id}`, action: 'payment.cancel' }]);
    // More than is held: refused, nothing moves.
    const c = await heldPayment(t, m, '100.00');
    expect((await adm.client.act(`/operator/payments/${c}`, `/operator/payments/${c}/capture`, { amount: '100.01' })).statusCode).toBe(422);

    const fin = await enrolledOperator(t, 'finance');
    const seen = await fin.client.get(`/operator/payments/${c}`);
    expect(seen.body).not.toContain(`/operator/payments/${c}/capture`);
    expect((await fin.client.act(`/operator/payments/${c}`, `/operator/payments/${c}/cancel`)).statusCode).toBe(403);
    expect((await t.db.pool.query('SELECT status::text FROM payments WHERE id = $1', [c])).rows[0].status).toBe('PROCESS');
  });
});
