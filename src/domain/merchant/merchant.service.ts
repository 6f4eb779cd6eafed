import bcrypt from 'bcryptjs';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { decrypt, encrypt, newApiToken, sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { ensureBalances } from '../ledger/ledger.js';

export interface IssuedToken { apiToken: string; apiTokenHash: string; apiTokenEnc: string }

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

  decryptToken(apiTokenEnc: string): string {
    return decrypt(this.config.tokenEncryptionKey, apiTokenEnc);
  }

  /** Starts active, unverified, with an active subscription and no grants (DESIGN.md). */
  async create(input: { name: string; email: string; passwordHash?: string | null }) {
    const t = this.issueToken();
    const merchant = await this.db.prisma.merchant.create({
      data: {
        id: newId(), name: input.name, email: input.email.toLowerCase(), passwordHash: input.passwordHash ?? null,
        apiTokenHash: t.apiTokenHash, apiTokenEnc: t.apiTokenEnc,
      },
    });
    await ensureBalances(this.db.pool, merchant.id);
    return { merchant, apiToken: t.apiToken };
  }

  /** Cabinet password, bcrypt-hashed (cost 10). */
  async setPassword(merchantId: string, password: string): Promise<void> {
    const passwordHash = await bcrypt.hash(password, 10);
    await this.db.prisma.merchant.update({ where: { id: merchantId }, data: { passwordHash } });
  }

  /** Refresh: the old token fails from the moment this commits. */
  async refreshToken(merchantId: string): Promise<string> {
    const t = this.issueToken();
    await this.db.prisma.merchant.update({
      where: { id: merchantId },
      data: { apiTokenHash: t.apiTokenHash, apiTokenEnc: t.apiTokenEnc, apiTokenIssuedAt: new Date() },
    });
    return t.apiToken;
  }
}
