import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import type { PoolClient } from 'pg';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { decrypt, encrypt, sha256Hex } from '../../lib/crypto.js';
import { endAccountSessions } from '../merchant/cabinet-sessions.js';

/** The names authenticator apps show beside the account: the console's and the cabinet's. */
export const TOTP_ISSUER = 'Payment service operator';
export const CABINET_TOTP_ISSUER = 'Payment service cabinet';
export const RECOVERY_CODE_COUNT = 10;

/** A new TOTP secret: 20 random bytes (160 bits, RFC 4226's recommendation), base32. */
export const newTotpSecret = (): string => generateSecret({ length: 20 });

/** The otpauth:// URI an authenticator app scans (SHA-1, 6 digits, 30 s: what every app supports). */
export const totpUri = (email: string, secret: string, issuer = TOTP_ISSUER): string => generateURI({ issuer, label: email, secret });

/** The URI as a QR code, a PNG data: URL (the console's CSP allows data: images only). */
export const totpQrDataUrl = (uri: string): Promise<string> => QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 1, width: 220 });

/**
 * The RFC 6238 time step a six-digit code matches, one step of clock drift allowed either way,
 * and only a step after `afterStep` (a code is accepted once); null when it matches none.
 */
export async function totpStep(secret: string, code: string, afterStep: number | null): Promise<number | null> {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  try {
    const r = await verify({ secret, token, epochTolerance: 30, ...(afterStep !== null ? { afterTimeStep: afterStep } : {}) });
    return r.valid && 'timeStep' in r ? r.timeStep : null;
  } catch {
    return null;
  }
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten codes `xxxxx-xxxxx` (31 symbols: about 49 bits each), shown once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const b = randomBytes(10);
    const s = [...b].map((x) => RECOVERY_ALPHABET[x % RECOVERY_ALPHABET.length]).join('');
    return `${s.slice(0, 5)}-${s.slice(5)}`;
  });
}

/** What is stored of a recovery code: the SHA-256 of its normal form (lowercase, no dash or space). */
export const recoveryCodeHash = (code: string): string => sha256Hex(code.toLowerCase().replace(/[\s-]/g, ''));
const looksLikeRecoveryCode = (code: string): boolean => /^[a-z0-9]{5}-?[a-z0-9]{5}$/i.test(code.trim());

export type SecondFactor = 'totp' | 'recovery_code';

/**
 * The tables whose rows carry a TOTP second factor, with the same four columns
 * (totp_secret_enc, totp_enabled_at, totp_last_step, recovery_code_hashes): operators (required)
 * and cabinet accounts, the merchant's own login and team members (optional). A fixed list:
 * the name is put into SQL.
 */
export type TwoFactorTable = 'operators' | 'merchants' | 'merchant_users';

/**
 * TOTP (RFC 6238) and recovery codes, one implementation for the console and the cabinet. The
 * secret is stored AES-256-GCM encrypted (TOKEN_ENCRYPTION_KEY), recovery codes as SHA-256
 * digests; a used code is removed and a TOTP step is accepted once (`totp_last_step`, advanced
 * under the row's lock so two requests with the same code cannot both pass). Each change runs
 * with the caller's audit step, in the same transaction.
 */
export class TwoFactor {
  constructor(protected readonly db: Db, private readonly key: Buffer, protected readonly table: TwoFactorTable) {}

  sealSecret(secret: string): string { return encrypt(this.key, secret); }
  openSecret(box: string): string { return decrypt(this.key, box); }

  /**
   * Turns TOTP on with `secret` once `code` proves the app has it; new recovery codes replace
   * any old ones. Null when the code is wrong (nothing changes).
   */
  async enable(id: string, secret: string, code: string, inTx?: InTx<{ id: string }>): Promise<{ recoveryCodes: string[] } | null> {
    const step = await totpStep(secret, code, null);
    if (step === null) return null;
    const recoveryCodes = newRecoveryCodes();
    await withPgTx(this.db.pool, async (c) => {
      await c.query(
        `UPDATE ${this.table} SET totp_secret_enc = $2, totp_enabled_at = now(), totp_last_step = $3,
                recovery_code_hashes = $4::jsonb, updated_at = now()
          WHERE id = $1`,
        [id, this.sealSecret(secret), step, JSON.stringify(recoveryCodes.map(recoveryCodeHash))],
      );
      if (inTx) await inTx(c, { id });
    });
    return { recoveryCodes };
  }

  /**
   * Checks a second factor: a current TOTP code not used before, or an unused recovery code
   * (then spent). The caller's step (the audit entry) runs in the same transaction.
   */
  async check(id: string, code: string, inTx?: InTx<{ factor: SecondFactor; codesLeft: number }>): Promise<SecondFactor | null> {
    return withPgTx(this.db.pool, async (c) => {
      const r = await this.spend(c, id, code);
      if (r && inTx) await inTx(c, r);
      return r?.factor ?? null;
    });
  }

  /**
   * Turns TOTP off when `code` is a current TOTP code or an unused recovery code (the owner of
   * the account proves it again; a stolen session alone cannot); null when it is not.
   */
  async disable(id: string, code: string, inTx?: InTx<{ factor: SecondFactor }>): Promise<SecondFactor | null> {
    return withPgTx(this.db.pool, async (c) => {
      const r = await this.spend(c, id, code);
      if (!r) return null;
      await this.clear(c, id);
      if (inTx) await inTx(c, { factor: r.factor });
      return r.factor;
    });
  }

