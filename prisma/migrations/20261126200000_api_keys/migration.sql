-- Restricted API keys (issue 27, item 3): besides its live token, a merchant may hold keys
-- limited to scopes (src/domain/api-key/). A key authenticates as the live merchant, obeys
-- the same allow-list, ban, subscription and grants, and signs nothing (postbacks stay signed
-- with the live token). Only the SHA-256 of the token is kept: it is shown once.
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    -- A JSON array of scope names, checked by the service against its list.
    "scopes" JSONB NOT NULL,
    "token_hash" CHAR(64) NOT NULL,
    -- The token's last four characters, so people can tell their keys apart.
    "token_last4" TEXT NOT NULL,
    -- Who created it (audit actor form), and the team member when it was one: removing that
    -- member revokes the key. No foreign key: the key outlives the member's row as a record.
    "created_by" TEXT NOT NULL,
    "created_by_user_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "api_keys_scopes_array" CHECK (jsonb_typeof("scopes") = 'array' AND jsonb_array_length("scopes") > 0),
    CONSTRAINT "api_keys_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "api_keys_token_hash_key" ON "api_keys"("token_hash");
CREATE INDEX "api_keys_merchant_id_idx" ON "api_keys"("merchant_id");
-- A member's live keys, revoked when the member is removed.
CREATE INDEX "api_keys_created_by_user_live_idx" ON "api_keys"("created_by_user_id") WHERE "revoked_at" IS NULL;
