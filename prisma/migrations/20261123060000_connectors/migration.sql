-- Provider boundary (issue 14): the connector registry, per-merchant routing, and on every
-- payment, refund and payout the connector that took it and the provider's reference.

CREATE TABLE "connectors" (
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    -- Settings that are not secret (base_url, shop_id, terminal_key, ...).
    "settings" JSONB NOT NULL DEFAULT '{}',
    -- AES-256-GCM (src/lib/crypto.ts) of a JSON object of the secret settings; never returned.
    "secrets_enc" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connectors_pkey" PRIMARY KEY ("name"),
    CONSTRAINT "connectors_name_check" CHECK ("name" ~ '^[a-z0-9-]{1,40}$'),
    CONSTRAINT "connectors_kind_check" CHECK ("kind" IN ('sandbox', 'yookassa', 'tbank')),
    CONSTRAINT "connectors_mode_check" CHECK ("mode" IN ('live', 'test'))
);

-- The built-in sandbox: always present.
INSERT INTO "connectors" ("name", "kind", "mode") VALUES ('sandbox', 'sandbox', 'test');

-- What the call wrapper recorded, per connector and minute: the health the operator sees.
CREATE TABLE "connector_call_stats" (
    "connector" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "last_success_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    CONSTRAINT "connector_call_stats_pkey" PRIMARY KEY ("connector", "minute")
);

ALTER TABLE "merchants" ADD COLUMN "routing" JSONB NOT NULL
    DEFAULT '{"payment_card":["sandbox"],"payment_sbp":["sandbox"],"payout_card":["sandbox"],"payout_sbp":["sandbox"]}';

ALTER TABLE "payments" RENAME COLUMN "acquirer_ref" TO "provider_ref";
ALTER TABLE "payments" ADD COLUMN "connector" TEXT, ADD COLUMN "failure_message" TEXT;
ALTER TABLE "refunds" ADD COLUMN "connector" TEXT, ADD COLUMN "provider_ref" TEXT;
ALTER TABLE "payouts" ADD COLUMN "connector" TEXT, ADD COLUMN "provider_ref" TEXT;

-- Everything before this migration went through the sandbox.
UPDATE "payments" SET "connector" = 'sandbox' WHERE "status" <> 'NEW';
UPDATE "refunds" SET "connector" = 'sandbox';
UPDATE "payouts" SET "connector" = 'sandbox' WHERE "status" IN ('SUCCESS', 'FAIL', 'ERROR');
