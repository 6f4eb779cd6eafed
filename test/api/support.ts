import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { TestApp } from '../helpers/app.js';
import type { MerchantFixture } from '../factories/merchant.js';

/** Creates a bill through the API and returns its id. */
export async function createBill(t: TestApp, m: MerchantFixture, fields: Record<string, unknown> = {}): Promise<string> {
  const r = await t.app.inject({
    method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: '100.00', shop_id: m.shopId, ...fields },
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().bill_id as string;
}

export interface PaymentFields {
  status?: string;
  method?: string;
  amount?: string;
  amountReceived?: string;
  commission?: string;
  accountAmount?: string | null;
  fromCard?: string | null;
  createdAt?: Date;
  refundedAmount?: string;
}

/** Inserts a payment row directly (the payment page is another area's work). */
export async function insertPayment(t: TestApp, m: MerchantFixture, billId: string, f: PaymentFields = {}): Promise<string> {
  const id = newId();
  await t.db.pool.query(
    `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, amount_received, currency_in,
       bill_currency, commission, account_amount, account_currency, from_card, refunded_amount, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'RUB', 'RUB', $9, $10, 'RUB', $11, $12, $13)`,
    [id, billId, m.merchantId, m.shopId, f.status ?? 'SUCCESS', f.method ?? 'BANK_CARD', f.amount ?? '100.00',
      f.amountReceived ?? '100.00', f.commission ?? '0', f.accountAmount === undefined ? '100.00' : f.accountAmount,
      f.fromCard === undefined ? '424242******4242' : f.fromCard, f.refundedAmount ?? '0', f.createdAt ?? new Date()],
  );
  return id;
}

export async function setMerchant(t: TestApp, m: MerchantFixture, cols: { status?: string; subscription?: string }): Promise<void> {
  await t.db.pool.query(
    `UPDATE merchants SET status = COALESCE($2::"MerchantStatus", status),
       subscription = COALESCE($3::"SubscriptionStatus", subscription) WHERE id = $1`,
    [m.merchantId, cols.status ?? null, cols.subscription ?? null],
  );
}

export const count = async (t: TestApp, table: string): Promise<number> =>
  Number((await t.db.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);

/** A keyed error answer: the status and `{"success":false,"message":"api:error.<key>"}`. */
export function expectKeyed(r: LightMyRequestResponse, status: number, key: string): void {
  expect(r.statusCode, r.body).toBe(status);
  expect(r.json()).toEqual({ success: false, message: `api:error.${key}` });
}

export function expect422(r: LightMyRequestResponse, field?: string): void {
  expect(r.statusCode, r.body).toBe(422);
  const body = r.json();
  expect(body.success).toBe(false);
  if (field) expect(Object.keys(body.errors)).toContain(field);
}

/** A multipart/form-data body of plain fields. */
export function multipart(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  const boundary = '----testboundary7MA4YWxk';
  let payload = '';
  for (const [k, v] of Object.entries(fields)) {
    payload += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`;
  }
  payload += `--${boundary}--\r\n`;
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
