import bcrypt from 'bcrypt';
import { Decimal, Decimal as DecimalJs } from 'decimal.js';
import type { Config } from '../../config.js';
import { prismaTxQueryable, withPgTx, type Db, type InTx } from '../../db/client.js';
import { decrypt, encrypt, newApiToken, sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { isTimeZone } from '../../lib/time.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { assertSafeUrl, UnsafeUrlError } from '../../outbox/url-guard.js';
import type { MerchantStatus, SubscriptionStatus } from '../../generated/prisma/enums.js';
import { Prisma, type Merchant } from '../../generated/prisma/client.js';

/** A merchant change as the audit step sees it. */
export interface MerchantChange { before: Merchant | null; after: Merchant }
import { ensureBalances } from '../ledger/ledger.js';
import { insertTestTwin } from './test-twin.js';
import { endAccountSessions } from './cabinet-sessions.js';
import { BALANCE_COLUMNS, type BalanceRow } from '../ledger/balance.row.js';
import type { AuthMerchant } from './merchant-guard.js';
import { readWithToken } from './token-read.js';

export interface IssuedToken { apiToken: string; apiTokenHash: string; apiTokenEnc: string }

/** Operator-settable merchant fields; `null` clears a limit or a fee (back to the default). */
export interface MerchantPatch {
  status?: MerchantStatus;
  verified?: boolean;
  subscription?: SubscriptionStatus;
  grantRefunds?: boolean;
  grantRegularPayouts?: boolean;
  payoutDailyLimit?: Decimal | null;
  payoutMonthlyLimit?: Decimal | null;
  moderationThreshold?: Decimal | null;
  payoutMaxCard?: Decimal;
  payoutMaxSbp?: Decimal;
  paymentCardPercent?: Decimal | null; paymentCardFixed?: Decimal | null;
  paymentSbpPercent?: Decimal | null; paymentSbpFixed?: Decimal | null;
  payoutCardPercent?: Decimal | null; payoutCardFixed?: Decimal | null;
  payoutSbpPercent?: Decimal | null; payoutSbpFixed?: Decimal | null;
  payoutWebhookUrl?: string | null;
  /** Normalised addresses/CIDRs; null (or empty) lifts the restriction. */
  apiIpAllowlist?: string[] | null;
  /** Connector names per route (the whole object, merged by the caller). */
  routing?: Record<string, string[]>;
}

const isUniqueViolation = (e: unknown): boolean => {
  const x = e as { code?: string; cause?: { code?: string }; meta?: { driverAdapterError?: { cause?: { kind?: string } } } };
  return x?.code === 'P2002' || x?.code === '23505' || x?.cause?.code === '23505' ||
    x?.meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation';
};

const isRecordNotFound = (e: unknown): boolean => (e as { code?: string })?.code === 'P2025';

/** Merchants and their API tokens. Cabinet passwords are set through `setPassword`. */
export class MerchantService {
  constructor(private readonly config: Config, private readonly db: Db) {}

  /** A new token: stored as SHA-256 (lookup) and AES-256-GCM (signing); shown to the caller once. */
  issueToken(): IssuedToken {
    const apiToken = newApiToken();
    return { apiToken, apiTokenHash: sha256Hex(apiToken), apiTokenEnc: encrypt(this.config.tokenEncryptionKey, apiToken) };
  }

  /** The merchant's current token in clear, for signing postbacks at send time. */
  async currentToken(merchantId: string): Promise<string> {
    const m = await this.db.prisma.merchant.findUniqueOrThrow({ where: { id: merchantId }, select: { apiTokenEnc: true } });
    return decrypt(this.config.tokenEncryptionKey, m.apiTokenEnc);
  }

  /**
   * What the merchant's two-stage payments hold at the providers now, per currency (the payments'
   * PROCESS with a hold: docs/adr/0073-two-stage-payments.md). Not balance: nothing is received
   * until captured, so merchant/balance never counts it; the cabinet and the operator show it.
   */
  async held(merchantId: string): Promise<{ currency: string; amount: Decimal }[]> {
    const r = await this.db.pool.query<{ currency: string; amount: string }>({
      name: 'merchant_held',
      text: `SELECT currency_in::text AS currency, sum(authorized_amount)::text AS amount FROM payments
              WHERE merchant_id = $1 AND status = 'PROCESS' AND authorized_amount IS NOT NULL
              GROUP BY currency_in ORDER BY currency_in`,
      values: [merchantId],
    });
    return r.rows.map((x) => ({ currency: x.currency, amount: new Decimal(x.amount) }));
  }

  /** The merchant's balances, one per currency (merchant/balance). */
  async balances(merchantId: string): Promise<BalanceRow[]> {
    const r = await this.db.pool.query<BalanceRow>(`SELECT ${BALANCE_COLUMNS} FROM balances WHERE merchant_id = $1 ORDER BY currency`, [merchantId]);
    return r.rows;
  }

  /** merchant/balance authenticated in its own statement: the token's merchant and its balances in one round trip. */
  balancesByToken(tokenHash: string): Promise<{ merchant: AuthMerchant; rows: BalanceRow[] } | null> {
    return readWithToken<BalanceRow>(this.db.pool, {
      name: 'merchant_balance_by_token', read: `SELECT ${BALANCE_COLUMNS} FROM balances WHERE merchant_id = m.id`, values: [], orderBy: 'currency',
    }, tokenHash);
  }

  decryptToken(apiTokenEnc: string): string {
    return decrypt(this.config.tokenEncryptionKey, apiTokenEnc);
  }

  /**
   * Starts active, unverified, with an active subscription and no grants (DESIGN.md).
   * A taken email (case-insensitive) is a 422 on `email`, also when two creations race.
   */
  async create(input: { name: string; email: string; passwordHash?: string | null }, inTx?: InTx<MerchantChange>) {
    const email = input.email.toLowerCase();
    const taken = () => new ValidationError({ email: ['The email has already been taken.'] });
    if (await this.db.prisma.merchant.findUnique({ where: { email }, select: { id: true } })) throw taken();
    const t = this.issueToken();
    const test = this.issueToken();
    let merchant;
    try {
      merchant = await this.db.prisma.$transaction(async (tx) => {
        const m = await tx.merchant.create({
          data: {
            id: newId(), name: input.name, email, passwordHash: input.passwordHash ?? null,
            apiTokenHash: t.apiTokenHash, apiTokenEnc: t.apiTokenEnc,
          },
        });
        // Its test twin (the test token's merchant) and both balance sets come with it: one
        // transaction, so a failure anywhere leaves no merchant without its balance rows.
        const c = prismaTxQueryable(tx);
        const twinId = newId();
        await insertTestTwin(c, m.id, twinId, test);
        await ensureBalances(c, m.id);
        await ensureBalances(c, twinId);
        if (inTx) await inTx(c, { before: null, after: m });
        return m;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
    return { merchant, apiToken: t.apiToken, testApiToken: test.apiToken };
  }

  /** The merchant row, or NotFoundError. A test twin is not a merchant of its own: not found. */
  async get(merchantId: string) {
    const m = await this.db.prisma.merchant.findFirst({ where: { id: merchantId, liveMerchantId: null } });
    if (!m) throw new NotFoundError('Merchant not found.');
    return m;
  }

  /** Live merchants, newest first, optionally by exact e-mail (any case). Test twins are not merchants of their own. */
  list(q: { email?: string | undefined; limit: number; offset: number }): Promise<Merchant[]> {
    return this.db.prisma.merchant.findMany({
      where: { liveMerchantId: null, ...(q.email ? { email: q.email.toLowerCase() } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: q.limit,
      skip: q.offset,
    });
  }

  /** The test twin of a live merchant (the row behind its test token), or null. */
  testTwinOf(liveMerchantId: string): Promise<Merchant | null> {
    return this.db.prisma.merchant.findUnique({ where: { liveMerchantId } });
  }

  /**
   * The live merchant's test twin, created (with a new test token, answered once) when it has
   * none yet: merchants created before test mode get theirs on first use. NotFoundError when
   * `liveMerchantId` is not a live merchant.
   */
  async ensureTestTwin(liveMerchantId: string): Promise<{ twin: Merchant; apiToken: string | null }> {
    const existing = await this.testTwinOf(liveMerchantId);
    if (existing) return { twin: existing, apiToken: null };
    await this.get(liveMerchantId);
    const t = this.issueToken();
    const twinId = newId();
    // The twin and its balance rows in one transaction (a twin without balances cannot take a test payment).
    const created = await withPgTx(this.db.pool, async (c) => {
      const inserted = await insertTestTwin(c, liveMerchantId, twinId, t);
      if (inserted) await ensureBalances(c, twinId);
      return inserted;
    });
    const twin = await this.testTwinOf(liveMerchantId);
    if (!twin) throw new NotFoundError('Merchant not found.');
    return { twin, apiToken: created ? t.apiToken : null };
  }

  /**
   * A new test token (the twin created when missing); the old test token fails from the moment
   * this commits, the live token is untouched. `created`: the twin (and so the first test
   * token) was made by this call. The caller's step (audit) sees the live merchant, unchanged.
   */
  async refreshTestToken(liveMerchantId: string, inTx?: InTx<MerchantChange>): Promise<{ apiToken: string; created: boolean }> {
    const ensured = await this.ensureTestTwin(liveMerchantId);
    const t = ensured.apiToken ? null : this.issueToken();
    await this.db.prisma.$transaction(async (tx) => {
      const live = await tx.merchant.findUniqueOrThrow({ where: { id: liveMerchantId } });
      if (t) {
        await tx.merchant.update({
          where: { id: ensured.twin.id }, data: { apiTokenHash: t.apiTokenHash, apiTokenEnc: t.apiTokenEnc, apiTokenIssuedAt: new Date() },
        });
      }
      if (inTx) await inTx(prismaTxQueryable(tx), { before: live, after: live });
    });
    return { apiToken: ensured.apiToken ?? t!.apiToken, created: ensured.apiToken !== null };
  }

  hashPassword(password: string): Promise<string> { return bcrypt.hash(password, 10); }

  /**
   * Cabinet password, bcrypt-hashed (cost 10) in the libuv thread pool, off the event loop.
   * Every session of the merchant's own login ends with the change (any password change: a stolen session must not outlive it).
   */
  async setPassword(merchantId: string, password: string, inTx?: InTx<MerchantChange>): Promise<void> {
    const passwordHash = await this.hashPassword(password);
    await this.change(merchantId, { passwordHash }, async (c, r) => {
      await endAccountSessions(c, { merchantId, userId: null });
      if (inTx) await inTx(c, r);
    });
  }

  /** One merchant update and the caller's step (the audit entry) in one transaction. */
  private async change(merchantId: string, data: Record<string, unknown>, inTx?: InTx<MerchantChange>): Promise<Merchant> {
    return this.db.prisma.$transaction(async (tx) => {
      const before = await tx.merchant.findUnique({ where: { id: merchantId } });
      if (!before) throw new NotFoundError('Merchant not found.');
      const after = await tx.merchant.update({ where: { id: merchantId }, data });
      if (inTx) await inTx(prismaTxQueryable(tx), { before, after });
      return after;
    });
  }

  /**
   * The owner's "Require two-factor authentication for everyone" (the cabinet enforces it on
   * every request); the caller's step (the audit entry) in the same transaction.
   */
  async setTwoFactorRequired(merchantId: string, required: boolean, inTx?: InTx<MerchantChange>): Promise<Merchant> {
    return this.change(merchantId, { requireTwoFactor: required }, inTx);
  }

  /**
   * The merchant's time zone (IANA name; null or '' clears it: the deployment's TZ), 422 on
   * `time_zone` for a name the runtime does not know.
   */
  async setTimeZone(merchantId: string, tz: string | null, inTx?: InTx<MerchantChange>): Promise<Merchant> {
    const value = tz === null || tz.trim() === '' ? null : tz.trim();
    if (value !== null && !isTimeZone(value)) throw ValidationError.field('time_zone', 'The time zone must be an IANA name such as Europe/Moscow.');
    return this.change(merchantId, { timeZone: value }, inTx);
  }

  /** The time zone a merchant's faces write times in: its own setting (a test twin's is its live merchant's), else null. */
  async timeZoneOf(merchantId: string): Promise<string | null> {
    const r = await this.db.pool.query<{ tz: string | null }>(
      `SELECT COALESCE(l.time_zone, m.time_zone) AS tz FROM merchants m LEFT JOIN merchants l ON l.id = m.live_merchant_id WHERE m.id = $1`, [merchantId]);
    return r.rows[0]?.tz ?? null;
  }

  /** Refresh: the old token fails from the moment this commits. */
  async refreshToken(merchantId: string, inTx?: InTx<MerchantChange>): Promise<string> {
    const t = this.issueToken();
    await this.change(merchantId, { apiTokenHash: t.apiTokenHash, apiTokenEnc: t.apiTokenEnc, apiTokenIssuedAt: new Date() }, inTx);
    return t.apiToken;
  }

  /** Operator settings (status, verification, subscription, grants, limits, fees). */
  async update(merchantId: string, patch: MerchantPatch, inTx?: InTx<MerchantChange>) {
    try {
      const { apiIpAllowlist, ...rest } = patch;
      // Decimals as exact strings: Prisma bundles its own decimal.js.
      const data: Record<string, unknown> = Object.fromEntries(Object.entries(rest).map(([k, val]) => [k, val instanceof DecimalJs ? val.toFixed() : val]));
      // [] is stored as NULL, so "no restriction" has one form (the bill/create statement tests
      // IS NULL); a JSON column's NULL needs Prisma's DbNull marker.
      if (apiIpAllowlist !== undefined) data.apiIpAllowlist = apiIpAllowlist && apiIpAllowlist.length > 0 ? apiIpAllowlist : Prisma.DbNull;
      return await this.change(merchantId, data, inTx);
    } catch (e) {
      if (isRecordNotFound(e)) throw new NotFoundError('Merchant not found.');
      throw e;
    }
  }

  /**
   * The payout webhook URL, through the outbound URL guard (422 on `url` when refused);
   * null or "" clears it.
   */
  async setPayoutWebhookUrl(merchantId: string, url: string | null | undefined, inTx?: InTx<MerchantChange>) {
    const value = url === undefined || url === null || url.trim() === '' ? null : url.trim();
    await this.get(merchantId);
    if (value !== null) {
      try {
        await assertSafeUrl(value, this.config.allowPrivateWebhookUrls);
      } catch (e) {
        if (e instanceof UnsafeUrlError) throw new ValidationError({ url: [`The url ${e.message}.`] });
        throw e;
      }
    }
    return this.update(merchantId, { payoutWebhookUrl: value }, inTx);
  }
}
