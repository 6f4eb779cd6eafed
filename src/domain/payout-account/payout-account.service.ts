import type { Config } from '../../config.js';
import { prismaTxQueryable, type Db, type InTx } from '../../db/client.js';
import type { PayoutAccount } from '../../generated/prisma/client.js';
import { newId } from '../../lib/ids.js';
import { encrypt } from '../../lib/crypto.js';
import { cardDigits, luhnValid, maskCard, normalizePhone } from '../../lib/card.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { PayoutAccountStatus } from '../../generated/prisma/enums.js';
import { takesCard, tokenAccount, type CardTokenProvider, type PayoutWidget } from '../providers/connector.js';
import { PAYOUT_TOKEN_ISSUERS } from '../providers/connectors/index.js';
import type { ConnectorRegistry } from '../providers/registry.js';

/** What an operator or the cabinet sends to add a payout account (validated here). */
export interface PayoutAccountInput {
  /** "card" | "sbp" (any case). */
  type: unknown;
  /** Card number (spaces and dashes allowed) or a Russian mobile phone; none for a tokenized card. */
  identifier: unknown;
  cardHolder?: unknown;
  /** SBP member id of an existing bank (sbp only). */
  bankMemberId?: unknown;
  /**
   * A card known by an issuer's payout widget instead of its number (docs/adr/0070, 0133): the
   * widget's payout_token, first6 and last4 (required with it), card_type and issuer_name (optional).
   */
  payoutToken?: unknown;
  first6?: unknown;
  last4?: unknown;
  cardType?: unknown;
  issuerName?: unknown;
}

/** How a merchant's card payout accounts may be added, from its card payout route (the cabinet's form). */
export interface CardEntry {
  /** The provider's widget of the first connector on the route that has one (the card never reaches this service). */
  widget: (PayoutWidget & { connector: string }) | null;
  /** Whether a card number may be typed: some connector on the route takes one, or the route is empty. */
  numbers: boolean;
}

/** What a payout token may look like: printable ASCII without spaces (the issuers document no format). */
const TOKEN_RE = /^[\x21-\x7e]{1,500}$/;

const present = (x: unknown): boolean => x !== undefined && x !== null && x !== '';
const str = (x: unknown): string | null => (typeof x === 'string' || typeof x === 'number' ? String(x).trim() : null);

/**
 * Stored payout accounts. Storage rule the payouts area relies on: `identifier_enc` is the
 * AES-256-GCM ciphertext of the full identifier (card digits, or +7XXXXXXXXXX);
 * `identifier_masked` is maskCard(digits) for cards and the +7 phone for SBP. A tokenized card
 * (`token_provider` set) holds `token:<provider>:<token>` there instead and no card number
 * anywhere; identifier_masked is first6, six stars, last4 as the widget gave them.
 */
export class PayoutAccountService {
  constructor(private readonly config: Config, private readonly db: Db, private readonly connectors?: ConnectorRegistry) {}

