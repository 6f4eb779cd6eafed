-- Initial schema: the whole data model (see prisma/schema.prisma).

CREATE TYPE "Currency" AS ENUM ('RUB', 'USD', 'EUR');
CREATE TYPE "MerchantStatus" AS ENUM ('ACTIVE', 'BANNED');
CREATE TYPE "SubscriptionStatus" AS ENUM ('ACTIVE', 'INACTIVE', 'NONE');
CREATE TYPE "BillType" AS ENUM ('NORMAL', 'MULTI');
CREATE TYPE "BillStatus" AS ENUM ('NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL');
CREATE TYPE "PaymentStatus" AS ENUM ('NEW', 'PROCESS', 'UNDERPAID', 'SUCCESS', 'OVERPAID', 'FAIL');
CREATE TYPE "PaymentMethod" AS ENUM ('BANK_CARD', 'SBP');
CREATE TYPE "PayoutStatus" AS ENUM ('NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED');
CREATE TYPE "PayoutKind" AS ENUM ('PERSONAL', 'REGULAR');
CREATE TYPE "PayoutAccountType" AS ENUM ('CARD', 'SBP');
CREATE TYPE "PayoutAccountStatus" AS ENUM ('ACTIVE', 'BANNED');
CREATE TYPE "RefundStatus" AS ENUM ('NEW', 'PROCESS', 'SUCCESS', 'FAIL');
CREATE TYPE "LedgerEntryKind" AS ENUM ('PAYMENT_CREDIT', 'PAYOUT_LOCK', 'PAYOUT_DEBIT', 'PAYOUT_RELEASE', 'REFUND_LOCK', 'REFUND_DEBIT', 'REFUND_RELEASE', 'ADJUSTMENT');
CREATE TYPE "OutboxEventKind" AS ENUM ('PAYMENT_POSTBACK', 'PAYOUT_WEBHOOK', 'TEST_POSTBACK');
CREATE TYPE "OutboxEventStatus" AS ENUM ('PENDING', 'DELIVERED', 'DEAD');

CREATE TABLE "merchants" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT,
    "status" "MerchantStatus" NOT NULL DEFAULT 'ACTIVE',
    "verified" BOOLEAN NOT NULL DEFAULT false,
    "subscription" "SubscriptionStatus" NOT NULL DEFAULT 'ACTIVE',
    "grant_refunds" BOOLEAN NOT NULL DEFAULT false,
    "grant_regular_payouts" BOOLEAN NOT NULL DEFAULT false,
    "payout_daily_limit" DECIMAL(20,8),
    "payout_monthly_limit" DECIMAL(20,8),
    "moderation_threshold" DECIMAL(20,8),
    "payout_max_card" DECIMAL(20,8) NOT NULL DEFAULT 150000,
    "payout_max_sbp" DECIMAL(20,8) NOT NULL DEFAULT 1000000,
    "payment_card_percent" DECIMAL(7,4),
    "payment_card_fixed" DECIMAL(10,2),
    "payment_sbp_percent" DECIMAL(7,4),
    "payment_sbp_fixed" DECIMAL(10,2),
    "payout_card_percent" DECIMAL(7,4),
    "payout_card_fixed" DECIMAL(10,2),
    "payout_sbp_percent" DECIMAL(7,4),
    "payout_sbp_fixed" DECIMAL(10,2),
    "api_token_hash" CHAR(64) NOT NULL,
    "api_token_enc" TEXT NOT NULL,
    "api_token_issued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "payout_webhook_url" TEXT,
    "failed_login_count" INTEGER NOT NULL DEFAULT 0,
    "locked_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "merchants_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "merchants_limits_check" CHECK (
        ("payout_daily_limit" IS NULL OR "payout_daily_limit" >= 0) AND
        ("payout_monthly_limit" IS NULL OR "payout_monthly_limit" >= 0) AND
        ("moderation_threshold" IS NULL OR "moderation_threshold" >= 0) AND
        "payout_max_card" > 0 AND "payout_max_sbp" > 0),
    CONSTRAINT "merchants_fees_check" CHECK (
        COALESCE("payment_card_percent", 0) BETWEEN 0 AND 100 AND COALESCE("payment_sbp_percent", 0) BETWEEN 0 AND 100 AND
        COALESCE("payout_card_percent", 0) BETWEEN 0 AND 100 AND COALESCE("payout_sbp_percent", 0) BETWEEN 0 AND 100 AND
        COALESCE("payment_card_fixed", 0) >= 0 AND COALESCE("payment_sbp_fixed", 0) >= 0 AND
        COALESCE("payout_card_fixed", 0) >= 0 AND COALESCE("payout_sbp_fixed", 0) >= 0)
);

