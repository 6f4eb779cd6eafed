import type { Db, InTx } from '../../db/client.js';
import { prismaTxQueryable } from '../../db/client.js';
import { NotFoundError } from '../../errors.js';
import type { SbpBank } from '../../generated/prisma/client.js';

/** An SBP bank as the merchant API's dictionary answers it (BIGINT/BIC as text). */
export interface SbpBankRow { member_id: string; name: string; name_en: string; bic: string }

/** The SBP bank dictionary: merchants see the active banks, the operator all of them and switches them. */
export class SbpBankService {
  constructor(private readonly db: Db) {}

  async listActive(): Promise<SbpBankRow[]> {
    const r = await this.db.pool.query<SbpBankRow>('SELECT member_id, name, name_en, bic FROM sbp_banks WHERE active ORDER BY member_id');
    return r.rows;
  }

  /** The active banks by name (the cabinet's payout account form). */
  activeByName(): Promise<SbpBank[]> {
    return this.db.prisma.sbpBank.findMany({ where: { active: true }, orderBy: { name: 'asc' } });
  }

  listAll(): Promise<SbpBank[]> {
    return this.db.prisma.sbpBank.findMany({ orderBy: { memberId: 'asc' } });
  }

  /** Activates or deactivates a bank; `inTx` (the audit entry) runs in the same transaction. NotFoundError if unknown. */
  async exists(memberId: bigint): Promise<void> {
    if (!(await this.db.prisma.sbpBank.findUnique({ where: { memberId }, select: { memberId: true } }))) throw new NotFoundError('SBP bank not found.');
  }

  async setActive(memberId: bigint, active: boolean, inTx?: InTx<{ before: SbpBank; after: SbpBank }>): Promise<SbpBank> {
    await this.exists(memberId);
    return this.db.prisma.$transaction(async (tx) => {
      const before = await tx.sbpBank.findUniqueOrThrow({ where: { memberId } });
      const after = await tx.sbpBank.update({ where: { memberId }, data: { active } });
      if (inTx) await inTx(prismaTxQueryable(tx), { before, after });
      return after;
    });
  }
}
