-- An operator's password reset: a one-time link mailed to the operator (asked for on the console's
-- sign-in page, or sent by an admin). Only the SHA-256 of the link's token is stored; it works
-- once (used_at) and for an hour (expires_at).
CREATE TABLE "operator_password_resets" (
    "id" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "token_hash" CHAR(64) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "operator_password_resets_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_password_resets_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "operator_password_resets_token_hash_key" ON "operator_password_resets"("token_hash");
CREATE INDEX "operator_password_resets_operator_id_idx" ON "operator_password_resets"("operator_id");