CREATE TABLE "cabinet_sessions" (
    "id" CHAR(64) NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "csrf_token" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "cabinet_sessions_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "shops" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "default_currency" "Currency" NOT NULL DEFAULT 'RUB',
    "result_url" TEXT,
    "success_url" TEXT,
    "fail_url" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "shops_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "bills" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "shop_id" TEXT NOT NULL,
    "order_id" TEXT,
    "name" TEXT,
    "description" TEXT,
    "custom" TEXT,
    "type" "BillType" NOT NULL DEFAULT 'NORMAL',
    "status" "BillStatus" NOT NULL DEFAULT 'NEW',
    "active" BOOLEAN NOT NULL DEFAULT true,
    "amount" DECIMAL(10,2) NOT NULL,
    "currency_in" "Currency" NOT NULL,
    "payer_pays_commission" BOOLEAN NOT NULL DEFAULT false,
    "payment_method" "PaymentMethod",
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "bills_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "bills_amount_check" CHECK ("amount" > 0)
);

CREATE TABLE "payments" (
    "id" TEXT NOT NULL,
    "bill_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "shop_id" TEXT NOT NULL,
    "status" "PaymentStatus" NOT NULL DEFAULT 'NEW',
    "method" "PaymentMethod" NOT NULL,
    "amount" DECIMAL(10,2) NOT NULL,
    "amount_received" DECIMAL(10,2) NOT NULL DEFAULT 0,
    "currency_in" "Currency" NOT NULL DEFAULT 'RUB',
    "bill_currency" "Currency" NOT NULL,
    "rate" DECIMAL(18,6),
    "commission" DECIMAL(10,2) NOT NULL DEFAULT 0,
    "account_amount" DECIMAL(20,8),
    "account_currency" "Currency" NOT NULL,
    "refunded_amount" DECIMAL(10,2) NOT NULL DEFAULT 0,
    "from_card" TEXT,
    "acquirer_ref" TEXT,
    "failure_reason" TEXT,
    "payer_ip" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "payments_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "payments_amounts_check" CHECK (
        "amount" > 0 AND "amount_received" >= 0 AND "commission" >= 0 AND
        "refunded_amount" >= 0 AND "refunded_amount" <= "amount_received"),
    -- Only a masked card ever reaches this column: 6 digits, stars, 4 digits.
    CONSTRAINT "payments_from_card_masked_check" CHECK ("from_card" IS NULL OR "from_card" ~ '^[0-9]{6}\*+[0-9]{4}$')
);

CREATE TABLE "balances" (
    "merchant_id" TEXT NOT NULL,
    "currency" "Currency" NOT NULL,
    "available" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "locked" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "hold" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "balances_pkey" PRIMARY KEY ("merchant_id","currency"),
    CONSTRAINT "balances_non_negative_check" CHECK ("available" >= 0 AND "locked" >= 0 AND "hold" >= 0)
);

CREATE TABLE "ledger_entries" (
    "id" BIGSERIAL NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "currency" "Currency" NOT NULL,
    "kind" "LedgerEntryKind" NOT NULL,
    "ref_type" TEXT NOT NULL,
    "ref_id" TEXT NOT NULL,
    "delta_available" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "delta_locked" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "delta_hold" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "memo" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ledger_entries_nonzero_check" CHECK ("delta_available" <> 0 OR "delta_locked" <> 0 OR "delta_hold" <> 0)
);

