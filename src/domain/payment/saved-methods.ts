import type { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import { decrypt } from '../../lib/crypto.js';
import type { BillService } from '../bill/bill.service.js';
import type { ConnectorRegistry } from '../providers/registry.js';
import type { PaymentService } from './payment.service.js';

/** A saved card as the merchant sees it (never the provider's id). */
export interface SavedMethodView { id: string; card_mask: string | null; card_expiry: string | null; connector: string; created_at: Date }

/** A revoke as its audit step sees it: `changed` only for the request that made it REVOKED. */
export interface SavedMethodRevoked { id: string; merchantId: string; changed: boolean }

/** What POST /api/v1/payment/charge asks for. */
export interface ChargeRequest {
  paymentMethodId: string; amount: Decimal; currency?: 'RUB' | 'USD' | 'EUR'; orderId?: string; description?: string;
  /** Where a fiscalized shop's receipt goes; default: the contact the payer gave when the card was saved. */
  payerEmail?: string;
}

/** The merchant's mode as its row says: a test twin (live_merchant_id set) is test. */
const MODE_SQL = `CASE WHEN m.live_merchant_id IS NULL THEN 'live' ELSE 'test' END`;

/**
 * Saved cards (docs/adr/0074-saved-cards-and-recurring-charges.md): the merchant's list, revoking,
 * and charging one. A method is the merchant's own, of its mode (live and test never meet) and
 * ACTIVE, or it is not found (422 api:error.payment_method_not_found) whatever the reason.
 */
export class SavedMethodService {
  constructor(
    private readonly config: Config, private readonly db: Db, private readonly bills: BillService,
    private readonly payments: PaymentService, private readonly connectors: ConnectorRegistry,
  ) {}

  /** The merchant's ACTIVE methods, newest first. */
  async list(merchantId: string): Promise<SavedMethodView[]> {
    const r = await this.db.pool.query<SavedMethodView>(
      `SELECT s.id, s.card_mask, s.card_expiry, s.connector, s.created_at FROM saved_payment_methods s JOIN merchants m ON m.id = s.merchant_id
        WHERE s.merchant_id = $1 AND s.status = 'ACTIVE' AND s.mode = ${MODE_SQL} ORDER BY s.created_at DESC, s.id DESC LIMIT 1000`, [merchantId]);
    return r.rows;
  }

  /**
   * REVOKED for good (twice is fine: the same answer); another merchant's or an unknown id is not
   * found. The provider is told after the commit where it has a call for it (T-Bank `RemoveCard`,
   * docs/adr/0092-saved-methods-follow-the-payer.md): it can then charge the card for no one. Its
   * refusal changes nothing here (the method is never charged by us again) and shows in the
   * connector's health as a failed call.
   */
  async revoke(merchantId: string, id: string, audit?: InTx<SavedMethodRevoked>): Promise<{ id: string; status: 'REVOKED' }> {
    const done = await withPgTx(this.db.pool, async (c) => {
      const r = await c.query<{ was: string; connector: string; provider_id_enc: string; payment_id: string }>(
        `UPDATE saved_payment_methods s SET status = 'REVOKED', revoked_at = coalesce(s.revoked_at, now())
           FROM (SELECT id, status::text AS was FROM saved_payment_methods WHERE id = $1 AND merchant_id = $2 FOR UPDATE) o
          WHERE s.id = o.id RETURNING o.was, s.connector, s.provider_id_enc, s.payment_id`, [id, merchantId]);
      if (r.rowCount !== 1) throw new DomainError('payment_method_not_found');
      const row = r.rows[0]!;
      await audit?.(c, { id, merchantId, changed: row.was === 'ACTIVE' });
      return row;
    });
    if (done.was === 'ACTIVE') await this.removeAtProvider(done.connector, decrypt(this.config.tokenEncryptionKey, done.provider_id_enc), done.payment_id);
    return { id, status: 'REVOKED' as const };
  }

  /** The provider's own removal of a method revoked here, outside any transaction (none where the provider has no such call). */
  private async removeAtProvider(name: string, providerId: string, customerKey: string): Promise<void> {
    const connector = await this.connectors.get(name);
    if (!connector?.removeSavedMethod) return;
    await this.connectors.call(connector, 'remove_saved_method', (ctx) => connector.removeSavedMethod!({ providerId, customerKey }, ctx));
  }

  /**
   * Charges a saved card: the bill (the method's shop, BANK_CARD) and its payment are written in
   * one transaction, then the connector that saved the card is called outside it, as every
   * payment (PaymentService.sendOpened). `key` (the request's Idempotency-Key) is kept on the
   * bill: a repeat with it answers the payment made the first time, never a second charge.
   */
  async charge(merchantId: string, req: ChargeRequest, key: string | null): Promise<string> {
    if (key !== null) {
      const done = await this.paymentOfKey(merchantId, key);
      if (done) return done;
    }
    // The saving payment's contact (what the payer typed, or the bill's payer_email): a
    // fiscalized shop's receipt for a charge goes where the payer's first receipt went.
    const r = await this.db.pool.query<{ id: string; shop_id: string; connector: string; provider_id_enc: string; card_mask: string | null; email: string | null; phone: string | null }>(
      `SELECT s.id, s.shop_id, s.connector, s.provider_id_enc, s.card_mask,
              coalesce(p.payer_email, b.payer_email) AS email, p.payer_phone AS phone
         FROM saved_payment_methods s JOIN merchants m ON m.id = s.merchant_id
         LEFT JOIN payments p ON p.id = s.payment_id
         LEFT JOIN bills b ON b.id = p.bill_id
        WHERE s.id = $1 AND s.merchant_id = $2 AND s.status = 'ACTIVE' AND s.mode = ${MODE_SQL}`, [req.paymentMethodId, merchantId]);
    const method = r.rows[0];
    if (!method) throw new DomainError('payment_method_not_found');
    const connector = await this.connectors.get(method.connector);
    if (!connector || !connector.capabilities.savedCards) throw new DomainError('method_unavailable');
    const email = req.payerEmail ?? method.email;
    const charge = {
      id: method.id, connector, providerId: decrypt(this.config.tokenEncryptionKey, method.provider_id_enc), mask: method.card_mask,
      payer: { email, phone: req.payerEmail ? null : method.phone },
    };
    let opened: Awaited<ReturnType<PaymentService['openCharge']>> | undefined;
    try {
      await this.bills.create({ id: merchantId }, {
        amount: req.amount, shopId: method.shop_id, currencyIn: req.currency, orderId: req.orderId, description: req.description,
        paymentMethod: 'BANK_CARD', chargeKey: key ?? undefined, payerEmail: email ?? undefined,
        // A phone the payer gave reaches the receipt as well as an e-mail (bill/create's fiscal rule).
        ...(email === null && method.phone ? { requestFields: ['phone' as const] } : {}),
      }, async (c, bill) => { opened = await this.payments.openCharge(c, bill.id, charge); });
    } catch (e) {
      // The same key at once by another request (past the Idempotency-Key lease): its charge stands.
      if (key !== null && (e as { code?: string; constraint?: string }).constraint === 'bills_merchant_charge_key_key') {
        const done = await this.paymentOfKey(merchantId, key);
        if (done) return done;
      }
      throw e;
    }
    await this.payments.sendOpened(opened!);
    return opened!.paymentId;
  }

  private async paymentOfKey(merchantId: string, key: string): Promise<string | null> {
    const r = await this.db.pool.query<{ id: string }>(
      `SELECT last_payment_id AS id FROM bills WHERE merchant_id = $1 AND charge_key = $2 AND last_payment_id IS NOT NULL`, [merchantId, key]);
    return r.rows[0]?.id ?? null;
  }
}
