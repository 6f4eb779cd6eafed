import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { DECLINED_CARD, cardForm, payNewBill } from '../factories/payment.js';
import { cabinetMerchant, signedIn, type CabinetMerchant } from './helpers.js';
import type { CabinetClient } from './helpers.js';

/** Issue 16 item 3 (finding things) and item 4 (money as people read it) in the cabinet. */
let t: TestApp;
let m: CabinetMerchant;
let c: CabinetClient;
let paid: { billId: string; paymentId: string };
let declined: { billId: string; paymentId: string };
let other: { billId: string; paymentId: string };

beforeAll(async () => {
  t = await setupTestApp();
  m = await cabinetMerchant(t, { merchant: { grantRefunds: true, verified: true } });
  c = await signedIn(t, m);
  paid = await payNewBill(t, m, { amount: '1500.00', orderId: 'order-find-1' });
  declined = await payNewBill(t, m, { amount: '20.00', orderId: 'order-find-2' }, cardForm(DECLINED_CARD));
  await t.db.pool.query("UPDATE payments SET payer_email = 'Payer@Example.test' WHERE id = $1", [declined.paymentId]);
  const stranger = await cabinetMerchant(t);
  other = await payNewBill(t, stranger, { amount: '30.00', orderId: 'order-find-1' });
});
afterAll(async () => { await t.close(); });

const ids = (html: string) => [...html.matchAll(/href="\/cabinet\/payments\/([A-Za-z0-9]+)"/g)].map((x) => x[1]).filter((id) => id !== 'refunds');

describe('search and columns', () => {
  test('payments are found by order id, payment id, bill id, card last 4 and payer email; never another merchant\'s', async () => {
    const cases: [string, string[]][] = [
      ['order-find-1', [paid.paymentId]],
      [paid.paymentId, [paid.paymentId]],
      [declined.billId, [declined.paymentId]],
      ['0002', [declined.paymentId]],
      ['4242', [paid.paymentId]],
      ['payer@example.TEST', [declined.paymentId]],
      [other.paymentId, []],
      ['nothing-like-this', []],
    ];
    for (const [q, want] of cases) {
      const r = await c.get(`/cabinet/payments?q=${encodeURIComponent(q)}`);
      expect(r.statusCode, q).toBe(200);
      expect(ids(r.body), q).toEqual(want);
    }
  });

  test('the payment list shows order id and bill columns; the bill list is searchable too', async () => {
    const r = await c.get('/cabinet/payments');
    expect(r.body).toContain('<th scope="col">Order ID</th>');
    expect(r.body).toContain('>order-find-1<');
    expect(r.body).toContain(`href="/cabinet/bills/${paid.billId}"`);
    const bills = await c.get(`/cabinet/bills?q=${paid.paymentId}`);
    expect(bills.body).toContain(`/cabinet/bills/${paid.billId}"`);
    expect(bills.body).not.toContain(`/cabinet/bills/${declined.billId}"`);
  });

  test('"Partly refunded", then "Refunded" after the rest goes back', async () => {
    const pay = await payNewBill(t, m, { amount: '300.00', orderId: 'order-refund' });
    const from = `/cabinet/payments/${pay.paymentId}`;
    expect((await c.get('/cabinet/payments?q=order-refund')).body).not.toContain('data-testid="refund-label"');
    await c.submit(from, `${from}/refund`, { mode: 'partial', amount: '100' });
    expect((await c.get('/cabinet/payments?q=order-refund')).body).toContain('data-testid="refund-label">Partly refunded<');
    await c.submit(from, `${from}/refund`, { mode: 'full' });
    expect((await c.get('/cabinet/payments?q=order-refund')).body).toContain('data-testid="refund-label">Refunded<');
    const refunds = await c.get('/cabinet/payments/refunds?q=order-refund');
    expect(refunds.statusCode).toBe(200);
    expect((refunds.body.match(new RegExp(`href="/cabinet/payments/${pay.paymentId}"`, 'g')) ?? []).length).toBe(2);
  });

  test('a bad date in a filter is shown next to the field, never a 500', async () => {
    for (const url of ['/cabinet/payments?from=yesterday', '/cabinet/payouts?to=2026-13-45', '/cabinet/payments/refunds?from=x', '/cabinet/payments/export.csv?from=x']) {
      const r = await c.get(url);
      expect(r.statusCode, url).toBeLessThan(500);
    }
  });
});

