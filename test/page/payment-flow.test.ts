import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyBalances } from '../../src/domain/ledger/ledger.js';
import { md5Upper } from '../../src/lib/crypto.js';
import { newPaymentId } from '../../src/lib/ids.js';
import { SANDBOX_3DS_CARD } from '../../src/domain/providers/connectors/sandbox/index.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill, DECLINED_CARD, payRequest, REFUND_FAIL_CARD, SUCCESS_CARD } from '../factories/payment.js';
import { waitFor } from '../helpers/wait.js';
import { processDueOperations } from '../../src/workers/operation-worker.js';

let t: TestApp;
let m: MerchantFixture;

const SHOP_URLS = { resultUrl: 'http://127.0.0.1:9/result', successUrl: 'http://127.0.0.1:9/success', failUrl: 'http://127.0.0.1:9/fail' };

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t, { shop: SHOP_URLS });
});
afterAll(async () => { await t.close(); });

const q = async (sql: string, params: unknown[] = []) => (await t.db.pool.query(sql, params)).rows;
const payment = async (id: string) => (await q(
  `SELECT status::text, amount::text, amount_received::text, commission::text, account_amount::text, account_currency::text,
          currency_in::text, bill_currency::text, rate::text, from_card, method::text FROM payments WHERE id = $1`, [id]))[0];
const billRow = async (id: string) => (await q(`SELECT status::text, active FROM bills WHERE id = $1`, [id]))[0];
const balance = async (merchantId: string, currency = 'RUB') =>
  (await q(`SELECT available::text FROM balances WHERE merchant_id = $1 AND currency = $2::"Currency"`, [merchantId, currency]))[0].available as string;
const event = async (paymentId: string) => (await q(`SELECT url, status::text, payload FROM outbox_events WHERE kind = 'PAYMENT_POSTBACK' AND aggregate_id = $1`, [paymentId]))[0];

/** The acquirer declines a MULTI bill's latest payment: the bill follows it to FAIL, and the ledger balances. */
async function latestDeclined(billId: string, paymentId: string): Promise<void> {
  expect(await t.app.services.payments.applyOutcome(paymentId, { status: 'declined', code: 'declined', message: 'Declined.', ref: `declined-${paymentId}` }))
    .toEqual({ applied: true, status: 'FAIL' });
  expect((await billRow(billId)).status).toBe('FAIL');
  expect(await verifyBalances(t.db.pool)).toEqual([]);
}

/** Until `n` backends of this database wait for a lock. */
async function lockWaiters(n: number): Promise<void> {
  await waitFor(async () => (await q(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))[0].n >= n, `${n} lock waiters`);
}