  async create(merchantId: string, input: PayoutAccountInput, inTx?: InTx<{ before: PayoutAccount | null; after: PayoutAccount }>) {
    const errors: Record<string, string[]> = {};
    const typeRaw = str(input.type)?.toLowerCase();
    // Also `credit_card` (the regular payout's account_type) and `bank_card` (the webhook's).
    const type = typeRaw === 'card' || typeRaw === 'credit_card' || typeRaw === 'bank_card' ? 'CARD' : typeRaw === 'sbp' ? 'SBP' : null;
    if (!present(input.type)) errors.type = ['The type field is required.'];
    else if (!type) errors.type = ['The selected type is invalid.'];
    const tokenized = present(input.payoutToken);
    const ident = str(input.identifier);
    if (tokenized && type === 'CARD') {
      if (present(input.identifier)) errors.identifier = ['The identifier must be empty when a payout token is given.'];
    } else if (!present(input.identifier)) errors.identifier = ['The identifier field is required.'];
    else if (ident === null) errors.identifier = ['The identifier must be a string.'];
    if (tokenized && type === 'SBP') errors.payout_token = ['A payout token is for cards only.'];

    let full: string | null = null;
    let masked: string | null = null;
    let cardHolder: string | null = null;
    let bankMemberId: bigint | null = null;
    let card: { type: string | null; issuer: string | null } = { type: null, issuer: null };
    let issuer: CardTokenProvider | null = null;
    if (type === 'CARD' && tokenized) {
      const token = str(input.payoutToken);
      const first6 = str(input.first6);
      const last4 = str(input.last4);
      if (token === null || !TOKEN_RE.test(token)) errors.payout_token = ['The payout token is invalid.'];
      if (first6 === null || !/^\d{6}$/.test(first6)) errors.first6 = ['The first6 field must be 6 digits.'];
      if (last4 === null || !/^\d{4}$/.test(last4)) errors.last4 = ['The last4 field must be 4 digits.'];
      card = { type: this.label(input.cardType, 'card_type', errors), issuer: this.label(input.issuerName, 'issuer_name', errors) };
      // The issuer knows the card behind its token: the holder's name is optional here.
      const holder = str(input.cardHolder);
      if (present(input.cardHolder)) {
        if (holder === null || holder.length > 255) errors.card_holder = ['The card holder may not be greater than 255 characters.'];
        else cardHolder = holder;
      }
      if (!errors.payout_token) {
        issuer = await this.tokenIssuer(merchantId);
        if (!issuer) errors.payout_token = ['Whose payout token this is cannot be told: no payout widget on this merchant\'s card payout route.'];
      }
      if (!errors.payout_token && !errors.first6 && !errors.last4) { full = tokenAccount(issuer!, token!); masked = `${first6}******${last4}`; }
    } else if (type === 'CARD') {
      if (ident !== null && present(input.identifier)) {
        const digits = cardDigits(ident);
        if (!luhnValid(digits)) errors.identifier = ['The identifier is not a valid card number.'];
        else if (!(await this.cardEntry(merchantId)).numbers) {
          // Nothing on this merchant's route may take a card number: it is not kept (PCI DSS scope).
          errors.identifier = ['This merchant\'s card payouts take no card numbers: add the card through the payout widget.'];
        } else { full = digits; masked = maskCard(digits); }
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
          tokenProvider: type === 'CARD' && tokenized ? issuer : null, cardType: card.type, cardIssuer: card.issuer,
        },
      });
      if (inTx) await inTx(prismaTxQueryable(tx), { before: null, after });
      return after;
    });
  }

  /** An optional short text the widget gave (card type, issuer's name): at most 100 characters. */
  private label(v: unknown, field: string, errors: Record<string, string[]>): string | null {
    if (!present(v)) return null;
    const x = str(v);
    if (x === null || x.length > 100) { errors[field] = [`The ${field.replace('_', ' ')} may not be greater than 100 characters.`]; return null; }
    return x;
  }

  /**
   * Whose a payout token posted for this merchant is: the issuer of the payout widget its card
   * payout route offers (the widget the token came from), else the one issuer this build's kinds
   * declare; null when neither tells.
   */
  private async tokenIssuer(merchantId: string): Promise<CardTokenProvider | null> {
    const widget = (await this.cardEntry(merchantId)).widget;
    if (widget) return widget.provider;
    const issuers = this.connectors?.payoutTokenIssuers ?? PAYOUT_TOKEN_ISSUERS;
    return issuers.length === 1 ? issuers[0]! : null;
  }

  /**
   * How this merchant's card accounts may be added: the first payout widget on its card payout
   * route, and whether a card number may be typed (some connector there takes one; an empty route
   * does not forbid it: the operator may not have set it yet).
   */
  async cardEntry(merchantId: string): Promise<CardEntry> {
    if (!this.connectors) return { widget: null, numbers: true };
    const { routing, live } = await this.connectors.routingOf(merchantId);
    const list = await this.connectors.candidates(routing.payout_card, 'payout_card', { live });
    const w = list.find((c) => c.payoutWidget && takesCard(c.capabilities, c.payoutWidget.provider));
    return {
      widget: w?.payoutWidget ? { ...w.payoutWidget, connector: w.name } : null,
      numbers: list.length === 0 || list.some((c) => takesCard(c.capabilities, 'number')),
    };
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
