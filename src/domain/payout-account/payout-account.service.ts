import type { Config } from '../../config.js';
import { prismaTxQueryable, type Db, type InTx } from '../../db/client.js';
import type { PayoutAccount } from '../../generated/prisma/client.js';
import { newId } from '../../lib/ids.js';
import { encrypt } from '../../lib/crypto.js';
import { cardDigits, luhnValid, maskCard, normalizePhone } from '../../lib/card.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { PayoutAccountStatus } from '../../generated/prisma/enums.js';

/** What an operator or the cabinet sends to add a payout account (validated here). */
export interface PayoutAccountInput {
  /** "card" | "sbp" (any case). */
  type: unknown;
  /** Card number (spaces and dashes allowed) or a Russian mobile phone. */
  identifier: unknown;
  cardHolder?: unknown;
  /** SBP member id of an existing bank (sbp only). */
  bankMemberId?: unknown;
}

const present = (x: unknown): boolean => x !== undefined && x !== null && x !== '';
const str = (x: unknown): string | null => (typeof x === 'string' || typeof x === 'number' ? String(x).trim() : null);

/**
 * Stored payout accounts. Storage rule the payouts area relies on: `identifier_enc` is the
 * AES-256-GCM ciphertext of the full identifier (card digits, or +7XXXXXXXXXX);
 * `identifier_masked` is maskCard(digits) for cards and the +7 phone for SBP.
 */
export class PayoutAccountService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  async create(merchantId: string, input: PayoutAccountInput, inTx?: InTx<{ before: PayoutAccount | null; after: PayoutAccount }>) {
    const errors: Record<string, string[]> = {};
    const typeRaw = str(input.type)?.toLowerCase();
    // Also `credit_card` (the regular payout's account_type) and `bank_card` (the webhook's).
    const type = typeRaw === 'card' || typeRaw === 'credit_card' || typeRaw === 'bank_card' ? 'CARD' : typeRaw === 'sbp' ? 'SBP' : null;
    if (!present(input.type)) errors.type = ['The type field is required.'];
    else if (!type) errors.type = ['The selected type is invalid.'];
    const ident = str(input.identifier);
    if (!present(input.identifier)) errors.identifier = ['The identifier field is required.'];
    else if (ident === null) errors.identifier = ['The identifier must be a string.'];

    let full: string | null = null;
    let masked: string | null = null;
    let cardHolder: string | null = null;
    let bankMemberId: bigint | null = null;
    if (type === 'CARD') {
      if (ident !== null && present(input.identifier)) {
        const digits = cardDigits(ident);
        if (!luhnValid(digits)) errors.identifier = ['The identifier is not a valid card number.'];
        else { full = digits; masked = maskCard(digits); }
      }
      const holder = str(input.cardHolder);
      if (!present(input.cardHolder)) errors.card_holder = ['The card holder field is required when type is card.'];
      else if (holder === null || holder.length === 0) errors.card_holder = ['The card holder must be a string.'];
      else if (holder.length > 255) errors.card_holder = ['The card holder may not be greater than 255 characters.'];
      else cardHolder = holder;
    } else if (type === 'SBP') {
      if (ident !== null && present(input.identifier)) {
        const phone = normalizePhone(ident);
        if (!phone) errors.identifier = ['The identifier is not a valid phone number.'];
        else { full = phone; masked = phone; }
      }
      const member = str(input.bankMemberId);
      if (!present(input.bankMemberId)) errors.bank_member_id = ['The bank member id field is required when type is sbp.'];
      else if (member === null || !/^\d{1,15}$/.test(member)) errors.bank_member_id = ['The bank member id must be an integer.'];
      else {
        const bank = await this.db.prisma.sbpBank.findUnique({ where: { memberId: BigInt(member) }, select: { memberId: true } });
        if (!bank) errors.bank_member_id = ['The selected bank member id is invalid.'];
        else bankMemberId = bank.memberId;
      }
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);

    const owner = await this.db.prisma.merchant.findUnique({ where: { id: merchantId }, select: { id: true } });
    if (!owner) throw new NotFoundError('Merchant not found.');
    return this.db.prisma.$transaction(async (tx) => {
      const after = await tx.payoutAccount.create({
        data: {
          id: newId(), merchantId, type: type!, identifierEnc: encrypt(this.config.tokenEncryptionKey, full!),
          identifierMasked: masked!, cardHolder, bankMemberId,
        },
      });
      if (inTx) await inTx(prismaTxQueryable(tx), { before: null, after });
      return after;
    });
  }

  async list(merchantId: string) {
    return this.db.prisma.payoutAccount.findMany({ where: { merchantId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /** The account by id for the operator; with `merchantId`, only that merchant's. */
  async get(id: string, merchantId?: string) {
    const a = await this.db.prisma.payoutAccount.findFirst({ where: { id, ...(merchantId ? { merchantId } : {}) } });
    if (!a) throw new NotFoundError('Payout account not found.');
    return a;
  }

  /** Operator ban/unban: a banned account refuses payouts (api:error.payout_account_banned). */
  async setStatus(id: string, status: PayoutAccountStatus, inTx?: InTx<{ before: PayoutAccount | null; after: PayoutAccount }>) {
    return this.db.prisma.$transaction(async (tx) => {
      const before = await tx.payoutAccount.findUnique({ where: { id } });
      if (!before) throw new NotFoundError('Payout account not found.');
      const after = await tx.payoutAccount.update({ where: { id }, data: { status } });
      if (inTx) await inTx(prismaTxQueryable(tx), { before, after });
      return after;
    });
  }
}
