import { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import type { Currency, PaymentStatus } from '../../generated/prisma/enums.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { isValidAmount, money2 } from '../../lib/money.js';
import { enqueueEvent } from '../../outbox/events.js';
import { post } from '../ledger/ledger.js';
import { chargebackDebited } from '../ledger/postings.js';
import { paymentShopOf } from '../refund/refund.repository.js';
import { runPaymentById } from '../payment/payment-by-id.js';
import { insertChargeback, chargebacksOfPayment, type ChargebackRecord } from './chargeback.repository.js';

const RECEIVED: readonly PaymentStatus[] = ['SUCCESS', 'UNDERPAID', 'OVERPAID'];

/**
 * Chargebacks the operator records against a payment (the card scheme took the money back).
 * Bounded like refunds: refunds and chargebacks of a payment together never exceed what it
 * received before commission (account_amount + commission). The amount leaves the merchant's
 * available balance through the ledger (CHARGEBACK_DEBIT); the ledger cannot express a debt, so
 * a balance that cannot cover it refuses the chargeback (api:error.balance_not_enough) and
 * nothing is stored.
 */
export class ChargebackService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  /** `audit` runs in the chargeback's transaction (every money movement is audited). */
  async create(paymentId: string, input: { amount: Decimal; reason: string }, audit?: InTx<ChargebackRecord>): Promise<ChargebackRecord> {
    if (!isValidAmount(input.amount)) throw ValidationError.field('amount', 'The amount must be greater than 0, with at most 2 decimals, and at most 99999999.99.');
    // Lock, then check, then change: the payment row lock serialises its refunds and chargebacks.
    return withPgTx(this.db.pool, async (c) => {
      const r = await runPaymentById<{ merchant_id: string; status: PaymentStatus; received: string | null; refunded: string; charged: string; currency: Currency }>(c, paymentId, {
        text: `SELECT merchant_id, status, (account_amount + commission)::text AS received, refunded_amount::text AS refunded,
                      chargeback_amount::text AS charged, account_currency AS currency
                 FROM payments WHERE id = $1`, values: [paymentId], suffix: ' FOR UPDATE' });
      const p = r.rows[0];
      if (!p) throw new NotFoundError('Payment not found.');
      if (!RECEIVED.includes(p.status) || p.received === null || new Decimal(p.received).lte(0)) {
        throw ValidationError.field('payment_id', 'The payment has received no money.');
      }
      const left = new Decimal(p.received).minus(p.refunded).minus(p.charged).toDecimalPlaces(2, Decimal.ROUND_DOWN);
      if (input.amount.gt(left)) {
        throw ValidationError.field('amount', `The amount may not be greater than ${money2(Decimal.max(left, 0))} (what the payment received less its refunds and chargebacks).`);
      }
      const cb = await insertChargeback(c, { id: newId(), merchantId: p.merchant_id, paymentId, amount: input.amount, currency: p.currency, reason: input.reason });
      await runPaymentById(c, paymentId, {
        text: `UPDATE payments SET chargeback_amount = chargeback_amount + $2, updated_at = now() WHERE id = $1`, values: [paymentId, input.amount.toFixed(2)] });
      // Overdraft: the ledger throws balance_not_enough and withPgTx rolls everything back.
      await post(c, chargebackDebited({ chargebackId: cb.id, paymentId, merchantId: p.merchant_id, currency: p.currency, amount: input.amount }));
      const shop = await paymentShopOf(c, paymentId);
      await enqueueEvent(c, {
        merchantId: p.merchant_id, kind: 'CHARGEBACK_POSTBACK', aggregateId: cb.id, url: shop.resultUrl,
        fields: {
          Id: cb.id, PaymentId: paymentId, BillId: shop.billId, InvId: shop.orderId ?? '', Amount: money2(cb.amount),
          Currency: cb.currency, Reason: cb.reason, Status: 'CHARGEBACK',
        },
      });
      if (audit) await audit(c, cb);
      return cb;
    });
  }

  /** A payment's chargebacks for the operator, whoever the merchant. */
  async listForPayment(paymentId: string): Promise<ChargebackRecord[]> {
    const r = await runPaymentById<{ merchant_id: string }>(this.db.pool, paymentId, { text: 'SELECT merchant_id FROM payments WHERE id = $1', values: [paymentId] });
    if (!r.rows[0]) throw new NotFoundError('Payment not found.');
    return chargebacksOfPayment(this.db.pool, r.rows[0].merchant_id, paymentId);
  }
}
