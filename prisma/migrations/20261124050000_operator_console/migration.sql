-- Operator console (issue 17, step 2): console sessions, single-use form tokens, and the last
-- accepted TOTP time step (a code is accepted once).

ALTER TABLE "operators" ADD COLUMN "totp_last_step" BIGINT;

CREATE TABLE "operator_sessions" (
    -- SHA-256 hex of the session cookie value; the cookie itself is never stored.
    "id" CHAR(64) NOT NULL,
    "operator_id" TEXT NOT NULL,
    "csrf_token" TEXT NOT NULL,
    -- PASSWORD: the password was right, the second factor is still owed; FULL: signed in.
    "stage" TEXT NOT NULL,
    -- A TOTP secret being enrolled (AES-256-GCM), moved to the operator once a code confirms it.
    "pending_totp_enc" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operator_sessions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_sessions_stage" CHECK ("stage" IN ('PASSWORD', 'FULL')),
    CONSTRAINT "operator_sessions_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "operator_sessions_operator_id_idx" ON "operator_sessions"("operator_id");
CREATE INDEX "operator_sessions_expires_at_idx" ON "operator_sessions"("expires_at");

-- One row per rendered console form; a POST deletes its row, so a form is accepted once.
CREATE TABLE "operator_form_tokens" (
    -- SHA-256 hex of the token in the form.
    "id" CHAR(64) NOT NULL,
    "session_id" CHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operator_form_tokens_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_form_tokens_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "operator_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "operator_form_tokens_session_id_idx" ON "operator_form_tokens"("session_id");