describe('card payment in the sandbox', () => {
  it('the success card pays: payment and NORMAL bill SUCCESS, balance credited once, postback row, redirect to the Success URL signed', async () => {
    const billId = await createBill(t, m, { amount: '150.00', orderId: 'order-1', custom: 'c-1' });
    const before = new Decimal(await balance(m.merchantId));
    const r = await payRequest(t, billId, cardForm(SUCCESS_CARD));
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(Object.keys(body).sort()).toEqual(['payment_id', 'redirect', 'status']);
    expect(body.status).toBe('SUCCESS');
    expect(body.redirect.url).toBe(SHOP_URLS.successUrl);
    expect(body.redirect.fields).toEqual({
      InvId: 'order-1', OutSum: '150.00', CurrencyIn: 'RUB', custom: 'c-1',
      SignatureValue: md5Upper(`150.00:order-1:${m.token}`),
    });
    const p = await payment(body.payment_id);
    expect(p).toMatchObject({ status: 'SUCCESS', amount: '150.00', amount_received: '150.00', commission: '0.00', account_amount: '150.00000000', account_currency: 'RUB', currency_in: 'RUB', bill_currency: 'RUB', from_card: '424242******4242', method: 'BANK_CARD' });
    expect((await billRow(billId)).status).toBe('SUCCESS');
    expect(new Decimal(await balance(m.merchantId)).sub(before).toFixed(2)).toBe('150.00');
    const e = await event(body.payment_id);
    expect(e.url).toBe(SHOP_URLS.resultUrl);
    expect(e.status).toBe('PENDING');
    expect(e.payload.fields).toEqual({
      InvId: 'order-1', OutSum: '150.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: body.payment_id, Status: 'SUCCESS', custom: 'c-1',
      AccountType: 'BANK_CARD', AccountNumber: '424242******4242', BalanceAmount: '150.00000000', BalanceCurrency: 'RUB',
    });
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('any other Luhn-valid card pays too (5555555555554444), with spaces typed in', async () => {
    const billId = await createBill(t, m);
    const r = await payRequest(t, billId, cardForm('5555 5555 5555 4444'));
    expect(r.json().status).toBe('SUCCESS');
    expect((await payment(r.json().payment_id)).from_card).toBe('555555******4444');
    void REFUND_FAIL_CARD;
  });

  it('the declined card fails: payment and bill FAIL, no money moves, FAIL postback, redirect to the Fail URL; the bill can be paid again', async () => {
    const billId = await createBill(t, m, { amount: '42.00' });
    const before = await balance(m.merchantId);
    const r = await payRequest(t, billId, cardForm(DECLINED_CARD));
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.status).toBe('FAIL');
    expect(body.redirect.url).toBe(SHOP_URLS.failUrl);
    expect(body.redirect.fields.OutSum).toBe('0.00');
    expect(body.redirect.fields.SignatureValue).toBe(md5Upper(`0.00::${m.token}`));
    expect(await payment(body.payment_id)).toMatchObject({ status: 'FAIL', amount: '42.00', amount_received: '0.00', commission: '0.00' });
    expect((await billRow(billId)).status).toBe('FAIL');
    expect(await balance(m.merchantId)).toBe(before);
    expect((await q(`SELECT 1 FROM ledger_transfers WHERE ref_id = $1`, [body.payment_id])).length).toBe(0);
    expect((await event(body.payment_id)).payload.fields.Status).toBe('FAIL');

    const again = await payRequest(t, billId, cardForm(SUCCESS_CARD));
    expect(again.json().status).toBe('SUCCESS');
    expect((await billRow(billId)).status).toBe('SUCCESS');
  });

  it('stores only the masked card: the full number appears in no column of the payment', async () => {
    const billId = await createBill(t, m);
    const r = await payRequest(t, billId, cardForm('4111111111111111'));
    const rows = await q(`SELECT row_to_json(p)::text AS j FROM payments p WHERE id = $1`, [r.json().payment_id]);
    expect(rows[0].j).toContain('411111******1111');
    expect(rows[0].j).not.toContain('4111111111111111');
    expect(rows[0].j).not.toContain('"123"');
    const ev = await q(`SELECT payload::text AS j FROM outbox_events WHERE aggregate_id = $1`, [r.json().payment_id]);
    expect(ev[0].j).not.toContain('4111111111111111');
  });
});

describe('SBP payment in the sandbox', () => {
  it('pays at once the amount the sandbox form field names (JSON-mode shortcut)', async () => {
    const billId = await createBill(t, m, { amount: '300.00' });
    const r = await payRequest(t, billId, { method: 'SBP', amount: '300.00' });
    expect(r.json().status).toBe('SUCCESS');
    expect(await payment(r.json().payment_id)).toMatchObject({ method: 'SBP', from_card: null, amount_received: '300.00' });
  });

  it('less than due is UNDERPAID, credited in proportion, and finishes a NORMAL bill', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS });
    const billId = await createBill(t, mm, { amount: '200.00' });
    const r = await payRequest(t, billId, { method: 'SBP', amount: '150.00' });
    const body = r.json();
    expect(body.status).toBe('UNDERPAID');
    expect(body.redirect.url).toBe(SHOP_URLS.successUrl);
    expect(body.redirect.fields.OutSum).toBe('150.00');
    expect(await payment(body.payment_id)).toMatchObject({ status: 'UNDERPAID', amount: '200.00', amount_received: '150.00', account_amount: '150.00000000' });
    expect((await billRow(billId)).status).toBe('UNDERPAID');
    expect(await balance(mm.merchantId)).toBe('150.00000000');
    const again = await payRequest(t, billId, { method: 'SBP' });
    expect(again.statusCode).toBe(403);
    expect(again.json()).toEqual({ success: false, message: 'api:error.bill_is_finished' });
  });

  it('more than due is OVERPAID and credits what arrived', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS });
    const billId = await createBill(t, mm, { amount: '200.00' });
    const r = await payRequest(t, billId, { method: 'SBP', amount: '250.50' });
    expect(r.json().status).toBe('OVERPAID');
    expect((await billRow(billId)).status).toBe('OVERPAID');
    expect(await balance(mm.merchantId)).toBe('250.50000000');
  });
});

