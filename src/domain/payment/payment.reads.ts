import { Decimal } from 'decimal.js';
import type { Db } from '../../db/client.js';
import { keysetPage, type KeysetPage, type KeysetParams } from '../../db/keyset.js';
import { DomainError } from '../../errors.js';
import { refundsOfPayment, type RefundRecord } from '../refund/refund.repository.js';
import { chargebacksOfPayment, type ChargebackRecord } from '../chargeback/chargeback.repository.js';
import { PAYMENT_COLUMNS, type PaymentRow } from './payment.row.js';
import { MONEY_RECEIVED_STATUSES } from '../../kernel/statuses.js';
import { runPaymentById } from './payment-by-id.js';

/** A payment as payment/status reads it, with its refunds and chargebacks when asked for. */
export interface PaymentWithExtras {
  payment: PaymentRow;
  refunds: RefundRecord[] | null;
  chargebacks: ChargebackRecord[] | null;
}

/**
 * The merchant's reads of its payments (payment/status, payment/search): kept apart from the
 * payment service, whose file is the hot money path.
 */
export class PaymentReads {
  constructor(private readonly db: Db) {}

  /** Scoped by merchant: another merchant's payment is not found. */
  async ofMerchant(merchantId: string, id: string, extras: { refunds: boolean; chargebacks: boolean }): Promise<PaymentWithExtras> {
    const r = await runPaymentById<PaymentRow>(this.db.pool, id, {
      text: `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1 AND merchant_id = $2`, values: [id, merchantId],
    });
    const payment = r.rows[0];
    if (!payment) throw new DomainError('payment_not_found');
    const [refunds, chargebacks] = await Promise.all([
      extras.refunds ? refundsOfPayment(this.db.pool, merchantId, payment.id) : null,
      extras.chargebacks ? chargebacksOfPayment(this.db.pool, merchantId, payment.id) : null,
    ]);
    return { payment, refunds, chargebacks };
  }

  /** The merchant's payments in a window, newest first, one page. */
  search(merchantId: string, params: KeysetParams): Promise<KeysetPage<PaymentRow>> {
    return keysetPage<PaymentRow>(this.db.pool, { table: 'payments', columns: PAYMENT_COLUMNS, merchantId, params });
  }

  /**
   * Money received per day (the service time zone's days) over the last `days` days, in the
   * payer's currency (RUB): days without any are absent.
   */
  async turnoverByDay(merchantId: string, tz: string, days: number): Promise<Map<string, Decimal>> {
    const r = await this.db.pool.query<{ day: string; total: string }>(
      `SELECT to_char(COALESCE(finished_at, created_at) AT TIME ZONE $2, 'YYYY-MM-DD') AS day, SUM(amount_received)::text AS total
         FROM payments
        WHERE merchant_id = $1 AND status = ANY($3::text[]::"PaymentStatus"[])
          AND COALESCE(finished_at, created_at) >= now() - make_interval(days => $4::int)
        GROUP BY 1`,
      [merchantId, tz, MONEY_RECEIVED_STATUSES, days],
    );
    return new Map(r.rows.map((x) => [x.day, new Decimal(x.total)]));
  }
}
