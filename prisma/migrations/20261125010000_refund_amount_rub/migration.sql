-- Issue 15: a refund carries the roubles the provider gives back. The payer always paid the
-- acquirer in RUB; a refund is in the bill's currency (the merchant's balance), so a USD/EUR
-- bill's refund needs its RUB counterpart for the provider call and for the acquirer's clearing
-- account. Set once when the refund is admitted (under the payment's lock), never changed.
ALTER TABLE "refunds" ADD COLUMN "amount_rub" DECIMAL(10,2);

-- Refunds made before: RUB ones are their own amount; others the same share of what the payer
-- paid in RUB as of what the payment received in the bill's currency.
UPDATE "refunds" r SET "amount_rub" = CASE
    WHEN r."currency" = 'RUB' THEN r."amount"
    ELSE round(r."amount" * p."amount_received" / nullif(p."account_amount" + p."commission", 0), 2)
  END
  FROM "payments" p WHERE p."id" = r."payment_id";