CREATE TABLE "balance_adjustments" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "currency" "Currency" NOT NULL,
    "amount" DECIMAL(20,8) NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "balance_adjustments_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "balance_adjustments_amount_check" CHECK ("amount" <> 0)
);

CREATE TABLE "payout_accounts" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "type" "PayoutAccountType" NOT NULL,
    "status" "PayoutAccountStatus" NOT NULL DEFAULT 'ACTIVE',
    "identifier_enc" TEXT,
    "identifier_masked" TEXT NOT NULL,
    "card_holder" TEXT,
    "bank_member_id" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payout_accounts_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "payout_requests" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "order_id" TEXT,
    "request_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payout_requests_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "payouts" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "order_id" TEXT,
    "kind" "PayoutKind" NOT NULL,
    "status" "PayoutStatus" NOT NULL DEFAULT 'NEW',
    "account_type" "PayoutAccountType" NOT NULL,
    "payout_account_id" TEXT,
    "account_masked" TEXT NOT NULL,
    "account_enc" TEXT,
    "card_holder" TEXT,
    "bank_member_id" BIGINT,
    "amount" DECIMAL(20,8) NOT NULL,
    "commission" DECIMAL(20,8) NOT NULL DEFAULT 0,
    "currency" "Currency" NOT NULL DEFAULT 'RUB',
    "is_auto" BOOLEAN NOT NULL DEFAULT false,
    "failure_reason" TEXT,
    "process_after" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "payouts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "payouts_amounts_check" CHECK ("amount" > 0 AND "commission" >= 0)
);

CREATE TABLE "refunds" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "status" "RefundStatus" NOT NULL DEFAULT 'NEW',
    "amount" DECIMAL(10,2) NOT NULL,
    "currency" "Currency" NOT NULL,
    "failure_reason" TEXT,
    "process_after" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "refunds_amount_check" CHECK ("amount" > 0)
);

CREATE TABLE "sbp_banks" (
    "member_id" BIGINT NOT NULL,
    "name" TEXT NOT NULL,
    "name_en" TEXT NOT NULL,
    "bic" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sbp_banks_pkey" PRIMARY KEY ("member_id")
);

CREATE TABLE "fx_rates" (
    "currency" "Currency" NOT NULL,
    "rub_per_unit" DECIMAL(18,6) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "fx_rates_pkey" PRIMARY KEY ("currency"),
    CONSTRAINT "fx_rates_positive_check" CHECK ("rub_per_unit" > 0)
);

