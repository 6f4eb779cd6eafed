import type { Decimal } from 'decimal.js';
import type { Config } from '../../config.js';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { NotFoundError } from '../../errors.js';
import { post, type BalanceRow } from '../ledger/ledger.js';
import { adjustment } from '../ledger/postings.js';
import type { Currency } from '../../generated/prisma/enums.js';

export interface AdjustmentInput { currency: Currency; amount: Decimal; reason: string }

export interface Adjustment {
  id: string;
  merchantId: string;
  currency: Currency;
  amount: Decimal;
  reason: string;
  createdAt: Date;
  balance: BalanceRow;
}

/**
 * Operator balance adjustments: the adjustment row and its ADJUSTMENT ledger posting commit
 * together or not at all. A debit that would take available below zero is refused by the
 * ledger (DomainError balance_not_enough) and leaves nothing behind.
 */
export class AdjustmentService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  async create(merchantId: string, input: AdjustmentInput, inTx?: InTx<Adjustment>): Promise<Adjustment> {
    const exists = await this.db.pool.query('SELECT 1 FROM merchants WHERE id = $1', [merchantId]);
    if (exists.rowCount === 0) throw new NotFoundError('Merchant not found.');
    const id = newId();
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query<{ created_at: Date }>(
        `INSERT INTO balance_adjustments (id, merchant_id, currency, amount, reason)
         VALUES ($1, $2, $3::"Currency", $4, $5) RETURNING created_at`,
        [id, merchantId, input.currency, input.amount.toFixed(), input.reason],
      );
      const balance = await post(c, adjustment({ adjustmentId: id, merchantId, currency: input.currency, amount: input.amount, memo: input.reason }));
      const out = { id, merchantId, currency: input.currency, amount: input.amount, reason: input.reason, createdAt: r.rows[0]!.created_at, balance };
      if (inTx) await inTx(c, out);
      return out;
    });
  }

  async list(merchantId: string) {
    return this.db.prisma.balanceAdjustment.findMany({ where: { merchantId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 1000 });
  }
}
