-- Payouts and refunds with unknown outcomes (issue 14, items 4 and 7): reconciliation instead of
-- guessing, the attention list where it gives up, and the sandbox's memory of what it applied.

-- When the operation was first handed to its connector (money may have moved from then on: it
-- is asked about, never sent elsewhere), and the reconciliation backoff.
ALTER TABLE "payouts" ADD COLUMN "sent_at" TIMESTAMPTZ(3),
                      ADD COLUMN "next_check_at" TIMESTAMPTZ(3),
                      ADD COLUMN "check_attempts" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "refunds" ADD COLUMN "sent_at" TIMESTAMPTZ(3),
                      ADD COLUMN "next_check_at" TIMESTAMPTZ(3),
                      ADD COLUMN "check_attempts" INTEGER NOT NULL DEFAULT 0;

-- The sandbox connector's own record of what it applied (shared with the payment side).
CREATE TABLE IF NOT EXISTS sandbox_operations (kind text, our_id text, ref text, status text, amount numeric(12,2), created_at timestamptz default now(), primary key (kind, our_id));

-- Operations reconciliation gave up on (shared with the payment side; identical SQL).
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