describe('commission, payer_pays_commission and currency', () => {
  it('the merchant pays the fee by default: credited amount minus percent + fixed; postback Commission', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS, merchant: { paymentCardPercent: '2.5', paymentCardFixed: '10' } });
    const billId = await createBill(t, mm, { amount: '1000.00' });
    const r = await payRequest(t, billId);
    const id = r.json().payment_id;
    expect(await payment(id)).toMatchObject({ amount: '1000.00', amount_received: '1000.00', commission: '35.00', account_amount: '965.00000000' });
    expect(await balance(mm.merchantId)).toBe('965.00000000');
    expect((await event(id)).payload.fields).toMatchObject({ OutSum: '1000.00', Commission: '35.00' });
  });

  it('payer_pays_commission: the payer pays amount + fee, the merchant gets the bill amount', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS, merchant: { paymentSbpPercent: '1', paymentSbpFixed: '0' } });
    const billId = await createBill(t, mm, { amount: '500.00', payerPaysCommission: true });
    const r = await payRequest(t, billId, { method: 'SBP', amount: '505.00' });
    const id = r.json().payment_id;
    expect(r.json().redirect.fields.OutSum).toBe('505.00');
    expect(await payment(id)).toMatchObject({ status: 'SUCCESS', amount: '505.00', amount_received: '505.00', commission: '5.00', account_amount: '500.00000000' });
    expect(await balance(mm.merchantId)).toBe('500.00000000');
  });

  it('a USD bill is paid in RUB at the operator rate and credited in USD', async () => {
    await t.db.pool.query(`INSERT INTO fx_rates (currency, rub_per_unit) VALUES ('USD', 92.5) ON CONFLICT (currency) DO UPDATE SET rub_per_unit = 92.5`);
    const mm = await createMerchant(t, { shop: SHOP_URLS, merchant: { paymentCardPercent: '2', paymentCardFixed: '0' } });
    const billId = await createBill(t, mm, { amount: '10.00', currencyIn: 'USD', orderId: 'usd-1' });
    const r = await payRequest(t, billId);
    const body = r.json();
    expect(body.status).toBe('SUCCESS');
    expect(body.redirect.fields).toMatchObject({ OutSum: '10.00', CurrencyIn: 'RUB' });
    expect(await payment(body.payment_id)).toMatchObject({ amount: '925.00', amount_received: '925.00', currency_in: 'RUB', bill_currency: 'USD', account_currency: 'USD', commission: '0.20', account_amount: '9.80000000', rate: '92.500000' });
    expect(await balance(mm.merchantId, 'USD')).toBe('9.80000000');
    expect((await event(body.payment_id)).payload.fields).toMatchObject({ OutSum: '10.00', Commission: '0.20', Currency: 'USD', CurrencyIn: 'RUB' });
  });

  it('without a rate for the bill currency the payment is refused with rate-not-found and nothing is stored', async () => {
    await t.db.pool.query(`INSERT INTO fx_rates (currency, rub_per_unit) VALUES ('EUR', 100) ON CONFLICT (currency) DO UPDATE SET rub_per_unit = 100`);
    const billId = await createBill(t, m, { amount: '5.00', currencyIn: 'EUR' });
    await t.db.pool.query(`DELETE FROM fx_rates WHERE currency = 'EUR'`);
    const r = await payRequest(t, billId);
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toBe('api:error.rate-not-found');
    expect((await q(`SELECT 1 FROM payments WHERE bill_id = $1`, [billId])).length).toBe(0);
    expect((await billRow(billId)).status).toBe('NEW');
  });
});

