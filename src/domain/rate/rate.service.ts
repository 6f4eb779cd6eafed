import type { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { prismaTxQueryable, type Db, type InTx } from '../../db/client.js';
import { NotFoundError } from '../../errors.js';

/** Currencies a bill may be priced in besides RUB; the payer pays RUB at the operator's rate. */
export const RATE_CURRENCIES = ['USD', 'EUR'] as const;
export type RateCurrency = (typeof RATE_CURRENCIES)[number];

/** The operator's exchange rates (RUB per unit), one row per currency. */
export class RateService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  async list() {
    return this.db.prisma.fxRate.findMany({ orderBy: { currency: 'asc' } });
  }

  async set(currency: RateCurrency, rubPerUnit: Decimal, inTx?: InTx<{ before: string | null; after: string }>) {
    const value = rubPerUnit.toFixed();
    return this.db.prisma.$transaction(async (tx) => {
      const before = await tx.fxRate.findUnique({ where: { currency } });
      const r = await tx.fxRate.upsert({
        where: { currency },
        create: { currency, rubPerUnit: value },
        update: { rubPerUnit: value },
      });
      if (inTx) await inTx(prismaTxQueryable(tx), { before: before ? before.rubPerUnit.toFixed() : null, after: r.rubPerUnit.toFixed() });
      return r;
    });
  }

  /** Removes a rate: bills in that currency then answer rate-not-found. NotFoundError if none. */
  async remove(currency: RateCurrency, inTx?: InTx<{ before: string }>): Promise<void> {
    await this.db.prisma.$transaction(async (tx) => {
      const before = await tx.fxRate.findUnique({ where: { currency } });
      if (!before) throw new NotFoundError('Rate not found.');
      await tx.fxRate.delete({ where: { currency } });
      if (inTx) await inTx(prismaTxQueryable(tx), { before: before.rubPerUnit.toFixed() });
    });
  }
}
