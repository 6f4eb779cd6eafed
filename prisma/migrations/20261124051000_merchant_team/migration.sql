-- Merchant team members (issue 17, item 3): people a merchant owner invites, each with a role;
-- a cabinet session is the merchant's own login (user_id NULL, the owner) or a member's.

CREATE TYPE "MerchantUserRole" AS ENUM ('OWNER', 'DEVELOPER', 'ACCOUNTANT', 'SUPPORT');

CREATE TABLE "merchant_users" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    -- Stored lowercased; unique among members (and checked against merchants' emails on invite).
    "email" TEXT NOT NULL,
    "role" "MerchantUserRole" NOT NULL,
    -- NULL until the invitee sets a password through the invitation link.
    "password_hash" TEXT,
    -- SHA-256 of the single-use invitation token; NULL once used.
    "invite_token_hash" CHAR(64),
    "invite_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "merchant_users_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "merchant_users_email_lower" CHECK ("email" = lower("email")),
    CONSTRAINT "merchant_users_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "merchant_users_email_key" ON "merchant_users"("email");
CREATE UNIQUE INDEX "merchant_users_invite_token_hash_key" ON "merchant_users"("invite_token_hash");
CREATE INDEX "merchant_users_merchant_id_idx" ON "merchant_users"("merchant_id");

ALTER TABLE "cabinet_sessions" ADD COLUMN "user_id" TEXT;
ALTER TABLE "cabinet_sessions" ADD CONSTRAINT "cabinet_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "merchant_users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "cabinet_sessions_user_id_idx" ON "cabinet_sessions"("user_id");
