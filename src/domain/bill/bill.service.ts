import type { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx, type Queryable } from '../../db/client.js';
import { DomainError, UnauthenticatedError, ValidationError } from '../../errors.js';
import { assertMerchantUsable, type AuthMerchant } from '../merchant/merchant-guard.js';
import { readWithToken } from '../merchant/token-read.js';
import { assertIpAllowed } from '../merchant/ip-allowlist.js';
import { newBillId } from '../../lib/ids.js';
import { isValidAmount } from '../../lib/money.js';
import type { Lang } from '../../lib/i18n.js';
import { BILL_COLUMNS, type BillRow } from './bill.row.js';
import { PAYMENT_COLUMNS, type PaymentRow } from '../payment/payment.row.js';
import { keysetPage, type KeysetPage, type KeysetParams } from '../../db/keyset.js';
import { PAID_STATUSES, isBillFinished, type BillStatus, type BillType } from './bill.states.js';

export type Currency = 'RUB' | 'USD' | 'EUR';

/** Parsed bill/create input (the API and the cabinet both build it). */
export interface CreateBillInput {
  amount: Decimal;
  shopId: string;
  orderId?: string;
  description?: string;
  type?: BillType;
  currencyIn?: Currency;
  custom?: string;
  payerPaysCommission?: boolean;
  /** false: two-stage (docs/adr/0073-two-stage-payments.md); default true. */
  capture?: boolean;
  /** The page offers the payer to save the card (docs/adr/0074-saved-cards-and-recurring-charges.md). */
  savePaymentMethod?: boolean;
  /** POST /api/v1/payment/charge: its Idempotency-Key (unique per merchant). */
  chargeKey?: string;
  name?: string;
  paymentMethod?: 'BANK_CARD' | 'SBP';
  /** Seconds the bill takes payments. */
  ttl?: number;
  successUrl?: string;
  failUrl?: string;
  returnUrl?: string;
  locale?: Lang;
  payerEmail?: string;
  requestFields?: ReadonlyArray<'email' | 'phone' | 'name' | 'comment'>;
  items?: ReadonlyArray<{ name: string; price: string; quantity: string }>;
}

export interface CreatedBill { id: string; linkUrl: string; linkPageUrl: string; createdAt: Date }

interface CreateOutcome {
  merchant_id: string;
  /** The merchant whose shops it may bill for: itself, or a test twin's live merchant. */
  owner_id: string;
  merchant_status: 'ACTIVE' | 'BANNED';
  merchant_subscription: 'ACTIVE' | 'INACTIVE' | 'NONE';
  shop_merchant_id: string | null;
  enabled: boolean;
  currency: Currency;
  has_rate: boolean;
  inserted_at: Date | null;
  allowlist: string[] | null;
  /** The shop issues 54-FZ receipts. */
  fiscal: boolean;
}

/** bill/create's answer for a fiscalized shop's bill with no way to reach the payer (docs/adr/0026-fiscal-receipts.md). */
export const PAYER_CONTACT_REQUIRED =
  'The payer email field is required when the shop issues fiscal receipts (54-FZ), unless request_fields asks the payer for an email or a phone.';

/** Whether a bill gives a receipt an e-mail or a phone: its own payer_email, or the page asks for one. */
export function billReachesPayer(input: Pick<CreateBillInput, 'payerEmail' | 'requestFields'>): boolean {
  return !!input.payerEmail || !!input.requestFields?.some((f) => f === 'email' || f === 'phone');
}

// Finished NORMAL bills never change; the SQL guards use the same list as bill.states.ts.
const FINISHED_SQL = PAID_STATUSES.map((s) => `'${s}'`).join(', ');

/** A bill's activity before and after a toggle (for the audit step). */
export interface BillToggle { before: { id: string; active: boolean }; after: { id: string; active: boolean } }

