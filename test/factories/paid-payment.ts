import { Decimal } from 'decimal.js';
import { withPgTx } from '../../src/db/client.js';
import { post } from '../../src/domain/ledger/ledger.js';
import { paymentReceived } from '../../src/domain/ledger/postings.js';
import { newBillId, newId } from '../../src/lib/ids.js';
import type { TestApp } from '../helpers/app.js';
import type { MerchantFixture } from './merchant.js';

export interface PaidPaymentOptions {
  /** Bill amount in the bill's currency (default 100.00). */
  amount?: string;
  currency?: 'RUB' | 'USD' | 'EUR';
  /** RUB per unit for USD/EUR bills (default 90). */
  rate?: string;
  /** Commission in the bill's currency, paid by the merchant (default 0). */
  commission?: string;
  status?: 'SUCCESS' | 'UNDERPAID' | 'OVERPAID' | 'FAIL' | 'PROCESS' | 'NEW';
  /** Masked payer card (default a 4242 card; a ...4444 card makes the sandbox refund FAIL). */
  fromCard?: string | null;
  /** What the balance received; default amount - commission (0 unless money was received). */
  accountAmount?: string;
}

export interface PaidPayment { billId: string; paymentId: string; accountAmount: Decimal; currency: string }

const RECEIVED = ['SUCCESS', 'UNDERPAID', 'OVERPAID'];

/**
 * A bill and a payment that received money, written as the payment page writes them: the
 * payment final with amount_received in RUB and account_amount in the bill's currency, and the
 * merchant's balance credited with a PAYMENT_CREDIT posting in the same transaction.
 */
export async function createPaidPayment(t: TestApp, m: MerchantFixture, o: PaidPaymentOptions = {}): Promise<PaidPayment> {
  const currency = o.currency ?? 'RUB';
  const amount = new Decimal(o.amount ?? '100.00');
  const rate = currency === 'RUB' ? new Decimal(1) : new Decimal(o.rate ?? '90');
  const commission = new Decimal(o.commission ?? '0');
  const status = o.status ?? 'SUCCESS';
  const received = RECEIVED.includes(status);
  const accountAmount = o.accountAmount !== undefined ? new Decimal(o.accountAmount) : received ? amount.minus(commission) : new Decimal(0);
  const amountRub = amount.mul(rate).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
  const billId = newBillId();
  const paymentId = newId();
  await withPgTx(t.db.pool, async (c) => {
    await c.query(
      `INSERT INTO bills (id, merchant_id, shop_id, type, status, amount, currency_in)
       VALUES ($1, $2, $3, 'NORMAL', $4::"BillStatus", $5, $6::"Currency")`,
      [billId, m.merchantId, m.shopId, status, amount.toFixed(2), currency],
    );
    await c.query(
      `INSERT INTO payments (id, bill_id, merchant_id, shop_id, status, method, amount, amount_received, currency_in,
                             bill_currency, rate, commission, account_amount, account_currency, from_card, finished_at)
       VALUES ($1, $2, $3, $4, $5::"PaymentStatus", 'BANK_CARD', $6, $7, 'RUB', $8::"Currency", $9, $10, $11, $8::"Currency", $12,
               CASE WHEN $13::boolean THEN now() END)`,
      [paymentId, billId, m.merchantId, m.shopId, status, amountRub.toFixed(2), received ? amountRub.toFixed(2) : '0',
        currency, currency === 'RUB' ? null : rate.toFixed(), commission.toFixed(2),
        status === 'NEW' || status === 'PROCESS' ? null : accountAmount.toFixed(8),
        o.fromCard === undefined ? '424242******4242' : o.fromCard, status !== 'NEW' && status !== 'PROCESS'],
    );
    if (accountAmount.gt(0)) {
      await post(c, paymentReceived({
        paymentId, merchantId: m.merchantId, currency, connector: 'sandbox', receivedRub: amountRub, accountAmount, commission,
      }));
    }
  });
  return { billId, paymentId, accountAmount, currency };
}
