-- Optional TOTP 2FA for cabinet accounts (issue 17 item 3): the merchant's own login and each
-- team member, stored as the operators' (src/domain/operator/two-factor.ts): the secret
-- AES-256-GCM encrypted, recovery codes as SHA-256 digests, the last accepted time step.
ALTER TABLE "merchants" ADD COLUMN "totp_secret_enc" TEXT,
    ADD COLUMN "totp_enabled_at" TIMESTAMPTZ(3),
    ADD COLUMN "totp_last_step" BIGINT,
    ADD COLUMN "recovery_code_hashes" JSONB NOT NULL DEFAULT '[]';

ALTER TABLE "merchant_users" ADD COLUMN "totp_secret_enc" TEXT,
    ADD COLUMN "totp_enabled_at" TIMESTAMPTZ(3),
    ADD COLUMN "totp_last_step" BIGINT,
    ADD COLUMN "recovery_code_hashes" JSONB NOT NULL DEFAULT '[]';

-- PASSWORD: the password was right and the account has TOTP on, the code is still owed (such a
-- session reaches only the code page, for ten minutes); FULL: signed in.
ALTER TABLE "cabinet_sessions" ADD COLUMN "stage" TEXT NOT NULL DEFAULT 'FULL',
    -- A TOTP secret being set up (AES-256-GCM), moved to the account once a code confirms it.
    ADD COLUMN "pending_totp_enc" TEXT,
    ADD CONSTRAINT "cabinet_sessions_stage" CHECK ("stage" IN ('PASSWORD', 'FULL'));