export class BillService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  pageUrl(id: string): string { return `${this.config.publicBaseUrl}/pay/${id}`; }
  qrUrl(id: string): string { return `${this.config.publicBaseUrl}/pay/${id}/qr`; }

  /**
   * Creates a bill. Hot path: one round trip that finds the merchant (by id, or by API token
   * hash when the route authenticates in this statement), looks the shop and the rate up and
   * inserts only when every rule holds; when it did not insert, the same row says which rule
   * failed. No row: no merchant with that token (401).
   */
  async create(merchant: { id: string } | { tokenHash: string; clientIp: string }, input: CreateBillInput, inTx?: InTx<CreatedBill>): Promise<CreatedBill> {
    if (!isValidAmount(input.amount)) throw new DomainError('invalid_amount');
    // Without a step to run with it, the create statement is atomic on its own (no BEGIN/COMMIT).
    if (!inTx) return this.insert(this.db.pool, merchant, input);
    return withPgTx(this.db.pool, async (c) => {
      const bill = await this.insert(c, merchant, input);
      await inTx(c, bill);
      return bill;
    });
  }

  private async insert(c: Queryable, merchant: { id: string } | { tokenHash: string; clientIp: string }, input: CreateBillInput): Promise<CreatedBill> {
    const id = newBillId();
    const byToken = 'tokenHash' in merchant;
    const r = await c.query<CreateOutcome>({
      name: byToken ? 'bill_create_by_token' : 'bill_create',
      text: `WITH m AS (
         -- owner_id: whose shops it may bill for (a test twin uses its live merchant's shops)
         SELECT id, COALESCE(live_merchant_id, id) AS owner_id, status::text, subscription::text, api_ip_allowlist
           FROM merchants WHERE ${byToken ? 'api_token_hash' : 'id'} = $2
       ), s AS (
         SELECT id, merchant_id, enabled, COALESCE($3::"Currency", default_currency) AS currency,
                coalesce((fiscalization->>'enabled')::boolean, false) AS fiscal
           FROM shops WHERE id = $1
       ), ok AS (
         SELECT s.*, (s.currency = 'RUB' OR EXISTS (SELECT 1 FROM fx_rates r WHERE r.currency = s.currency)) AS has_rate FROM s
       ), ins AS (
         INSERT INTO bills (id, merchant_id, shop_id, order_id, name, description, custom, type, amount, currency_in,
                            payer_pays_commission, payment_method, ttl, expires_at, success_url, fail_url, return_url,
                            locale, payer_email, request_fields, items, capture, save_payment_method, charge_key)
         SELECT $4, m.id, ok.id, $5, $6, $7, $8, $9::"BillType", $10::numeric, ok.currency, $11, $12::"PaymentMethod",
                $13::int, now() + $13::int * interval '1 second', $14, $15, $16, $17, $18, $19::jsonb, $20::jsonb, $22, $23, $24
           FROM ok JOIN m ON ok.merchant_id = m.owner_id
          WHERE m.status = 'ACTIVE' AND m.subscription = 'ACTIVE' AND ok.enabled AND ok.has_rate
            -- A fiscalized shop's receipt needs the payer's e-mail or phone ($21: the bill gives one).
            AND (NOT ok.fiscal OR $21::boolean)
            -- Authenticated here by token: a merchant with an IP allow-list is checked first (below).
            AND (${byToken ? 'm.api_ip_allowlist IS NULL' : 'true'})
         RETURNING created_at
       )
       SELECT m.id AS merchant_id, m.owner_id, m.status AS merchant_status, m.subscription AS merchant_subscription,
              ok.merchant_id AS shop_merchant_id, ok.enabled, ok.currency, ok.has_rate, coalesce(ok.fiscal, false) AS fiscal,
              (SELECT created_at FROM ins) AS inserted_at, m.api_ip_allowlist AS allowlist
         FROM m LEFT JOIN ok ON true`,
      values: [
        input.shopId, byToken ? merchant.tokenHash : merchant.id, input.currencyIn ?? null, id, input.orderId ?? null, input.name ?? null,
        input.description ?? null, input.custom ?? null, input.type ?? 'NORMAL', input.amount.toFixed(2),
        input.payerPaysCommission ?? false, input.paymentMethod ?? null,
        input.ttl ?? null, input.successUrl ?? null, input.failUrl ?? null, input.returnUrl ?? null, input.locale ?? null,
        input.payerEmail ?? null, input.requestFields?.length ? JSON.stringify(input.requestFields) : null,
        input.items?.length ? JSON.stringify(input.items) : null, billReachesPayer(input), input.capture ?? true, input.savePaymentMethod ?? false, input.chargeKey ?? null,
      ],
    });
    const o = r.rows[0];
    if (!o) {
      if (byToken) throw new UnauthenticatedError();
      throw new DomainError('merchant_not_found');
    }
    if (byToken && o.allowlist !== null) {
      // Rare path: the merchant restricts its API by address; check it as the auth hook would,
      // then create as an authenticated merchant.
      assertIpAllowed({ apiIpAllowlist: o.allowlist }, merchant.clientIp);
      return this.insert(c, { id: o.merchant_id }, input);
    }
    assertMerchantUsable({ status: o.merchant_status, subscription: o.merchant_subscription }, { subscription: true });
    if (o.shop_merchant_id === null) throw new DomainError('shop_not_found');
    if (o.shop_merchant_id !== o.owner_id) throw new DomainError('access_denied');
    if (!o.enabled) throw new DomainError('shop_not_enabled');
    if (!o.has_rate) throw new DomainError('rate-not-found');
    if (o.fiscal && !billReachesPayer(input)) throw ValidationError.field('payer_email', PAYER_CONTACT_REQUIRED);
    if (!o.inserted_at) throw new Error('bill insert did not happen although every rule held');
    return { id, linkUrl: this.qrUrl(id), linkPageUrl: this.pageUrl(id), createdAt: o.inserted_at };
  }

  /**
   * Sets the activity flag. One conditional UPDATE: it changes the row only when the bill is
   * the merchant's and not a finished NORMAL bill; otherwise a read says which.
   */
  async toggle(merchant: { id: string }, input: { id: string; active: boolean }, inTx?: InTx<BillToggle>): Promise<BillRow> {
    const update = (c: Queryable) => c.query<BillRow>(
      `UPDATE bills SET active = $3, updated_at = now()
        WHERE id = $1 AND merchant_id = $2 AND NOT (type = 'NORMAL' AND status IN (${FINISHED_SQL}))
        RETURNING ${BILL_COLUMNS}`,
      [input.id, merchant.id, input.active],
    );
    // With a step (the cabinet's audit entry): the previous value read under lock, the entry in the same transaction.
    const r = !inTx ? await update(this.db.pool) : await withPgTx(this.db.pool, async (c) => {
      const prev = await c.query<{ active: boolean }>('SELECT active FROM bills WHERE id = $1 AND merchant_id = $2 FOR UPDATE', [input.id, merchant.id]);
      const u = await update(c);
      if (u.rows[0]) await inTx(c, { before: { id: input.id, active: prev.rows[0]!.active }, after: { id: input.id, active: u.rows[0].active } });
      return u;
    });
    if (r.rows[0]) return r.rows[0];
    const bill = await this.find(merchant, input.id);
    if (!bill) throw new DomainError('bill_not_found');
    if (isBillFinished({ type: bill.type as BillType, status: bill.status as BillStatus })) throw new DomainError('bill_is_finished');
    // The bill finished between the UPDATE and the read is covered above; anything else is a bug.
    throw new Error(`bill ${input.id} was not toggled for an unknown reason`);
  }

  /** The merchant's bill, or null (another merchant's bill is not found either). One query. */
  async find(merchant: { id: string }, id: string): Promise<BillRow | null> {
    const r = await this.db.pool.query<BillRow>({
      name: 'bill_find', text: `SELECT ${BILL_COLUMNS} FROM bills WHERE id = $1 AND merchant_id = $2`, values: [id, merchant.id],
    });
    return r.rows[0] ?? null;
  }

  async status(merchant: { id: string }, id: string): Promise<BillRow> {
    const bill = await this.find(merchant, id);
    if (!bill) throw new DomainError('bill_not_found');
    return bill;
  }

  /**
   * bill/status authenticated in its own statement: the merchant of the token and its bill in
   * one round trip (null: no merchant has that token). The caller checks the merchant before
   * it uses the bill.
   */
  async statusByToken(tokenHash: string, id: string): Promise<{ merchant: AuthMerchant; bill: BillRow | null } | null> {
    const r = await readWithToken<BillRow>(this.db.pool, {
      name: 'bill_status_by_token', read: `SELECT ${BILL_COLUMNS} FROM bills WHERE id = $2 AND merchant_id = m.id`, values: [id],
    }, tokenHash);
    return r && { merchant: r.merchant, bill: r.rows[0] ?? null };
  }

  /** The merchant's bills in a window, newest first, one page. */
  search(merchant: { id: string }, params: KeysetParams): Promise<KeysetPage<BillRow>> {
    return keysetPage<BillRow>(this.db.pool, { table: 'bills', columns: BILL_COLUMNS, merchantId: merchant.id, params });
  }

  /**
   * A bill's payments, oldest first, one cursor page of `params.perPage` (at most
   * `billPaymentsMax`, else api:error.too_many_payments: asking for more at once than the
   * service answers in one request is what the key means now that the list is paginated).
   */
  async payments(merchant: { id: string }, id: string, params: KeysetParams): Promise<KeysetPage<PaymentRow>> {
    if (params.perPage > this.config.billPaymentsMax) throw new DomainError('too_many_payments');
    const bill = await this.find(merchant, id);
    if (!bill) throw new DomainError('bill_not_found');
    return keysetPage<PaymentRow>(this.db.pool, {
      table: 'payments', columns: PAYMENT_COLUMNS, merchantId: merchant.id, params, filters: { bill_id: id }, order: 'asc',
    });
  }
}
