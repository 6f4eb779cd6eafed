-- Saved cards and recurring charges (docs/adr/0074-saved-cards-and-recurring-charges.md).

-- bill/create `save_payment_method`: the page offers the payer to save the card (consent,
-- unchecked by default). A bill made by POST /api/v1/payment/charge keeps the request's
-- Idempotency-Key: a repeat finds the bill (and its payment) instead of charging again.
ALTER TABLE "bills" ADD COLUMN "save_payment_method" boolean NOT NULL DEFAULT false,
                    ADD COLUMN "charge_key" text;
CREATE UNIQUE INDEX "bills_merchant_charge_key_key" ON "bills" ("merchant_id", "charge_key") WHERE "charge_key" IS NOT NULL;

-- The payer consented to saving the card (the provider was asked to save it), and the saved
-- method the payment saved or was charged with.
ALTER TABLE "payments" ADD COLUMN "save_consent" boolean NOT NULL DEFAULT false,
                       ADD COLUMN "payment_method_id" text;

CREATE TYPE "SavedPaymentMethodStatus" AS ENUM ('ACTIVE', 'REVOKED');

-- A card the provider saved for the merchant: the provider's id (YooKassa payment_method.id,
-- T-Bank RebillId, the sandbox's token) encrypted as secrets are, the card as first 6 / last 4
-- only. One per payment (a repeated notification saves once). The merchant's mode is fixed:
-- a live method is never charged by a test key, nor the other way.
CREATE TABLE "saved_payment_methods" (
  "id" text PRIMARY KEY,
  "merchant_id" text NOT NULL REFERENCES "merchants" ("id"),
  "shop_id" text NOT NULL REFERENCES "shops" ("id"),
  "mode" text NOT NULL,
  "connector" text NOT NULL,
  "provider_id_enc" text NOT NULL,
  "card_mask" text,
  "card_expiry" text,
  "status" "SavedPaymentMethodStatus" NOT NULL DEFAULT 'ACTIVE',
  "payment_id" text NOT NULL,
  "created_at" timestamptz(3) NOT NULL DEFAULT now(),
  "revoked_at" timestamptz(3),
  CONSTRAINT "saved_payment_methods_mode_check" CHECK ("mode" IN ('live', 'test')),
  CONSTRAINT "saved_payment_methods_card_mask_check" CHECK ("card_mask" IS NULL OR "card_mask" ~ '^[0-9]{6}\*{2,9}[0-9]{4}$')
);
CREATE UNIQUE INDEX "saved_payment_methods_payment_id_key" ON "saved_payment_methods" ("payment_id");
CREATE INDEX "saved_payment_methods_merchant_id_status_created_at_idx" ON "saved_payment_methods" ("merchant_id", "status", "created_at");