CREATE TABLE "outbox_events" (
    "id" BIGSERIAL NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "kind" "OutboxEventKind" NOT NULL,
    "aggregate_id" TEXT NOT NULL,
    "url" TEXT,
    "payload" JSONB NOT NULL,
    "status" "OutboxEventStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "lease_owner" TEXT,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "delivery_attempts" (
    "id" BIGSERIAL NOT NULL,
    "event_id" BIGINT NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "http_status" INTEGER,
    "latency_ms" INTEGER NOT NULL,
    "error" TEXT,
    "response_head" TEXT,
    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "idempotency_keys" (
    "merchant_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("merchant_id","key")
);

-- Indexes
CREATE UNIQUE INDEX "merchants_email_key" ON "merchants"("email");
CREATE UNIQUE INDEX "merchants_api_token_hash_key" ON "merchants"("api_token_hash");
CREATE INDEX "cabinet_sessions_merchant_id_idx" ON "cabinet_sessions"("merchant_id");
CREATE INDEX "cabinet_sessions_expires_at_idx" ON "cabinet_sessions"("expires_at");
CREATE INDEX "shops_merchant_id_idx" ON "shops"("merchant_id");
CREATE INDEX "bills_merchant_id_created_at_id_idx" ON "bills"("merchant_id", "created_at", "id");
CREATE INDEX "bills_shop_id_created_at_idx" ON "bills"("shop_id", "created_at");
CREATE INDEX "bills_merchant_id_order_id_idx" ON "bills"("merchant_id", "order_id");
CREATE INDEX "payments_bill_id_created_at_idx" ON "payments"("bill_id", "created_at");
CREATE INDEX "payments_merchant_id_created_at_id_idx" ON "payments"("merchant_id", "created_at", "id");
CREATE INDEX "payments_shop_id_created_at_idx" ON "payments"("shop_id", "created_at");
CREATE UNIQUE INDEX "ledger_entries_kind_ref_id_key" ON "ledger_entries"("kind", "ref_id");
CREATE INDEX "ledger_entries_merchant_id_currency_id_idx" ON "ledger_entries"("merchant_id", "currency", "id");
CREATE INDEX "ledger_entries_ref_type_ref_id_idx" ON "ledger_entries"("ref_type", "ref_id");
CREATE INDEX "balance_adjustments_merchant_id_created_at_idx" ON "balance_adjustments"("merchant_id", "created_at");
CREATE INDEX "payout_accounts_merchant_id_idx" ON "payout_accounts"("merchant_id");
CREATE UNIQUE INDEX "payout_requests_merchant_id_order_id_key" ON "payout_requests"("merchant_id", "order_id");
CREATE INDEX "payouts_merchant_id_created_at_id_idx" ON "payouts"("merchant_id", "created_at", "id");
CREATE INDEX "payouts_merchant_id_order_id_idx" ON "payouts"("merchant_id", "order_id");
CREATE INDEX "payouts_request_id_idx" ON "payouts"("request_id");
CREATE INDEX "payouts_status_process_after_idx" ON "payouts"("status", "process_after");
CREATE INDEX "refunds_payment_id_created_at_idx" ON "refunds"("payment_id", "created_at");
CREATE INDEX "refunds_merchant_id_created_at_idx" ON "refunds"("merchant_id", "created_at");
CREATE INDEX "refunds_status_process_after_idx" ON "refunds"("status", "process_after");
CREATE UNIQUE INDEX "outbox_events_kind_aggregate_id_key" ON "outbox_events"("kind", "aggregate_id");
CREATE INDEX "outbox_events_status_next_attempt_at_idx" ON "outbox_events"("status", "next_attempt_at");
CREATE INDEX "outbox_events_merchant_id_status_created_at_idx" ON "outbox_events"("merchant_id", "status", "created_at");
CREATE INDEX "delivery_attempts_event_id_attempted_at_idx" ON "delivery_attempts"("event_id", "attempted_at");
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

-- Foreign keys
ALTER TABLE "cabinet_sessions" ADD CONSTRAINT "cabinet_sessions_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "shops" ADD CONSTRAINT "shops_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "bills" ADD CONSTRAINT "bills_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "bills" ADD CONSTRAINT "bills_shop_id_fkey" FOREIGN KEY ("shop_id") REFERENCES "shops"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payments" ADD CONSTRAINT "payments_bill_id_fkey" FOREIGN KEY ("bill_id") REFERENCES "bills"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payments" ADD CONSTRAINT "payments_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payments" ADD CONSTRAINT "payments_shop_id_fkey" FOREIGN KEY ("shop_id") REFERENCES "shops"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "balances" ADD CONSTRAINT "balances_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "balance_adjustments" ADD CONSTRAINT "balance_adjustments_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payout_accounts" ADD CONSTRAINT "payout_accounts_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payout_requests" ADD CONSTRAINT "payout_requests_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_request_id_fkey" FOREIGN KEY ("request_id") REFERENCES "payout_requests"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_payout_account_id_fkey" FOREIGN KEY ("payout_account_id") REFERENCES "payout_accounts"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "outbox_events" ADD CONSTRAINT "outbox_events_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "outbox_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The ledger is append-only: entries are facts, corrections are new entries.
CREATE FUNCTION "ledger_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only (% refused)', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER "ledger_entries_no_update_delete" BEFORE UPDATE OR DELETE ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION "ledger_entries_append_only"();
