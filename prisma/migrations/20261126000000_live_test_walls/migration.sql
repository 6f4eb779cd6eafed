-- Live money moves only through live connectors (docs/decisions.md "Deployment profiles and the
-- wall between live and test"). The database knows the deployment's profile and refuses, on its
-- own, an operation of a live merchant attached to a connector that is not live while the
-- profile is `production`, and a test operation attached to a live connector in any profile.

-- The deployment's profile, written by the service at every start (src/domain/deployment/).
-- Everything before this migration ran with the sandbox as every route's default: `sandbox`.
CREATE TABLE "deployment" (
    "id" BOOLEAN NOT NULL DEFAULT true,
    "profile" TEXT NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "deployment_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "deployment_one_row" CHECK ("id"),
    CONSTRAINT "deployment_profile_check" CHECK ("profile" IN ('sandbox', 'production'))
);
INSERT INTO "deployment" ("profile") VALUES ('sandbox');

-- The built-in sandbox is a test instrument, whatever an operator writes.
UPDATE "connectors" SET "mode" = 'test' WHERE "kind" = 'sandbox' AND "mode" <> 'test';
ALTER TABLE "connectors" ADD CONSTRAINT "connectors_sandbox_is_test" CHECK ("kind" <> 'sandbox' OR "mode" = 'test');

-- A merchant row is live, or the test twin of a live merchant.
ALTER TABLE "merchants" ADD COLUMN "mode" TEXT NOT NULL
    GENERATED ALWAYS AS (CASE WHEN "live_merchant_id" IS NULL THEN 'live' ELSE 'test' END) STORED;
CREATE UNIQUE INDEX "merchants_id_mode_key" ON "merchants"("id", "mode");

-- New live merchants have no routing of their own: in the sandbox profile the service routes
-- them to the sandbox, in production they have none until the operator sets it.
ALTER TABLE "merchants" ALTER COLUMN "routing" SET DEFAULT '{}';
-- Live merchants that only ever had the old default keep no routing of their own either.
UPDATE "merchants" SET "routing" = '{}' WHERE "live_merchant_id" IS NULL AND "routing" =
    '{"payment_card":["sandbox"],"payment_sbp":["sandbox"],"payout_card":["sandbox"],"payout_sbp":["sandbox"]}'::jsonb;

-- The operation records its merchant's mode and its connector's mode, taken from those rows
-- whenever a connector is attached (whatever the writer said), and the mismatch is refused.
ALTER TABLE "payments" ADD COLUMN "mode" TEXT, ADD COLUMN "connector_mode" TEXT;
ALTER TABLE "payouts" ADD COLUMN "mode" TEXT, ADD COLUMN "connector_mode" TEXT;
ALTER TABLE "refunds" ADD COLUMN "mode" TEXT, ADD COLUMN "connector_mode" TEXT;

UPDATE "payments" o SET "mode" = m."mode", "connector_mode" = c."mode"
  FROM "merchants" m, "connectors" c WHERE m."id" = o."merchant_id" AND c."name" = o."connector";
UPDATE "payouts" o SET "mode" = m."mode", "connector_mode" = c."mode"
  FROM "merchants" m, "connectors" c WHERE m."id" = o."merchant_id" AND c."name" = o."connector";
UPDATE "refunds" o SET "mode" = m."mode", "connector_mode" = c."mode"
  FROM "merchants" m, "connectors" c WHERE m."id" = o."merchant_id" AND c."name" = o."connector";

CREATE FUNCTION "operation_connector_mode"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."connector" IS NULL THEN
        NEW."mode" := NULL;
        NEW."connector_mode" := NULL;
        RETURN NEW;
    END IF;
    NEW."mode" := (SELECT m."mode" FROM "merchants" m WHERE m."id" = NEW."merchant_id");
    -- A name with no connectors row (none is built from it) counts as not live.
    NEW."connector_mode" := (SELECT c."mode" FROM "connectors" c WHERE c."name" = NEW."connector");
    IF NEW."mode" = 'test' AND NEW."connector_mode" = 'live' THEN
        RAISE EXCEPTION 'test-mode % % cannot go through the live connector %', TG_TABLE_NAME, NEW."id", NEW."connector"
            USING ERRCODE = 'check_violation', CONSTRAINT = 'live_and_test_never_meet';
    END IF;
    IF NEW."mode" = 'live' AND NEW."connector_mode" IS DISTINCT FROM 'live'
       AND (SELECT d."profile" FROM "deployment" d) = 'production' THEN
        RAISE EXCEPTION 'live % % cannot go through the % connector % in the production profile',
            TG_TABLE_NAME, NEW."id", coalesce(NEW."connector_mode", 'unknown'), NEW."connector"
            USING ERRCODE = 'check_violation', CONSTRAINT = 'live_money_live_connector';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER "payments_connector_mode_ins" BEFORE INSERT ON "payments"
    FOR EACH ROW WHEN (NEW."connector" IS NOT NULL OR NEW."mode" IS NOT NULL OR NEW."connector_mode" IS NOT NULL)
    EXECUTE FUNCTION "operation_connector_mode"();
CREATE TRIGGER "payments_connector_mode_upd" BEFORE UPDATE OF "connector", "mode", "connector_mode" ON "payments"
    FOR EACH ROW WHEN (NEW."connector" IS DISTINCT FROM OLD."connector" OR NEW."mode" IS DISTINCT FROM OLD."mode"
                       OR NEW."connector_mode" IS DISTINCT FROM OLD."connector_mode")
    EXECUTE FUNCTION "operation_connector_mode"();
CREATE TRIGGER "payouts_connector_mode_ins" BEFORE INSERT ON "payouts"
    FOR EACH ROW WHEN (NEW."connector" IS NOT NULL OR NEW."mode" IS NOT NULL OR NEW."connector_mode" IS NOT NULL)
    EXECUTE FUNCTION "operation_connector_mode"();
CREATE TRIGGER "payouts_connector_mode_upd" BEFORE UPDATE OF "connector", "mode", "connector_mode" ON "payouts"
    FOR EACH ROW WHEN (NEW."connector" IS DISTINCT FROM OLD."connector" OR NEW."mode" IS DISTINCT FROM OLD."mode"
                       OR NEW."connector_mode" IS DISTINCT FROM OLD."connector_mode")
    EXECUTE FUNCTION "operation_connector_mode"();
CREATE TRIGGER "refunds_connector_mode_ins" BEFORE INSERT ON "refunds"
    FOR EACH ROW WHEN (NEW."connector" IS NOT NULL OR NEW."mode" IS NOT NULL OR NEW."connector_mode" IS NOT NULL)
    EXECUTE FUNCTION "operation_connector_mode"();
CREATE TRIGGER "refunds_connector_mode_upd" BEFORE UPDATE OF "connector", "mode", "connector_mode" ON "refunds"
    FOR EACH ROW WHEN (NEW."connector" IS DISTINCT FROM OLD."connector" OR NEW."mode" IS DISTINCT FROM OLD."mode"
                       OR NEW."connector_mode" IS DISTINCT FROM OLD."connector_mode")
    EXECUTE FUNCTION "operation_connector_mode"();

-- What a provider account is does not change once money went through it (a test shop does not
-- become a live one: the operator adds a new connector).
CREATE FUNCTION "connectors_mode_fixed_once_used"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM "payments" WHERE "connector" = OLD."name")
       OR EXISTS (SELECT 1 FROM "payouts" WHERE "connector" = OLD."name")
       OR EXISTS (SELECT 1 FROM "refunds" WHERE "connector" = OLD."name") THEN
        RAISE EXCEPTION 'connector % has operations: its mode stays %', OLD."name", OLD."mode"
            USING ERRCODE = 'check_violation', CONSTRAINT = 'connectors_mode_fixed_once_used';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "connectors_mode_fixed_once_used" BEFORE UPDATE OF "mode" ON "connectors"
    FOR EACH ROW WHEN (NEW."mode" IS DISTINCT FROM OLD."mode") EXECUTE FUNCTION "connectors_mode_fixed_once_used"();

