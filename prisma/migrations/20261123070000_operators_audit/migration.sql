-- People (issue 17): operator accounts with roles, their personal API tokens, and the audit
-- trail of every change made through the operator API and the merchant cabinet.

CREATE TYPE "OperatorRole" AS ENUM ('ADMIN', 'FINANCE', 'SUPPORT', 'AUDITOR');
CREATE TYPE "OperatorStatus" AS ENUM ('ACTIVE', 'DISABLED');

CREATE TABLE "operators" (
    "id" TEXT NOT NULL,
    -- Stored lowercased; the unique index below is therefore case-insensitive.
    "email" TEXT NOT NULL,
    "role" "OperatorRole" NOT NULL,
    "status" "OperatorStatus" NOT NULL DEFAULT 'ACTIVE',
    "password_hash" TEXT,
    -- TOTP (console sign-in, next step): the secret AES-256-GCM encrypted, recovery codes hashed.
    "totp_secret_enc" TEXT,
    "totp_enabled_at" TIMESTAMPTZ(3),
    -- A JSON array of SHA-256 hex digests; a used code is removed.
    "recovery_code_hashes" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operators_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operators_email_lower" CHECK ("email" = lower("email"))
);
CREATE UNIQUE INDEX "operators_email_key" ON "operators"("email");

CREATE TABLE "operator_tokens" (
    "id" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    -- SHA-256 of the token (lookup); the token itself is shown once and never stored.
    "token_hash" CHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "operator_tokens_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_tokens_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "operator_tokens_token_hash_key" ON "operator_tokens"("token_hash");
CREATE INDEX "operator_tokens_operator_id_idx" ON "operator_tokens"("operator_id");

CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- operator:<id> | admin-token | merchant:<id> | merchant-user:<id>
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "object_type" TEXT NOT NULL,
    "object_id" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    "ip" TEXT,
    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "audit_log_actor_id_idx" ON "audit_log"("actor", "id");
CREATE INDEX "audit_log_object_id_id_idx" ON "audit_log"("object_id", "id");
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

-- The trail is a record of facts, like the ledger: nothing rewrites or removes an entry.
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER "audit_log_no_update_delete" BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_append_only"();
