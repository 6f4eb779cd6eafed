import { Decimal } from 'decimal.js';
import type pg from 'pg';
import type { Config } from '../../config.js';
import type { BillStatus, BillType } from '../bill/bill.states.js';
import type { Currency } from '../../generated/prisma/enums.js';
import { commissionFor, type MerchantFeeColumns } from '../merchant/fees.js';
import type { Connector } from '../providers/connector.js';
import { routedConnectorsSql, type ConnectorRegistry, type ConnectorSnapshot, type Routing } from '../providers/registry.js';
import { activeFiscal, fiscalOf, type ActiveFiscal } from '../receipt/fiscal.js';
import type { PayMethod } from './pay-input.js';
import type { Lang } from '../../lib/i18n.js';

/**
 * A bill as the payment flow reads it, and what follows from it alone: which connectors may take
 * its money by a method and what the payer owes. Read by the payer's page (payment-page.ts) and
 * by the payment's own phases (payment.service.ts) from the same statement.
 */

/** A bill as the payment page and the payment flow see it (with its shop, merchant fees and rate). */
export interface PayableBill {
  id: string;
  merchantId: string;
  shopId: string;
  shopName: string;
  orderId: string | null;
  name: string | null;
  description: string | null;
  custom: string | null;
  type: BillType;
  status: BillStatus;
  /** The bill's own flag, the shop's `enabled` and the merchant's status together. */
  active: boolean;
  amount: Decimal;
  currency: Currency;
  payerPaysCommission: boolean;
  paymentMethod: PayMethod | null;
  successUrl: string | null;
  failUrl: string | null;
  resultUrl: string | null;
  /** RUB per unit of the bill's currency (1 for RUB); null when the operator has no rate. */
  rate: Decimal | null;
  fees: MerchantFeeColumns;
  /** The bill's ttl has run out: it takes no payment. */
  expired: boolean;
  /** When the bill's ttl runs out (null: never); a provider's own page is closed then too. */
  expiresAt: Date | null;
  /** The page's "back to shop" link. */
  returnUrl: string | null;
  locale: Lang | null;
  payerEmail: string | null;
  requestFields: Array<'email' | 'phone' | 'name' | 'comment'>;
  items: Array<{ name: string; price: string; quantity: string }>;
  /** The merchant's connector routing. */
  routing: Routing;
  /** The rows of the connectors the routing names, read with the bill (fresh for every payment). */
  connectorRows: readonly ConnectorSnapshot[];
  /** A bill of the merchant's test twin (test token): no real money moves (PROVIDERS.md "Test mode"). */
  test: boolean;
  /** The shop's 54-FZ settings when it issues receipts (null: no receipt is sent). */
  fiscal: ActiveFiscal | null;
  /** false: two-stage, its payments are held and then captured or cancelled (docs/adr/0073-two-stage-payments.md). */
  capture: boolean;
  /** The page offers the payer to save the card (docs/adr/0074-saved-cards-and-recurring-charges.md). */
  savePaymentMethod: boolean;
}

/** What the payer owes for a bill with a method. */
export interface Quote {
  /** The merchant's fee, in the bill's currency. */
  commission: Decimal;
  /** What the payer owes in the bill's currency (amount, plus the fee when the payer pays it). */
  dueInBillCurrency: Decimal;
  /** What the payer pays, in RUB (payment.amount). */
  dueRub: Decimal;
  rate: Decimal;
}

const BILL_SQL = `
SELECT b.id, b.merchant_id, b.shop_id, s.name AS shop_name, b.order_id, b.name, b.description, b.custom,
       b.type::text, b.status::text, (b.active AND s.enabled AND m.status = 'ACTIVE') AS active,
       b.amount::text, b.currency_in::text AS currency, b.payer_pays_commission, b.payment_method::text,
       COALESCE(b.success_url, s.success_url) AS success_url, COALESCE(b.fail_url, s.fail_url) AS fail_url, s.result_url,
       (b.expires_at IS NOT NULL AND b.expires_at <= now()) AS expired, b.expires_at, b.return_url, b.locale, b.payer_email,
       b.request_fields, b.items,
       CASE WHEN b.currency_in = 'RUB' THEN '1' ELSE r.rub_per_unit::text END AS rate,
       m.payment_card_percent::text, m.payment_card_fixed::text, m.payment_sbp_percent::text, m.payment_sbp_fixed::text,
       m.routing, (m.live_merchant_id IS NOT NULL) AS test, s.fiscalization, b.capture, b.save_payment_method,
       ${routedConnectorsSql('m.routing')} AS connector_rows
  FROM bills b
  JOIN shops s ON s.id = b.shop_id
  JOIN merchants m ON m.id = b.merchant_id
  LEFT JOIN fx_rates r ON r.currency = b.currency_in
 WHERE b.id = $1`;