  /** The code's factor, spent (its step or the recovery code used up), under the row's lock. */
  private async spend(c: PoolClient, id: string, code: string): Promise<{ factor: SecondFactor; codesLeft: number } | null> {
    const r = await c.query<{ totp_secret_enc: string | null; totp_last_step: string | null; left: number }>(
      `SELECT totp_secret_enc, totp_last_step, jsonb_array_length(recovery_code_hashes) AS left
         FROM ${this.table} WHERE id = $1 AND totp_enabled_at IS NOT NULL FOR UPDATE`, [id],
    );
    const row = r.rows[0];
    if (!row?.totp_secret_enc) return null;
    const code_ = code.trim().slice(0, 40);
    const step = await totpStep(this.openSecret(row.totp_secret_enc), code_, row.totp_last_step === null ? null : Number(row.totp_last_step));
    if (step !== null) {
      await c.query(`UPDATE ${this.table} SET totp_last_step = $2 WHERE id = $1`, [id, step]);
      return { factor: 'totp', codesLeft: row.left };
    }
    if (!looksLikeRecoveryCode(code_)) return null;
    const u = await c.query(
      `UPDATE ${this.table} SET recovery_code_hashes = recovery_code_hashes - $2::text, updated_at = now()
        WHERE id = $1 AND recovery_code_hashes ? $2::text RETURNING id`,
      [id, recoveryCodeHash(code_)],
    );
    return u.rowCount === 0 ? null : { factor: 'recovery_code', codesLeft: row.left - 1 };
  }

  protected async clear(c: PoolClient, id: string): Promise<void> {
    await c.query(
      `UPDATE ${this.table} SET totp_secret_enc = NULL, totp_enabled_at = NULL, totp_last_step = NULL,
              recovery_code_hashes = '[]'::jsonb, updated_at = now() WHERE id = $1`, [id],
    );
  }

  /** Recovery codes left unused. */
  async recoveryCodesLeft(id: string): Promise<number> {
    const r = await this.db.pool.query<{ n: number }>(`SELECT jsonb_array_length(recovery_code_hashes) AS n FROM ${this.table} WHERE id = $1`, [id]);
    return r.rows[0]?.n ?? 0;
  }
}

/** Operators' TOTP, required for the console; an admin may reset it (a lost phone). */
export class OperatorTwoFactor extends TwoFactor {
  constructor(db: Db, key: Buffer) { super(db, key, 'operators'); }

  /** Turns TOTP off without a code (an admin's reset): the next sign-in enrols again; every console session ends. */
  async reset(operatorId: string, inTx?: InTx<{ operatorId: string; wasEnabled: boolean }>): Promise<boolean> {
    return withPgTx(this.db.pool, async (c) => {
      const cur = await c.query<{ on: boolean }>('SELECT totp_enabled_at IS NOT NULL AS on FROM operators WHERE id = $1 FOR UPDATE', [operatorId]);
      if (!cur.rows[0]) return false;
      await this.clear(c, operatorId);
      await c.query('DELETE FROM operator_sessions WHERE operator_id = $1', [operatorId]);
      if (inTx) await inTx(c, { operatorId, wasEnabled: cur.rows[0].on });
      return true;
    });
  }
}

/** What an operator's reset of a cabinet account's TOTP found. */
export interface CabinetResetResult { wasEnabled: boolean; sessionsEnded: number }

/**
 * Cabinet accounts' TOTP (the merchant's own login, `merchants`, or a team member,
 * `merchant_users`), optional; an operator may reset it for a merchant locked out (a lost phone
 * and lost recovery codes).
 */
export class CabinetTwoFactor extends TwoFactor {
  constructor(db: Db, key: Buffer, table: Exclude<TwoFactorTable, 'operators'>) { super(db, key, table); }

  /**
   * Turns TOTP off without a code and ends the account's cabinet sessions, under the row's lock,
   * with the caller's audit step in the same transaction. `accountId` is the merchant's id for
   * its own login, else a member of `merchantId` (a member of another merchant is not found).
   * False when there is no such account.
   */
  async reset(merchantId: string, accountId: string, inTx?: InTx<CabinetResetResult>): Promise<boolean> {
    return withPgTx(this.db.pool, async (c) => {
      const cur = this.table === 'merchants'
        ? await c.query<{ on: boolean }>(
          'SELECT totp_enabled_at IS NOT NULL AS on FROM merchants WHERE id = $1 AND id = $2 AND live_merchant_id IS NULL FOR UPDATE', [accountId, merchantId])
        : await c.query<{ on: boolean }>(
          'SELECT totp_enabled_at IS NOT NULL AS on FROM merchant_users WHERE id = $1 AND merchant_id = $2 FOR UPDATE', [accountId, merchantId]);
      if (!cur.rows[0]) return false;
      await this.clear(c, accountId);
      const ended = await endAccountSessions(c, { merchantId, userId: this.table === 'merchants' ? null : accountId });
      if (inTx) await inTx(c, { wasEnabled: cur.rows[0].on, sessionsEnded: ended });
      return true;
    });
  }
}

/** Both cabinet tables' factors, as services.ts builds them once. */
export const cabinetTwoFactors = (db: Db, key: Buffer): Record<Exclude<TwoFactorTable, 'operators'>, CabinetTwoFactor> => ({
  merchants: new CabinetTwoFactor(db, key, 'merchants'),
  merchant_users: new CabinetTwoFactor(db, key, 'merchant_users'),
});
