import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import type { Currency } from '../../generated/prisma/enums.js';

export interface ShopInput {
  name: string;
  enabled?: boolean;
  defaultCurrency?: Currency;
  resultUrl?: string | null;
  successUrl?: string | null;
  failUrl?: string | null;
}

export class ShopService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  async create(merchantId: string, input: ShopInput) {
    return this.db.prisma.shop.create({ data: { id: newId(), merchantId, ...input } });
  }
}
