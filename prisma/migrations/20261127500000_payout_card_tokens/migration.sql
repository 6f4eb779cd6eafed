-- Card payout accounts known by a provider's token instead of the card number (docs/adr/0070):
-- identifier_enc then holds the encrypted `token:<provider>:<token>`, never a card number;
-- the card is kept only as the widget showed it (first 6 and last 4 in identifier_masked, its
-- type and issuer).
ALTER TABLE "payout_accounts"
  ADD COLUMN "token_provider" TEXT,
  ADD COLUMN "card_type" TEXT,
  ADD COLUMN "card_issuer" TEXT;

ALTER TABLE "payout_accounts" ADD CONSTRAINT "payout_accounts_token_check"
  CHECK ("token_provider" IS NULL OR ("token_provider" = 'yookassa' AND "type" = 'CARD'));
