-- Cabinet reloads (issue 16): single-use form tokens and one-time flashes.

-- A cabinet form token once its POST was accepted: a second POST with the same token (a reload
-- of the answer, Back and resubmit, a double click) is refused and does nothing. Rows go with
-- their session.
CREATE TABLE "cabinet_form_uses" (
    "nonce" TEXT NOT NULL,
    "session_id" CHAR(64) NOT NULL,
    "used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "cabinet_form_uses_pkey" PRIMARY KEY ("nonce"),
    CONSTRAINT "cabinet_form_uses_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "cabinet_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "cabinet_form_uses_session_id_idx" ON "cabinet_form_uses"("session_id");

-- What a POST wants the next GET to show once (a new API token, a test postback's answer):
-- read and deleted in one statement by the GET it redirects to. The payload is AES-256-GCM
-- encrypted (it may be an API token).
CREATE TABLE "cabinet_flashes" (
    "id" TEXT NOT NULL,
    "session_id" CHAR(64) NOT NULL,
    "kind" TEXT NOT NULL,
    "payload_enc" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "cabinet_flashes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "cabinet_flashes_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "cabinet_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "cabinet_flashes_session_id_idx" ON "cabinet_flashes"("session_id");
