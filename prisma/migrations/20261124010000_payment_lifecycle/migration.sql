-- Payment lifecycle with the payer's actions, inbound notifications and reconciliation (issue 14).

-- What the payer must do while the payment waits in PROCESS (a redirect, a 3-D Secure page, an
-- SBP QR code), and when reconciliation asks the provider next.
ALTER TABLE "payments" ADD COLUMN "payer_action" JSONB,
    ADD COLUMN "next_check_at" TIMESTAMPTZ(3),
    ADD COLUMN "check_attempts" INTEGER NOT NULL DEFAULT 0;
CREATE INDEX "payments_reconcile_idx" ON "payments" ("next_check_at") WHERE "status" = 'PROCESS';
-- The payment form's token opened at most one payment: a reloaded POST finds that payment.
ALTER TABLE "payments" ADD COLUMN "form_nonce" TEXT;
CREATE UNIQUE INDEX "payments_form_nonce_key" ON "payments" ("form_nonce") WHERE "form_nonce" IS NOT NULL;

-- Every inbound notification applied once: (connector, the provider's event key).
CREATE TABLE "provider_notifications" (
    "id" BIGSERIAL NOT NULL,
    "connector" TEXT NOT NULL,
    "event_key" TEXT NOT NULL,
    "object_type" TEXT NOT NULL,
    "object_id" TEXT,
    "provider_ref" TEXT NOT NULL,
    "outcome" JSONB NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "provider_notifications_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "provider_notifications_connector_event_key_key" UNIQUE ("connector", "event_key")
);

-- The sandbox provider's own memory (shared with the refunds/payouts migration: identical SQL).
CREATE TABLE IF NOT EXISTS sandbox_operations (kind text, our_id text, ref text, status text, amount numeric(12,2), created_at timestamptz default now(), primary key (kind, our_id));

-- The shared attention table (identical SQL in the payouts migration).
CREATE TABLE IF NOT EXISTS "attention_items" (
  "id" TEXT NOT NULL PRIMARY KEY,                     -- randomId from src/lib/ids.ts, prefix 'att_'
  "object_type" TEXT NOT NULL CHECK ("object_type" IN ('payment', 'payout', 'refund')),
  "object_id" TEXT NOT NULL,
  "merchant_id" TEXT NOT NULL REFERENCES "merchants"("id"),
  "connector" TEXT NOT NULL,
  "provider_ref" TEXT,
  "reason" TEXT NOT NULL,                             -- why reconciliation gave up
  "last_heard" JSONB NOT NULL DEFAULT '{}'::jsonb,    -- the provider's last answer or error
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "resolved_at" TIMESTAMPTZ(3),
  "resolution" TEXT,                                  -- the outcome the operator recorded
  "note" TEXT,
  "resolved_by" TEXT,
  CONSTRAINT "attention_items_object_key" UNIQUE ("object_type", "object_id")
);
CREATE INDEX IF NOT EXISTS "attention_items_open_idx" ON "attention_items" ("created_at") WHERE "resolved_at" IS NULL;

-- Payments left in PROCESS by the old flow are asked about at once, at the connector that took
-- them (the old flow wrote it only after the call: every route defaulted to the sandbox).
UPDATE "payments" SET "next_check_at" = now(), "connector" = coalesce("connector", 'sandbox') WHERE "status" = 'PROCESS';