interface BillRow {
  id: string; merchant_id: string; shop_id: string; shop_name: string; order_id: string | null; name: string | null;
  description: string | null; custom: string | null; type: BillType; status: BillStatus; active: boolean; amount: string;
  currency: Currency; payer_pays_commission: boolean; payment_method: PayMethod | null; success_url: string | null;
  fail_url: string | null; result_url: string | null; rate: string | null; payment_card_percent: string | null;
  payment_card_fixed: string | null; payment_sbp_percent: string | null; payment_sbp_fixed: string | null;
  expired: boolean; expires_at: Date | null; return_url: string | null; locale: Lang | null; payer_email: string | null;
  request_fields: PayableBill['requestFields'] | null; items: PayableBill['items'] | null;
  routing: Partial<Routing> | null;
  test: boolean;
  fiscalization: unknown;
  connector_rows: ConnectorSnapshot[];
  capture: boolean;
  save_payment_method: boolean;
}

/**
 * The payer fields the page asks for: the bill's, plus the e-mail when the shop issues receipts
 * and the bill gives no way to reach the payer (a bill made before fiscalization was turned on;
 * bill/create refuses new ones): a receipt needs an e-mail or a phone (docs/adr/0026-fiscal-receipts.md).
 */
function askedFields(r: Pick<BillRow, 'request_fields' | 'payer_email'>, fiscal: ActiveFiscal | null): PayableBill['requestFields'] {
  const asked = r.request_fields ?? [];
  if (!fiscal || r.payer_email || asked.includes('email') || asked.includes('phone')) return asked;
  return [...asked, 'email'];
}

const toBill = (r: BillRow, routing: (stored: Partial<Routing> | null, live: boolean) => Routing): PayableBill => ({
  id: r.id, merchantId: r.merchant_id, shopId: r.shop_id, shopName: r.shop_name, orderId: r.order_id, name: r.name,
  description: r.description, custom: r.custom, type: r.type, status: r.status, active: r.active,
  amount: new Decimal(r.amount), currency: r.currency, payerPaysCommission: r.payer_pays_commission,
  paymentMethod: r.payment_method, successUrl: r.success_url, failUrl: r.fail_url, resultUrl: r.result_url,
  rate: r.rate === null ? null : new Decimal(r.rate),
  routing: routing(r.routing, !r.test),
  fees: {
    paymentCardPercent: r.payment_card_percent, paymentCardFixed: r.payment_card_fixed,
    paymentSbpPercent: r.payment_sbp_percent, paymentSbpFixed: r.payment_sbp_fixed,
    payoutCardPercent: null, payoutCardFixed: null, payoutSbpPercent: null, payoutSbpFixed: null,
  },
  expired: r.expired, expiresAt: r.expires_at, returnUrl: r.return_url, locale: r.locale, payerEmail: r.payer_email,
  requestFields: askedFields(r, activeFiscal(fiscalOf(r.fiscalization))), items: r.items ?? [], test: r.test,
  fiscal: activeFiscal(fiscalOf(r.fiscalization)),
  connectorRows: r.connector_rows ?? [],
  capture: r.capture,
  savePaymentMethod: r.save_payment_method,
});

export const round2 = (d: Decimal): Decimal => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

/**
 * The bill with its shop, merchant fees, rate and routed connectors; null when there is none.
 * `name`: a prepared statement's name (the payment's hot path).
 */
export async function readPayableBill(c: Pick<pg.Pool, 'query'>, connectors: ConnectorRegistry, billId: string, name?: string): Promise<PayableBill | null> {
  const r = await c.query<BillRow>(name ? { name, text: BILL_SQL, values: [billId] } : { text: BILL_SQL, values: [billId] });
  return r.rows[0] ? toBill(r.rows[0], (stored, live) => connectors.routingFor(stored, live)) : null;
}

/**
 * The connectors that may take a bill's payment by `method`, in routing order. A two-stage
 * bill (`capture: false`) is paid by card only, through connectors that hold and capture.
 */
export async function paymentCandidates(connectors: ConnectorRegistry, bill: PayableBill, method: PayMethod): Promise<Connector[]> {
  if (!bill.capture && method === 'SBP') return [];
  const all = method === 'SBP'
    ? await connectors.candidates(bill.routing.payment_sbp, 'payment_sbp', { live: !bill.test }, bill.connectorRows)
    : await connectors.candidates(bill.routing.payment_card, 'payment_card', { live: !bill.test }, bill.connectorRows);
  return bill.capture ? all : all.filter((c) => c.capabilities.twoStage === true);
}

/** What the payer owes for a bill with `method`; null when the bill's currency has no rate. */
export function quoteFor(config: Config, bill: PayableBill, method: PayMethod): Quote | null {
  if (!bill.rate) return null;
  const commission = commissionFor(config, bill.fees, method === 'SBP' ? 'payment_sbp' : 'payment_card', bill.amount);
  const dueInBillCurrency = bill.payerPaysCommission ? bill.amount.add(commission) : bill.amount;
  return { commission, dueInBillCurrency, dueRub: round2(dueInBillCurrency.mul(bill.rate)), rate: bill.rate };
}
