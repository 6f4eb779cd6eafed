import { Decimal } from 'decimal.js';
import type { Currency } from '../../generated/prisma/enums.js';
import type { Queryable } from '../../db/client.js';

/** A chargeback as the services hand it out (the API view and the operator API read this). */
export interface ChargebackRecord {
  id: string;
  merchantId: string;
  paymentId: string;
  amount: Decimal;
  currency: Currency;
  reason: string;
  createdAt: Date;
}

interface ChargebackRow {
  id: string; merchant_id: string; payment_id: string; amount: string; currency: Currency; reason: string; created_at: Date;
}

const COLUMNS = 'id, merchant_id, payment_id, amount::text AS amount, currency, reason, created_at';

const toRecord = (r: ChargebackRow): ChargebackRecord => ({
  id: r.id, merchantId: r.merchant_id, paymentId: r.payment_id, amount: new Decimal(r.amount), currency: r.currency,
  reason: r.reason, createdAt: r.created_at,
});

export async function insertChargeback(
  c: Queryable, r: { id: string; merchantId: string; paymentId: string; amount: Decimal; currency: Currency; reason: string },
): Promise<ChargebackRecord> {
  const res = await c.query<ChargebackRow>(
    `INSERT INTO chargebacks (id, merchant_id, payment_id, amount, currency, reason, created_at)
     VALUES ($1, $2, $3, $4, $5::"Currency", $6, clock_timestamp()) RETURNING ${COLUMNS}`,
    [r.id, r.merchantId, r.paymentId, r.amount.toFixed(2), r.currency, r.reason],
  );
  return toRecord(res.rows[0]!);
}

/** A payment's chargebacks, newest first (scoped by merchant). */
export async function chargebacksOfPayment(c: Queryable, merchantId: string, paymentId: string): Promise<ChargebackRecord[]> {
  const r = await c.query<ChargebackRow>(
    `SELECT ${COLUMNS} FROM chargebacks WHERE payment_id = $1 AND merchant_id = $2 ORDER BY created_at DESC, id DESC`,
    [paymentId, merchantId],
  );
  return r.rows.map(toRecord);
}