describe('refusals (JSON mode)', () => {
  it('unknown bill: 404 bill_not_found', async () => {
    const r = await payRequest(t, 'NoSuchBill1');
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ success: false, message: 'api:error.bill_not_found' });
  });

  it('inactive bill: 403 bill_inactive, nothing stored', async () => {
    const billId = await createBill(t, m);
    await t.db.pool.query(`UPDATE bills SET active = false WHERE id = $1`, [billId]);
    const r = await payRequest(t, billId);
    expect(r.statusCode).toBe(403);
    expect(r.json()).toEqual({ success: false, message: 'api:error.bill_inactive' });
    expect((await q(`SELECT 1 FROM payments WHERE bill_id = $1`, [billId])).length).toBe(0);
  });

  it('a disabled shop makes its bills inactive', async () => {
    const mm = await createMerchant(t, { shop: { enabled: false } });
    const billId = (await t.db.pool.query(`INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in) VALUES ('Dis' || substr(md5(random()::text), 1, 7), $1, $2, 10, 'RUB') RETURNING id`, [mm.merchantId, mm.shopId])).rows[0].id;
    const r = await payRequest(t, billId);
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toBe('api:error.bill_inactive');
  });

  it('finished NORMAL bill: 403 bill_is_finished, no second payment', async () => {
    const billId = await createBill(t, m);
    expect((await payRequest(t, billId)).json().status).toBe('SUCCESS');
    const r = await payRequest(t, billId);
    expect(r.statusCode).toBe(403);
    expect(r.json()).toEqual({ success: false, message: 'api:error.bill_is_finished' });
    expect((await q(`SELECT 1 FROM payments WHERE bill_id = $1`, [billId])).length).toBe(1);
  });

  it('a method the bill does not allow: 422 with errors.method', async () => {
    const billId = await createBill(t, m, { paymentMethod: 'SBP' });
    const r = await payRequest(t, billId, cardForm());
    expect(r.statusCode).toBe(422);
    expect(r.json().errors.method).toBeDefined();
    expect((await q(`SELECT 1 FROM payments WHERE bill_id = $1`, [billId])).length).toBe(0);
    // The fixed method is taken when the form sends none: SBP waits for the payer's bank app.
    const ok = await payRequest(t, billId, {});
    expect(ok.json()).toMatchObject({ status: 'PROCESS', action: { type: 'sbp_qr' } });
  });

  it('a bad card is 422 naming every bad field: Luhn, expiry in the past, CVC; nothing stored', async () => {
    const billId = await createBill(t, m);
    const r = await payRequest(t, billId, { method: 'BANK_CARD', card_number: '4242424242424241', card_expiry: '01/20', card_cvc: '12' });
    expect(r.statusCode).toBe(422);
    expect(Object.keys(r.json().errors).sort()).toEqual(['card_cvc', 'card_expiry', 'card_number']);
    const r2 = await payRequest(t, billId, { method: 'BANK_CARD', card_number: SUCCESS_CARD, card_expiry: '13/30', card_cvc: '123' });
    expect(r2.statusCode).toBe(422);
    expect(Object.keys(r2.json().errors)).toEqual(['card_expiry']);
    const r3 = await payRequest(t, billId, { method: 'CASH' });
    expect(r3.statusCode).toBe(422);
    expect(r3.json().errors.method).toBeDefined();
    const r4 = await payRequest(t, billId, { method: 'SBP', amount: '-5' });
    expect(r4.statusCode).toBe(422);
    expect(r4.json().errors.amount).toBeDefined();
    expect((await q(`SELECT 1 FROM payments WHERE bill_id = $1`, [billId])).length).toBe(0);
    expect((await billRow(billId)).status).toBe('NEW');
  });

  it('a JSON body is accepted as well', async () => {
    const billId = await createBill(t, m);
    const r = await t.app.inject({ method: 'POST', url: `/pay/${billId}`, headers: { accept: 'application/json' }, payload: { ...cardForm(), card_number: SUCCESS_CARD } });
    expect(r.statusCode).toBe(200);
    expect(r.json().status).toBe('SUCCESS');
  });
});

