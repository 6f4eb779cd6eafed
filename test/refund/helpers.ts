import { Decimal } from 'decimal.js';
import { expect } from 'vitest';
import { withPgTx } from '../../src/db/client.js';
import { post } from '../../src/domain/ledger/ledger.js';
import { adjustment } from '../../src/domain/ledger/postings.js';
import { newId } from '../../src/lib/ids.js';
import type { TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

/** A merchant the operator granted refunds to. */
export const grantedMerchant = (t: TestApp, merchant: Record<string, unknown> = {}): Promise<MerchantFixture> =>
  createMerchant(t, { merchant: { grantRefunds: true, ...merchant } });

export async function refundFull(t: TestApp, m: MerchantFixture, paymentId: unknown) {
  return t.app.inject({ method: 'POST', url: '/api/v1/refund/full/create', headers: m.auth, payload: { payment_id: paymentId } });
}

export async function refundPartial(t: TestApp, m: MerchantFixture, paymentId: unknown, amount: unknown) {
  return t.app.inject({ method: 'POST', url: '/api/v1/refund/partial/create', headers: m.auth, payload: { payment_id: paymentId, amount } });
}

export async function refundStatus(t: TestApp, m: MerchantFixture, query: Record<string, string>) {
  return t.app.inject({ method: 'GET', url: '/api/v1/refund/status', headers: m.auth, query });
}

export async function balance(t: TestApp, merchantId: string, currency = 'RUB') {
  const r = await t.db.pool.query<{ available: string; locked: string; hold: string }>(
    `SELECT available::text, locked::text, hold::text FROM balances WHERE merchant_id = $1 AND currency = $2::"Currency"`,
    [merchantId, currency],
  );
  const b = r.rows[0]!;
  return { available: new Decimal(b.available).toFixed(2), locked: new Decimal(b.locked).toFixed(2), hold: new Decimal(b.hold).toFixed(2) };
}

export async function refundedAmount(t: TestApp, paymentId: string): Promise<string> {
  const r = await t.db.pool.query<{ v: string }>(`SELECT refunded_amount::text AS v FROM payments WHERE id = $1`, [paymentId]);
  return r.rows[0]!.v;
}

export async function refundCount(t: TestApp, paymentId: string): Promise<number> {
  const r = await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM refunds WHERE payment_id = $1`, [paymentId]);
  return r.rows[0]!.n;
}

/** Takes money out of available (as a payout would), leaving less than a refund needs. */
export async function debitAvailable(t: TestApp, merchantId: string, amount: string, currency: 'RUB' | 'USD' | 'EUR' = 'RUB') {
  await withPgTx(t.db.pool, (c) => post(c, adjustment({ adjustmentId: newId(), merchantId, currency, amount: new Decimal(amount).neg() })));
}

export function expect422(res: { statusCode: number; json(): unknown }, field: string) {
  expect(res.statusCode).toBe(422);
  const body = res.json() as { success: boolean; errors: Record<string, string[]> };
  expect(body.success).toBe(false);
  expect(Object.keys(body.errors)).toContain(field);
  expect(body.errors[field]![0]).toEqual(expect.any(String));
}