-- One merchant, one team: members belong to the live merchant, never to its test twin. Members
-- a test-mode invite attached to a twin move to its live merchant (their sessions, which were
-- the twin's, end: they sign in again).
DELETE FROM "cabinet_sessions" cs USING "merchants" m WHERE cs."merchant_id" = m."id" AND m."live_merchant_id" IS NOT NULL;
UPDATE "merchant_users" u SET "merchant_id" = m."live_merchant_id"
  FROM "merchants" m WHERE m."id" = u."merchant_id" AND m."live_merchant_id" IS NOT NULL;
ALTER TABLE "merchant_users" ADD COLUMN "merchant_mode" TEXT NOT NULL DEFAULT 'live';
ALTER TABLE "merchant_users" ADD CONSTRAINT "merchant_users_live_merchant" CHECK ("merchant_mode" = 'live');
ALTER TABLE "merchant_users" ADD CONSTRAINT "merchant_users_merchant_live_fkey" FOREIGN KEY ("merchant_id", "merchant_mode")
    REFERENCES "merchants"("id", "mode") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- One allow-list (and every other setting the twin copies): a twin's copy is written only by
-- merchants_sync_test_twin, from its live merchant, never on its own.
CREATE FUNCTION "merchants_twin_settings_follow_live"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Depth 1: an UPDATE of the twin itself; the sync trigger's UPDATE runs at depth 2.
    IF pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION 'merchant % is a test twin: its settings follow merchant %', OLD."id", OLD."live_merchant_id"
            USING ERRCODE = 'check_violation', CONSTRAINT = 'merchants_twin_settings_follow_live';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "merchants_twin_settings_follow_live" BEFORE UPDATE ON "merchants"
    FOR EACH ROW WHEN (OLD."live_merchant_id" IS NOT NULL AND
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
    EXECUTE FUNCTION "merchants_twin_settings_follow_live"();

-- Money the sandbox credited to a live balance, cleared by the operator before a production
-- start (npm run admin -- sandbox-money:clear): each clearance is an ADJUSTMENT transfer.
CREATE TABLE "sandbox_money_clearances" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "currency" "Currency" NOT NULL,
    "amount" DECIMAL(20,8) NOT NULL,
    "adjustment_id" TEXT,
    "actor" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sandbox_money_clearances_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sandbox_money_clearances_amount_check" CHECK ("amount" > 0)
);
ALTER TABLE "sandbox_money_clearances" ADD CONSTRAINT "sandbox_money_clearances_merchant_id_fkey"
    FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
