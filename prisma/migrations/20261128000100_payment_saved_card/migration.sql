-- A card the provider said it saved before the payment was final (T-Bank sends RebillId in the
-- notification on AUTHORIZED, before CONFIRMED): kept on the payment (the provider's id encrypted)
-- until the payment finishes, when the saved method is written from it
-- (docs/adr/0074-saved-cards-and-recurring-charges.md).
ALTER TABLE "payments" ADD COLUMN "saved_card" jsonb;