describe('MULTI bills', () => {
  it('a MULTI bill takes many payments; each is credited; its status is its latest payment\'s', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS });
    const billId = await createBill(t, mm, { amount: '10.00', type: 'MULTI' });
    expect((await payRequest(t, billId)).json().status).toBe('SUCCESS');
    expect((await payRequest(t, billId, { method: 'SBP', amount: '12.00' })).json().status).toBe('OVERPAID');
    expect((await billRow(billId)).status).toBe('OVERPAID');
    expect((await payRequest(t, billId, cardForm(DECLINED_CARD))).json().status).toBe('FAIL');
    expect((await billRow(billId)).status).toBe('FAIL');
    expect((await payRequest(t, billId)).json().status).toBe('SUCCESS');
    expect((await billRow(billId)).status).toBe('SUCCESS');
    expect(await balance(mm.merchantId)).toBe('32.00000000');
    expect(await verifyBalances(t.db.pool)).toEqual([]);
  });

  it('a MULTI bill last paid before bills recorded their latest payment follows only its latest: an older payment (the month before) finishing while a newer one runs leaves it in PROCESS; the newer one\'s finish sets it', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS });
    const billId = await createBill(t, mm, { amount: '10.00', type: 'MULTI' });
    // Two payments still waiting at the acquirer, opened before the bill had last_payment_id
    // (so its payments say which is the latest): the older an hour before this month began, in
    // the previous month's partition, which the finishing statement of a payment of this month
    // does not look into; the newer one now.
    const olderAt = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1) - 3_600_000);
    await q(`SELECT create_month_partition('payments', $1::date)`, [olderAt.toISOString().slice(0, 10)]);
    const newerAt = new Date();
    const [olderId, newerId] = [newPaymentId(olderAt), newPaymentId(newerAt)];
    for (const [id, at] of [[olderId, olderAt], [newerId, newerAt]] as const) {
      await q(
        `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency, connector, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'PROCESS', 'BANK_CARD', 10.00, 'RUB', 'RUB', 'sandbox', $5, $5)`, [id, billId, mm.merchantId, mm.shopId, at]);
    }
    await q(`UPDATE bills SET status = 'PROCESS' WHERE id = $1`, [billId]);

    // The older one is paid (and credited) while the newer one runs: the bill waits for the newer one.
    expect(await t.app.services.payments.applyOutcome(olderId, { status: 'paid', amountReceived: new Decimal('10.00'), ref: 'older-1' }))
      .toEqual({ applied: true, status: 'SUCCESS' });
    expect((await billRow(billId)).status).toBe('PROCESS');
    expect(await balance(mm.merchantId)).toBe('10.00000000');

    await latestDeclined(billId, newerId);
  });

  it('a MULTI bill follows only its latest payment: one opened while an older payment\'s finishing statement waits for the bill\'s row lock is the latest', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS });
    const billId = await createBill(t, mm, { amount: '10.00', type: 'MULTI' });
    const olderId = (await payRequest(t, billId, cardForm(SANDBOX_3DS_CARD))).json().payment_id as string;
    // Another transaction holds the bill's row lock: a new payment's opening waits for it, then
    // the older payment's finishing statement, its snapshot taken before the new payment exists.
    const x = await t.db.pool.connect();
    let opening: ReturnType<typeof payRequest>;
    let finishing: ReturnType<typeof t.app.services.payments.applyOutcome>;
    try {
      await x.query('BEGIN');
      await x.query('SELECT 1 FROM bills WHERE id = $1 FOR UPDATE', [billId]);
      opening = payRequest(t, billId, cardForm(SANDBOX_3DS_CARD));
      await lockWaiters(1);
      finishing = t.app.services.payments.applyOutcome(olderId, { status: 'paid', amountReceived: new Decimal('10.00'), ref: 'older-3' });
      await lockWaiters(2);
      await x.query('COMMIT');
    } finally {
      x.release();
    }
    const newerId = (await opening).json().payment_id as string;
    expect(await finishing).toEqual({ applied: true, status: 'SUCCESS' });
    expect((await payment(newerId)).status).toBe('PROCESS');
    // The older payment is credited; the bill waits for the newer one.
    expect((await billRow(billId)).status).toBe('PROCESS');
    await latestDeclined(billId, newerId);
  });

  it('a payment opened while another statement changes its bill (another payment opening) is created after that change commits: payments are ordered as they took the bill', async () => {
    const mm = await createMerchant(t, { shop: SHOP_URLS });
    const billId = await createBill(t, mm, { amount: '10.00', type: 'MULTI' });
    const x = await t.db.pool.connect();
    let opening: ReturnType<typeof payRequest>;
    let committedAt: Date;
    try {
      await x.query('BEGIN');
      await x.query(`UPDATE bills SET status = 'PROCESS', updated_at = now() WHERE id = $1`, [billId]);
      opening = payRequest(t, billId, cardForm(SANDBOX_3DS_CARD));
      await lockWaiters(1);
      // Time is the subject: the commit must come measurably later than the waiting request
      // started, so a payment stamped with its request's time would fail the check below.
      await new Promise((r) => setTimeout(r, 50));
      committedAt = (await x.query<{ at: Date }>('SELECT clock_timestamp() AS at')).rows[0]!.at;
      await x.query('COMMIT');
    } finally {
      x.release();
    }
    const id = (await opening).json().payment_id as string;
    const row = (await q(`SELECT p.created_at, b.last_payment_id, b.last_payment_at FROM payments p JOIN bills b ON b.id = p.bill_id WHERE p.id = $1`, [id]))[0];
    // Rounded to the column's milliseconds: at most half of one earlier.
    expect(row.created_at.getTime()).toBeGreaterThanOrEqual(committedAt.getTime() - 1);
    expect(row).toMatchObject({ last_payment_id: id, last_payment_at: row.created_at });
  });
});

