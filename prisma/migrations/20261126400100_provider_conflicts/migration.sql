-- A provider's answer after a final state (docs/decisions.md "A provider's answer after a final state").

-- 1. Attention items of two kinds: 'unknown_outcome' (reconciliation gave up, as before) and
--    'conflict' (the provider contradicted a final state). One of each per object at most.
--    (Written only as literals by the code: no CHECK, which would be one more constraint for
--    the database-error classification without guarding money.)
ALTER TABLE "attention_items" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'unknown_outcome';
ALTER TABLE "attention_items" DROP CONSTRAINT "attention_items_object_key";
ALTER TABLE "attention_items" ADD CONSTRAINT "attention_items_object_key" UNIQUE ("object_type", "object_id", "kind");

-- 2. A merchant's available may go below zero only by what a provider conflict debited beyond
--    the merchant's money (`debt`). Only a conflict raises `debt` (src/domain/ledger/ledger.ts
--    postOverdrawing: to what available is about to fall below zero, then the transfer); the
--    trigger lowers it as money comes in (never above what available is below zero), so an
--    ordinary debit can never use it: while available is negative every debit is refused
--    (a payout, a refund: balance_not_enough), which holds the merchant's payouts until the
--    debt is covered. The trigger fires only for a row in debt whose available rises (WHEN), so
--    the hot statements (payment finish, payout creation) pay nothing for it otherwise.
ALTER TABLE "balances" ADD COLUMN "debt" DECIMAL(20,8) NOT NULL DEFAULT 0;
ALTER TABLE "balances" DROP CONSTRAINT "balances_non_negative_check";
ALTER TABLE "balances" ADD CONSTRAINT "balances_non_negative_check"
  CHECK ("available" + "debt" >= 0 AND "locked" >= 0 AND "hold" >= 0 AND "debt" >= 0);

CREATE FUNCTION "balances_debt_shrinks"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."debt" := least(NEW."debt", greatest(0, -NEW."available"));
  RETURN NEW;
END $$;
CREATE TRIGGER "balances_debt_shrinks" BEFORE UPDATE ON "balances"
  FOR EACH ROW WHEN (NEW."debt" > 0 AND NEW."available" > OLD."available") EXECUTE FUNCTION "balances_debt_shrinks"();
