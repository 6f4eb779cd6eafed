import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { withPgTx, type Db, type InTx } from '../../db/client.js';
import { decrypt, encrypt, sha256Hex } from '../../lib/crypto.js';

/** The name authenticator apps show beside the account. */
export const TOTP_ISSUER = 'Payment service operator';
export const RECOVERY_CODE_COUNT = 10;

/** A new TOTP secret: 20 random bytes (160 bits, RFC 4226's recommendation), base32. */
export const newTotpSecret = (): string => generateSecret({ length: 20 });

/** The otpauth:// URI an authenticator app scans (SHA-1, 6 digits, 30 s: what every app supports). */
export const totpUri = (email: string, secret: string): string => generateURI({ issuer: TOTP_ISSUER, label: email, secret });

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
 * Operator TOTP (RFC 6238) and recovery codes. The secret is stored AES-256-GCM encrypted
 * (TOKEN_ENCRYPTION_KEY), recovery codes as SHA-256 digests; a used code is removed and a
 * TOTP step is accepted once (`totp_last_step`, advanced by a conditional UPDATE so two
 * requests with the same code cannot both pass). Each change runs with the caller's audit step.
 */
export class OperatorTwoFactor {
  constructor(private readonly db: Db, private readonly key: Buffer) {}

  sealSecret(secret: string): string { return encrypt(this.key, secret); }
  openSecret(box: string): string { return decrypt(this.key, box); }

  /**
   * Turns TOTP on with `secret` once `code` proves the app has it; new recovery codes replace
   * any old ones. Null when the code is wrong (nothing changes).
   */
  async enable(operatorId: string, secret: string, code: string, inTx?: InTx<{ operatorId: string }>): Promise<{ recoveryCodes: string[] } | null> {
    const step = await totpStep(secret, code, null);
    if (step === null) return null;
    const recoveryCodes = newRecoveryCodes();
    await withPgTx(this.db.pool, async (c) => {
      await c.query(
        `UPDATE operators SET totp_secret_enc = $2, totp_enabled_at = now(), totp_last_step = $3,
                recovery_code_hashes = $4::jsonb, updated_at = now()
          WHERE id = $1`,
        [operatorId, this.sealSecret(secret), step, JSON.stringify(recoveryCodes.map(recoveryCodeHash))],
      );
      if (inTx) await inTx(c, { operatorId });
    });
    return { recoveryCodes };
  }

  /**
   * Checks a second factor: a current TOTP code not used before, or an unused recovery code
   * (then spent). The caller's step (the audit entry) runs in the same transaction.
   */
  async check(operatorId: string, code: string, inTx?: InTx<{ factor: SecondFactor }>): Promise<SecondFactor | null> {
    const r = await this.db.pool.query<{ totp_secret_enc: string | null; totp_last_step: string | null }>(
      'SELECT totp_secret_enc, totp_last_step FROM operators WHERE id = $1', [operatorId],
    );
    const row = r.rows[0];
    if (!row?.totp_secret_enc) return null;
    const code_ = code.trim().slice(0, 40);
    const step = await totpStep(this.openSecret(row.totp_secret_enc), code_, row.totp_last_step === null ? null : Number(row.totp_last_step));
    if (step !== null) {
      return withPgTx(this.db.pool, async (c) => {
        const u = await c.query(
          'UPDATE operators SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id',
          [operatorId, step],
        );
        if (u.rowCount === 0) return null;
        if (inTx) await inTx(c, { factor: 'totp' });
        return 'totp' as const;
      });
    }
    if (!looksLikeRecoveryCode(code_)) return null;
    return withPgTx(this.db.pool, async (c) => {
      const u = await c.query(
        `UPDATE operators SET recovery_code_hashes = recovery_code_hashes - $2::text, updated_at = now()
          WHERE id = $1 AND recovery_code_hashes ? $2::text RETURNING id`,
        [operatorId, recoveryCodeHash(code_)],
      );
      if (u.rowCount === 0) return null;
      if (inTx) await inTx(c, { factor: 'recovery_code' });
      return 'recovery_code' as const;
    });
  }

  /** Recovery codes left unused. */
  async recoveryCodesLeft(operatorId: string): Promise<number> {
    const r = await this.db.pool.query<{ n: number }>('SELECT jsonb_array_length(recovery_code_hashes) AS n FROM operators WHERE id = $1', [operatorId]);
    return r.rows[0]?.n ?? 0;
  }

  /** Turns TOTP off (an admin's reset for a lost phone): the next sign-in enrols again; every console session ends. */
  async reset(operatorId: string, inTx?: InTx<{ operatorId: string; wasEnabled: boolean }>): Promise<boolean> {
    return withPgTx(this.db.pool, async (c) => {
      const cur = await c.query<{ on: boolean }>('SELECT totp_enabled_at IS NOT NULL AS on FROM operators WHERE id = $1 FOR UPDATE', [operatorId]);
      if (!cur.rows[0]) return false;
      await c.query(
        `UPDATE operators SET totp_secret_enc = NULL, totp_enabled_at = NULL, totp_last_step = NULL,
                recovery_code_hashes = '[]'::jsonb, updated_at = now() WHERE id = $1`, [operatorId],
      );
      await c.query('DELETE FROM operator_sessions WHERE operator_id = $1', [operatorId]);
      if (inTx) await inTx(c, { operatorId, wasEnabled: cur.rows[0].on });
      return true;
    });
  }
}
