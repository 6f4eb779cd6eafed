import type { Config } from '../../config.js';
import { prismaTxQueryable, type Db, type InTx } from '../../db/client.js';
import type { Shop } from '../../generated/prisma/client.js';
import { newId } from '../../lib/ids.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { assertSafeUrl, UnsafeUrlError } from '../../outbox/url-guard.js';
import type { Currency } from '../../generated/prisma/enums.js';
import { fiscalJson, fiscalOf, parseFiscalization, type FiscalSettings } from '../receipt/fiscal.js';

export interface ShopInput {
  name: string;
  enabled?: boolean;
  defaultCurrency?: Currency;
  resultUrl?: string | null;
  successUrl?: string | null;
  failUrl?: string | null;
  /**
   * A change of the 54-FZ settings as sent (operator API `fiscalization` object, the cabinet's
   * fields), applied on what the shop stores; checked by parseFiscalization (422 per field).
   */
  fiscalization?: { raw: unknown; prefix?: string };
}

export type ShopPatch = Partial<ShopInput>;

const URL_FIELDS = [['resultUrl', 'result_url'], ['successUrl', 'success_url'], ['failUrl', 'fail_url']] as const;

export class ShopService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  /**
   * Result/Success/Fail URLs through the outbound URL guard; "" clears (null). Every refused
   * URL is reported on its own field (422).
   */
  private async guardUrls<T extends ShopPatch>(input: T): Promise<T> {
    const out: T = { ...input };
    const errors: Record<string, string[]> = {};
    for (const [key, field] of URL_FIELDS) {
      const raw = input[key];
      if (raw === undefined) continue;
      const value = raw === null || raw.trim() === '' ? null : raw.trim();
      out[key] = value as T[typeof key];
      if (value === null) continue;
      try {
        await assertSafeUrl(value, this.config.allowPrivateWebhookUrls);
      } catch (e) {
        if (!(e instanceof UnsafeUrlError)) throw e;
        errors[field] = [`The ${field.replace(/_/g, ' ')} ${e.message}.`];
      }
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    return out;
  }

  async create(merchantId: string, input: ShopInput, inTx?: InTx<{ before: Shop | null; after: Shop }>) {
    const { fiscalization, ...rest } = input;
    const fiscal = fiscalization ? parseFiscalization(fiscalization.raw, null, fiscalization.prefix) : undefined;
    const data = await this.guardUrls(rest);
    return this.db.prisma.$transaction(async (tx) => {
      const after = await tx.shop.create({ data: { id: newId(), merchantId, ...data, ...(fiscal ? { fiscalization: fiscalJson(fiscal)! } : {}) } });
      if (inTx) await inTx(prismaTxQueryable(tx), { before: null, after });
      return after;
    });
  }

  /** The merchant's shop, or NotFoundError (also when it belongs to another merchant). */
  async get(merchantId: string, shopId: string) {
    const shop = await this.db.prisma.shop.findFirst({ where: { id: shopId, merchantId } });
    if (!shop) throw new NotFoundError('Shop not found.');
    return shop;
  }

  /** A shop by id for the operator, whoever owns it. */
  async getAny(shopId: string) {
    const shop = await this.db.prisma.shop.findUnique({ where: { id: shopId } });
    if (!shop) throw new NotFoundError('Shop not found.');
    return shop;
  }

  async list(merchantId: string) {
    return this.db.prisma.shop.findMany({ where: { merchantId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /**
   * Shop settings: only the owner's shop changes (another merchant's shop is NotFoundError and
   * stays untouched); URLs pass the guard before anything is written.
   */
  async update(merchantId: string, shopId: string, input: ShopPatch, inTx?: InTx<{ before: Shop | null; after: Shop }>) {
    const { fiscalization, ...rest } = input;
    const data = await this.guardUrls(rest);
    return this.db.prisma.$transaction(async (tx) => {
      const before = await tx.shop.findFirst({ where: { id: shopId, merchantId } });
      if (!before) throw new NotFoundError('Shop not found.');
      // Merged with what the shop stores, read in this transaction (a field not sent keeps its value).
      const fiscal: FiscalSettings | undefined = fiscalization ? parseFiscalization(fiscalization.raw, fiscalOf(before.fiscalization), fiscalization.prefix) : undefined;
      const after = await tx.shop.update({ where: { id: shopId }, data: { ...data, ...(fiscal ? { fiscalization: fiscalJson(fiscal)! } : {}) } });
      if (inTx) await inTx(prismaTxQueryable(tx), { before, after });
      return after;
    });
  }
}