describe('postback without a Result URL', () => {
  it('keeps the event row, undeliverable (DEAD), so nothing is lost or retried', async () => {
    const mm = await createMerchant(t);
    const billId = await createBill(t, mm);
    const r = await payRequest(t, billId);
    const e = await event(r.json().payment_id);
    expect(e.url).toBeNull();
    expect(e.status).toBe('DEAD');
    expect(r.json().redirect.url).toBeNull();
  });
});

describe('payments abandoned in PROCESS', () => {
  it('a NORMAL bill stuck in PROCESS refuses payments (409) until reconciliation applies the provider\'s answer (never sent: FAIL); then it can be paid', async () => {
    const billId = await createBill(t, m, { amount: '33.00' });
    await t.db.pool.query(`UPDATE bills SET status = 'PROCESS' WHERE id = $1`, [billId]);
    await t.db.pool.query(
      `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, bill_currency, account_currency, connector, next_check_at, updated_at, created_at)
       VALUES ('stuckpayment0001', $1, $2, $3, 'PROCESS', 'SBP', 33, 'RUB', 'RUB', 'sandbox', now() + interval '1 hour', now() - interval '10 minutes', now() - interval '10 minutes')`,
      [billId, m.merchantId, m.shopId]);
    const busy = await payRequest(t, billId);
    expect(busy.statusCode).toBe(409);
    expect(busy.json().message).toBe('api:error.payment_in_progress');
    // Not due yet: nothing is asked, nothing changes (no blind reaper).
    await processDueOperations(t.app, 'payment');
    expect((await payment('stuckpayment0001')).status).toBe('PROCESS');
    await t.db.pool.query(`UPDATE payments SET next_check_at = now() - interval '1 second' WHERE id = 'stuckpayment0001'`);
    await processDueOperations(t.app, 'payment');
    // The sandbox never saw it: its answer (declined, not found) fails it.
    expect(await payment('stuckpayment0001')).toMatchObject({ status: 'FAIL', amount_received: '0.00' });
    expect((await billRow(billId)).status).toBe('FAIL');
    expect((await event('stuckpayment0001')).payload.fields.Status).toBe('FAIL');
    expect((await payRequest(t, billId)).json().status).toBe('SUCCESS');
  });
});
