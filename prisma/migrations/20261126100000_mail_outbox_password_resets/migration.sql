-- Outgoing mail (issue 27 item 2): written in the business transaction like every message that
-- leaves the service, sent by the mail worker over SMTP with retries (src/workers/mail.ts). A
-- table of its own rather than an outbox_events kind: mail is a few rows an hour, the postback
-- claim (outbox_claim_due) stays as it was tuned (docs/decisions.md "Mail has its own outbox").
-- The body is AES-256-GCM encrypted (it may hold a one-time link) and dropped once the SMTP
-- server took it; KEPT: no SMTP_URL in the sandbox profile, the mail is in the dev mailbox.
CREATE TABLE "mail_outbox" (
    "id" BIGSERIAL NOT NULL,
    "merchant_id" TEXT,
    "kind" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body_enc" TEXT,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "lease_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "sent_at" TIMESTAMPTZ(3),
    CONSTRAINT "mail_outbox_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "mail_outbox_status" CHECK ("status" IN ('PENDING', 'SENT', 'KEPT', 'DEAD'))
);
-- The worker's claim: the due pending mail, oldest first.
CREATE INDEX "mail_outbox_due_idx" ON "mail_outbox" ("next_attempt_at", "id") WHERE "status" = 'PENDING';
CREATE INDEX "mail_outbox_created_at_idx" ON "mail_outbox" ("created_at");

-- An operator's password reset (issue 27 item 1): a one-time link mailed to the cabinet account
-- (the merchant's own login, user_id NULL, or a team member). Only the SHA-256 of the link's
-- token is stored; it works once (used_at) and for an hour (expires_at).
CREATE TABLE "cabinet_password_resets" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "user_id" TEXT,
    "token_hash" CHAR(64) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "cabinet_password_resets_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "cabinet_password_resets_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "cabinet_password_resets_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "merchant_users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "cabinet_password_resets_token_hash_key" ON "cabinet_password_resets"("token_hash");
CREATE INDEX "cabinet_password_resets_merchant_id_idx" ON "cabinet_password_resets"("merchant_id");
CREATE INDEX "cabinet_password_resets_user_id_idx" ON "cabinet_password_resets"("user_id");
