import type { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { NotFoundError } from '../../http/errors.js';

/** Currencies a bill may be priced in besides RUB; the payer pays RUB at the operator's rate. */
export const RATE_CURRENCIES = ['USD', 'EUR'] as const;
export type RateCurrency = (typeof RATE_CURRENCIES)[number];

/** The operator's exchange rates (RUB per unit), one row per currency. */
export class RateService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  async list() {
    return this.db.prisma.fxRate.findMany({ orderBy: { currency: 'asc' } });
  }

  async set(currency: RateCurrency, rubPerUnit: Decimal) {
    const value = rubPerUnit.toFixed();
    return this.db.prisma.fxRate.upsert({
      where: { currency },
      create: { currency, rubPerUnit: value },
      update: { rubPerUnit: value },
    });
  }

  /** Removes a rate: bills in that currency then answer rate-not-found. NotFoundError if none. */
  async remove(currency: RateCurrency): Promise<void> {
    const r = await this.db.prisma.fxRate.deleteMany({ where: { currency } });
    if (r.count === 0) throw new NotFoundError('Rate not found.');
  }
}
