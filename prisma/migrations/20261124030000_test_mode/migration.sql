-- Test mode (issue 14 item 6): each merchant may have a "test twin", a second merchants row
-- that holds the test token. Every object, ledger account and balance of test mode belongs to
-- the twin, so it is separate from the live ones by construction (every query names its
-- merchant). docs/decisions.md "Test mode".
ALTER TABLE "merchants" ADD COLUMN "live_merchant_id" TEXT;
CREATE UNIQUE INDEX "merchants_live_merchant_id_key" ON "merchants"("live_merchant_id");
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_live_merchant_id_fkey"
    FOREIGN KEY ("live_merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A twin is never anyone's twin, and its routing is the sandbox whatever its live merchant's is.
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_test_twin_sandbox_only" CHECK (
    "live_merchant_id" IS NULL OR "routing" =
    '{"payment_card":["sandbox"],"payment_sbp":["sandbox"],"payout_card":["sandbox"],"payout_sbp":["sandbox"]}'::jsonb);

CREATE FUNCTION merchants_test_twin_is_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."live_merchant_id" IS NOT NULL AND EXISTS (
        SELECT 1 FROM "merchants" WHERE "id" = NEW."live_merchant_id" AND "live_merchant_id" IS NOT NULL) THEN
        RAISE EXCEPTION 'a test twin''s merchant must be a live merchant';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "merchants_test_twin_is_live" BEFORE INSERT OR UPDATE OF "live_merchant_id" ON "merchants"
    FOR EACH ROW WHEN (NEW."live_merchant_id" IS NOT NULL) EXECUTE FUNCTION merchants_test_twin_is_live();

-- What the operator sets on the live merchant holds for its test twin too (status and ban,
-- verification, subscription, grants, limits, fees, IP allow-list, payout webhook URL, name):
-- copied in the same transaction, so every query that reads the twin's row sees the live values.
-- Not copied: id, email, password, tokens, routing, timestamps.
CREATE FUNCTION merchants_sync_test_twin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "merchants" t SET
        "name" = NEW."name", "status" = NEW."status", "verified" = NEW."verified",
        "subscription" = NEW."subscription", "grant_refunds" = NEW."grant_refunds",
        "grant_regular_payouts" = NEW."grant_regular_payouts",
        "payout_daily_limit" = NEW."payout_daily_limit", "payout_monthly_limit" = NEW."payout_monthly_limit",
        "moderation_threshold" = NEW."moderation_threshold", "payout_max_card" = NEW."payout_max_card",
        "payout_max_sbp" = NEW."payout_max_sbp",
        "payment_card_percent" = NEW."payment_card_percent", "payment_card_fixed" = NEW."payment_card_fixed",
        "payment_sbp_percent" = NEW."payment_sbp_percent", "payment_sbp_fixed" = NEW."payment_sbp_fixed",
        "payout_card_percent" = NEW."payout_card_percent", "payout_card_fixed" = NEW."payout_card_fixed",
        "payout_sbp_percent" = NEW."payout_sbp_percent", "payout_sbp_fixed" = NEW."payout_sbp_fixed",
        "api_ip_allowlist" = NEW."api_ip_allowlist", "payout_webhook_url" = NEW."payout_webhook_url",
        "updated_at" = now()
     WHERE t."live_merchant_id" = NEW."id";
    RETURN NULL;
END $$;
-- Only when a copied setting changed (a token refresh or a password leaves the twin alone).
CREATE TRIGGER "merchants_sync_test_twin" AFTER UPDATE ON "merchants"
    FOR EACH ROW WHEN (NEW."live_merchant_id" IS NULL AND
        (OLD."name", OLD."status", OLD."verified", OLD."subscription", OLD."grant_refunds",
         OLD."grant_regular_payouts", OLD."payout_daily_limit", OLD."payout_monthly_limit",
         OLD."moderation_threshold", OLD."payout_max_card", OLD."payout_max_sbp", OLD."payment_card_percent",
         OLD."payment_card_fixed", OLD."payment_sbp_percent", OLD."payment_sbp_fixed",
         OLD."payout_card_percent", OLD."payout_card_fixed", OLD."payout_sbp_percent",
         OLD."payout_sbp_fixed", OLD."api_ip_allowlist", OLD."payout_webhook_url")
        IS DISTINCT FROM
        (NEW."name", NEW."status", NEW."verified", NEW."subscription", NEW."grant_refunds",
         NEW."grant_regular_payouts", NEW."payout_daily_limit", NEW."payout_monthly_limit",
         NEW."moderation_threshold", NEW."payout_max_card", NEW."payout_max_sbp", NEW."payment_card_percent",
         NEW."payment_card_fixed", NEW."payment_sbp_percent", NEW."payment_sbp_fixed",
         NEW."payout_card_percent", NEW."payout_card_fixed", NEW."payout_sbp_percent",
         NEW."payout_sbp_fixed", NEW."api_ip_allowlist", NEW."payout_webhook_url"))
    EXECUTE FUNCTION merchants_sync_test_twin();