describe('payouts: a detail page with the failure reason, error_message in the API', () => {
  test('a failed payout shows why on its page and in payout/status and payout/search; a live one says null', async () => {
    const acc = await t.app.services.payoutAccounts.create(m.merchantId, { type: 'card', identifier: '4111111111111111', cardHolder: 'IVAN IVANOV' });
    const sent = await c.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '50', order_id: 'po-fail' });
    expect(sent.statusCode).toBe(303);
    await c.submit('/cabinet/payouts/new', '/cabinet/payouts', { payout_account_id: acc.id, amount: '60', order_id: 'po-live' });
    const failed = await t.db.prisma.payout.findFirstOrThrow({ where: { merchantId: m.merchantId, orderId: 'po-fail' } });
    const live = await t.db.prisma.payout.findFirstOrThrow({ where: { merchantId: m.merchantId, orderId: 'po-live' } });
    await t.db.pool.query("UPDATE payouts SET status = 'FAIL', failure_reason = 'Card expired', finished_at = now() WHERE id = $1", [failed.id]);

    const page = await c.get(`/cabinet/payouts/${failed.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-testid="failure-reason">Card expired<');
    const livePage = await c.get(`/cabinet/payouts/${live.id}`);
    expect(livePage.body).not.toContain('data-testid="failure-reason"');
    const list = await c.get('/cabinet/payouts?q=po-fail');
    expect(list.body).toContain(`href="/cabinet/payouts/${failed.id}"`);
    expect(list.body).not.toContain(`href="/cabinet/payouts/${live.id}"`);
    expect((await c.get('/cabinet/payouts?q=1111')).body).toContain(`href="/cabinet/payouts/${live.id}"`);
    const stranger = await signedIn(t, await cabinetMerchant(t));
    expect((await stranger.get(`/cabinet/payouts/${failed.id}`)).statusCode).toBe(404);

    const st = await t.app.inject({ method: 'GET', url: `/api/v1/payout/status?id=${failed.id}`, headers: m.auth });
    expect(st.json()).toMatchObject({ id: failed.id, status: 'FAIL', error_message: 'Card expired' });
    const st2 = await t.app.inject({ method: 'GET', url: `/api/v1/payout/status?id=${live.id}`, headers: m.auth });
    expect(st2.json().error_message).toBeNull();
    const search = await t.app.inject({ method: 'GET', url: '/api/v1/payout/search', headers: m.auth });
    const byId = Object.fromEntries((search.json().data as { id: string; error_message: string | null }[]).map((p) => [p.id, p.error_message]));
    expect(byId).toMatchObject({ [failed.id]: 'Card expired', [live.id]: null });
  });
});

describe('payments: why a FAIL failed (issue 16), as the API says it', () => {
  test('a declined payment shows error_message in the list and on its page, error_code as its title; a paid one shows none', async () => {
    const api = (await t.app.inject({ method: 'GET', url: `/api/v1/payment/status?id=${declined.paymentId}`, headers: m.auth })).json();
    expect(api).toMatchObject({ status: 'FAIL', error_code: 'card_declined', error_message: 'The card was declined by the issuer.' });
    const reason = `data-testid="failure-reason" data-error-code="card_declined" title="card_declined">The card was declined by the issuer.`;

    const list = await c.get('/cabinet/payments?lang=en');
    expect(list.statusCode).toBe(200);
    // One reason on the page: the declined payment's row, not the paid one's.
    expect(list.body.split('data-testid="failure-reason"')).toHaveLength(2);
    const row = (html: string, id: string) => html.split('<tr>').find((r) => r.includes(`href="/cabinet/payments/${id}"`))!;
    expect(row(list.body, declined.paymentId)).toContain(reason);
    expect(row(list.body, paid.paymentId)).not.toContain('failure-reason');

    const page = await c.get(`/cabinet/payments/${declined.paymentId}?lang=en`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<dt>Failure reason</dt>');
    expect(page.body).toContain(reason);
    // No refund form for money never received, and the refund card says why instead of standing empty.
    expect(page.body).not.toContain(`/cabinet/payments/${declined.paymentId}/refund`);
    expect(page.body).toContain('data-testid="nothing-to-refund">Nothing to refund');
    const paidPage = await c.get(`/cabinet/payments/${paid.paymentId}?lang=en`);
    expect(paidPage.body).not.toContain('failure-reason');
    expect(paidPage.body).not.toContain('nothing-to-refund');
  });

  test('the payments CSV carries error_code and error_message: filled for a FAIL, empty otherwise', async () => {
    const lines = (await c.get('/cabinet/payments/export.csv?lang=en')).body.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(lines[0]!.endsWith(',Error code,Error message')).toBe(true);
    expect(lines.find((l) => l.startsWith(`${declined.paymentId},`))!.endsWith(',card_declined,The card was declined by the issuer.')).toBe(true);
    expect(lines.find((l) => l.startsWith(`${paid.paymentId},`))!.endsWith(',,')).toBe(true);
    const ru = (await c.get('/cabinet/payments/export.csv?lang=ru')).body.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(ru[0]!.endsWith(';Код ошибки;Текст ошибки')).toBe(true);
  });
});

describe('CSV exports', () => {
  test('payments in English: BOM, commas, decimal dot, the filters applied, oldest first', async () => {
    const r = await c.get('/cabinet/payments/export.csv?lang=en');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(r.headers['content-disposition']).toBe('attachment; filename="payments.csv"');
    expect(r.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const lines = r.body.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(lines[0]).toBe('ID,Bill,Order ID,Status,Amount,Received,Currency,Commission,Refunded,Method,Card,Payer email,Shop,Created,Finished,Error code,Error message');
    const rowOf = (id: string) => lines.find((l) => l.startsWith(`${id},`))!;
    expect(rowOf(paid.paymentId)).toContain(`,${paid.billId},order-find-1,Success,1500.00,1500.00,RUB,`);
    expect(rowOf(declined.paymentId)).toContain('Payer@Example.test');
    expect(lines.indexOf(rowOf(paid.paymentId))).toBeLessThan(lines.indexOf(rowOf(declined.paymentId)));
    expect(r.body).not.toContain(other.paymentId);
    const filtered = await c.get('/cabinet/payments/export.csv?lang=en&status=FAIL');
    expect(filtered.body).toContain(declined.paymentId);
    expect(filtered.body).not.toContain(paid.paymentId);
    const future = await c.get('/cabinet/payments/export.csv?lang=en&from=2099-01-01&to=2099-01-31');
    expect(future.headers['content-disposition']).toBe('attachment; filename="payments-2099-01-01_2099-01-31.csv"');
    expect(future.body.replace(/^\uFEFF/, '').trim().split('\r\n')).toHaveLength(1);
  });

  test('payments in Russian: semicolons and a decimal comma', async () => {
    const r = await c.get('/cabinet/payments/export.csv?lang=ru&q=order-find-1');
    const lines = r.body.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(lines[0]!.startsWith('ID;Счёт;Номер заказа;Статус;Сумма;')).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(';Успешно;1500,00;1500,00;RUB;');
  });

  test('payouts and refunds export; the balance statement lists every movement, signed', async () => {
    const payouts = await c.get('/cabinet/payouts/export.csv?lang=en');
    expect(payouts.body).toContain('Card expired');
    expect(payouts.body).toContain('po-live');
    const refunds = await c.get('/cabinet/payments/refunds/export.csv?lang=en');
    expect(refunds.body.replace(/^\uFEFF/, '').trim().split('\r\n').length).toBeGreaterThanOrEqual(3);
    const st = await c.get('/cabinet/statement.csv?lang=en');
    expect(st.statusCode).toBe(200);
    const lines = st.body.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(lines[0]).toBe('Date,Transfer,Operation,Object,Object ID,Balance part,Amount,Currency,Note');
    const credit = lines.find((l) => l.includes(`,Payment credited,`) && l.includes(paid.paymentId));
    expect(credit).toMatch(/,Available,\d+\.\d{2},RUB,/);
    // A payout lock moves money from available (−) to locked (+).
    const lock = lines.filter((l) => l.includes(',Payout locked,'));
    expect(lock.some((l) => /,Available,-50\.00,/.test(l))).toBe(true);
    expect(lock.some((l) => /,Locked,50\.00,/.test(l))).toBe(true);
    // The sum of the statement's available lines is the available balance.
    const bal = await t.db.prisma.balance.findUniqueOrThrow({ where: { merchantId_currency: { merchantId: m.merchantId, currency: 'RUB' } } });
    const { Decimal } = await import('decimal.js');
    const sum = lines.slice(1).filter((l) => l.includes(',Available,')).reduce((s, l) => s.add(l.split(',')[6]!), new Decimal(0));
    expect(sum.toFixed(2)).toBe(bal.available.toFixed(2));
  });
});

describe('CSV exports stream every page', () => {
  test('1,234 refunds come out once each, oldest first, across the 500-row batches', async () => {
    const mm = await cabinetMerchant(t, { merchant: { grantRefunds: true } });
    const cc = await signedIn(t, mm);
    const p = await payNewBill(t, mm, { amount: '100.00' });
    await t.db.pool.query(
      `INSERT INTO refunds (id, merchant_id, payment_id, status, amount, currency, created_at, updated_at)
       SELECT 'bulk' || lpad(g::text, 5, '0'), $1, $2, 'FAIL', 0.01, 'RUB', now() - interval '1 hour' + g * interval '1 millisecond', now()
         FROM generate_series(1, 1234) g`,
      [mm.merchantId, p.paymentId],
    );
    // Same created_at for two rows: the id breaks the tie, nothing is lost at a batch edge.
    await t.db.pool.query("UPDATE refunds SET created_at = (SELECT created_at FROM refunds WHERE id = 'bulk00500') WHERE id = 'bulk00501'");
    const r = await cc.get('/cabinet/payments/refunds/export.csv?lang=en');
    expect(r.statusCode).toBe(200);
    const ids = r.body.replace(/^\uFEFF/, '').trim().split('\r\n').slice(1).map((l) => l.split(',')[0]);
    expect(ids).toHaveLength(1234);
    expect(ids).toEqual(Array.from({ length: 1234 }, (_, i) => `bulk${String(i + 1).padStart(5, '0')}`));
  });
});

describe('money as people read it', () => {
  test('amounts show separators, two decimals and the ruble sign, by language', async () => {
    const en = await c.get(`/cabinet/payments/${paid.paymentId}?lang=en`);
    expect(en.body).toContain('RUB\u00a01,500.00');
    const ru = await c.get(`/cabinet/payments/${paid.paymentId}?lang=ru`);
    expect(ru.body).toContain('1\u00a0500,00\u00a0₽');
  });

  test('the cabinet forms accept "1 500,00"; "1 0" is still refused and stores nothing', async () => {
    await c.get('/cabinet?lang=ru');
    const r = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '1 500,00', shop_id: m.shopId, order_id: 'typed-ru' });
    expect(r.statusCode).toBe(303);
    expect((await t.db.prisma.bill.findFirstOrThrow({ where: { merchantId: m.merchantId, orderId: 'typed-ru' } })).amount.toFixed(2)).toBe('1500.00');
    const bad = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '1 0', shop_id: m.shopId, order_id: 'typed-bad' });
    expect(bad.statusCode).toBe(422);
    expect(await t.db.prisma.bill.count({ where: { orderId: 'typed-bad' } })).toBe(0);
    await c.get('/cabinet?lang=en');
    const en = await c.submit('/cabinet/bills/new', '/cabinet/bills', { amount: '1,234.50', shop_id: m.shopId, order_id: 'typed-en' });
    expect(en.statusCode).toBe(303);
    expect((await t.db.prisma.bill.findFirstOrThrow({ where: { orderId: 'typed-en' } })).amount.toFixed(2)).toBe('1234.50');
  });

  test('the API keeps its wire format', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/api/v1/bill/status?id=${paid.billId}`, headers: m.auth });
    expect(r.body).not.toContain('₽');
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '1 500,00', shop_id: m.shopId } });
    expect(created.statusCode).not.toBe(200);
  });
});
