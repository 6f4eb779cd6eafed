-- API in the wild (issue 12), part 2.
-- Chargebacks the operator records against a payment: the money leaves the merchant's
-- available balance through the ledger (CHARGEBACK_DEBIT) and a postback tells the shop.
ALTER TYPE "LedgerEntryKind" ADD VALUE 'CHARGEBACK_DEBIT';
ALTER TYPE "OutboxEventKind" ADD VALUE 'REFUND_POSTBACK';
ALTER TYPE "OutboxEventKind" ADD VALUE 'CHARGEBACK_POSTBACK';

CREATE TABLE "chargebacks" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "amount" DECIMAL(10,2) NOT NULL,
    "currency" "Currency" NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "chargebacks_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "chargebacks_amount_check" CHECK ("amount" > 0)
);
CREATE INDEX "chargebacks_payment_id_created_at_idx" ON "chargebacks"("payment_id", "created_at");
CREATE INDEX "chargebacks_merchant_id_created_at_idx" ON "chargebacks"("merchant_id", "created_at");
ALTER TABLE "chargebacks" ADD CONSTRAINT "chargebacks_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "chargebacks" ADD CONSTRAINT "chargebacks_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- What chargebacks took from a payment: refunds and chargebacks together never exceed what
-- the payment received (account_amount + commission).
ALTER TABLE "payments" ADD COLUMN "chargeback_amount" DECIMAL(10,2) NOT NULL DEFAULT 0;
ALTER TABLE "payments" ADD CONSTRAINT "payments_chargeback_bound_check" CHECK (
    "chargeback_amount" >= 0 AND "refunded_amount" + "chargeback_amount" <= COALESCE("account_amount", 0) + "commission");

-- A merchant's API IP allow-list: a JSON array of addresses/CIDRs; null or [] allows any.
ALTER TABLE "merchants" ADD COLUMN "api_ip_allowlist" JSONB;

-- refund/search pages by keyset on (created_at, id) like the other searches.
DROP INDEX "refunds_merchant_id_created_at_idx";
CREATE INDEX "refunds_merchant_id_created_at_id_idx" ON "refunds"("merchant_id", "created_at", "id");
