-- A payout account's token_provider is whichever connector kind declares itself an issuer of
-- payout card tokens (docs/adr/0133): the code's list of kinds decides, as it does for
-- connectors.kind (docs/adr/0057). The table keeps only that a token names a card account.
ALTER TABLE "payout_accounts" DROP CONSTRAINT "payout_accounts_token_check";
ALTER TABLE "payout_accounts" ADD CONSTRAINT "payout_accounts_token_check"
  CHECK ("token_provider" IS NULL OR ("token_provider" <> '' AND "type" = 'CARD'));
