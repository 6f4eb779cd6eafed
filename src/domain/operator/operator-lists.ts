import type { Db } from '../../db/client.js';
import type { Merchant } from '../../generated/prisma/client.js';

const ID_LIKE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * What the operator console lists beyond the operator API's own services (as MerchantLists is
 * the cabinet's): the work waiting on its home page, the merchant search, and which merchants
 * of a list are test twins.
 */
export class OperatorLists {
  constructor(private readonly db: Db) {}

  /** Payouts waiting for moderation and open attention items. */
  async waiting(): Promise<{ moderating: number; attention: number }> {
    const r = await this.db.pool.query<{ moderating: number; attention: number }>(
      `SELECT (SELECT count(*)::int FROM payouts WHERE status = 'MODERATING') AS moderating,
              (SELECT count(*)::int FROM attention_items WHERE resolved_at IS NULL) AS attention`,
    );
    return r.rows[0]!;
  }

  /**
   * Live merchants by email (lower case, a substring), name (any case) or exact id, newest
   * first, at most 100. Test twins (test mode's rows) are not merchants of their own.
   */
  searchMerchants(q: string): Promise<Merchant[]> {
    return this.db.prisma.merchant.findMany({
      where: {
        liveMerchantId: null,
        ...(q ? { OR: [{ email: { contains: q.toLowerCase() } }, { name: { contains: q, mode: 'insensitive' as const } }, ...(ID_LIKE.test(q) ? [{ id: q }] : [])] } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: 100,
    });
  }

  /**
   * Which of `merchantIds` are test twins (test mode's rows, `live_merchant_id` set), each with
   * its live merchant: their objects are shown marked "test" in the console's lists and link to
   * the live merchant, so an operator at night does not act on them as live money
   * (docs/adr/0040-operator-console.md).
   */
  async testTwinsOf(merchantIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(merchantIds)];
    if (ids.length === 0) return new Map();
    const r = await this.db.pool.query<{ id: string; live: string }>(
      'SELECT id, live_merchant_id AS live FROM merchants WHERE id = ANY($1::text[]) AND live_merchant_id IS NOT NULL', [ids],
    );
    return new Map(r.rows.map((x) => [x.id, x.live]));
  }

  /** The names lists show for merchant ids (a test twin has its live merchant's name). */
  async merchantNames(merchantIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(merchantIds)];
    if (ids.length === 0) return new Map();
    const r = await this.db.pool.query<{ id: string; name: string }>('SELECT id, name FROM merchants WHERE id = ANY($1::text[])', [ids]);
    return new Map(r.rows.map((x) => [x.id, x.name]));
  }
}
