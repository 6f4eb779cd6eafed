-- Double-entry ledger (issue 13, docs/decisions.md "Domain core"). Every movement of money is a
-- transfer (one business event, id '<kind>:<ref_id>', applied once) made of entries; each entry
-- moves `amount` from one account (debited) to another (credited) in one currency, so a
-- transfer's debits equal its credits per currency by construction (TigerBeetle's transfer).
-- Accounts: each merchant's available / locked / hold per currency (the `balances` row keeps
-- their sums, the non-negative CHECK refuses an overdraft) and the operator's own.

CREATE TABLE "ledger_accounts" (
    "id" TEXT NOT NULL,
    "currency" "Currency" NOT NULL,
    "kind" TEXT NOT NULL,
    "merchant_id" TEXT,
    "connector" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_accounts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ledger_accounts_kind_check" CHECK ("kind" IN ('available', 'locked', 'hold', 'acquirer_clearing', 'payout_clearing',
                                                             'fee_revenue', 'refund_clearing', 'chargebacks', 'adjustments', 'fx')),
    CONSTRAINT "ledger_accounts_owner_check" CHECK (("merchant_id" IS NOT NULL) = ("kind" IN ('available', 'locked', 'hold'))),
    CONSTRAINT "ledger_accounts_connector_check" CHECK (("connector" IS NOT NULL) = ("kind" IN ('acquirer_clearing', 'payout_clearing'))),
    CONSTRAINT "ledger_accounts_currency_check" CHECK (split_part("id", ':', 1) = "currency"::text)
);
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "ledger_transfers" (
    "id" TEXT NOT NULL,
    "kind" "LedgerEntryKind" NOT NULL,
    "ref_type" TEXT NOT NULL,
    "ref_id" TEXT NOT NULL,
    "merchant_id" TEXT,
    "memo" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_transfers_pkey" PRIMARY KEY ("id"),
    -- The id is the business event: one (kind, ref_id) moves money once.
    CONSTRAINT "ledger_transfers_id_check" CHECK ("id" = "kind"::text || ':' || "ref_id")
);
ALTER TABLE "ledger_transfers" ADD CONSTRAINT "ledger_transfers_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The one-sided entries of the previous ledger, converted below, then dropped.
ALTER TABLE "ledger_entries" RENAME TO "ledger_entries_v1";
ALTER TABLE "ledger_entries_v1" RENAME CONSTRAINT "ledger_entries_pkey" TO "ledger_entries_v1_pkey";
ALTER TABLE "ledger_entries_v1" DROP CONSTRAINT "ledger_entries_merchant_id_fkey";

CREATE TABLE "ledger_entries" (
    "transfer_id" TEXT NOT NULL,
    "leg" INTEGER NOT NULL,
    "currency" "Currency" NOT NULL,
    "debit_account" TEXT NOT NULL,
    "credit_account" TEXT NOT NULL,
    "amount" DECIMAL(20,8) NOT NULL,
    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("transfer_id", "leg"),
    CONSTRAINT "ledger_entries_amount_check" CHECK ("amount" > 0),
    CONSTRAINT "ledger_entries_accounts_check" CHECK ("debit_account" <> "credit_account"),
    -- Both sides in the entry's currency: a conversion is two entries through the fx accounts.
    CONSTRAINT "ledger_entries_currency_check" CHECK (split_part("debit_account", ':', 1) = "currency"::text
                                                  AND split_part("credit_account", ':', 1) = "currency"::text)
);
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transfer_id_fkey" FOREIGN KEY ("transfer_id") REFERENCES "ledger_transfers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Accounts: every merchant's three per currency, and the operator's per currency (the sandbox
-- connector's clearing accounts; a new connector adds its own).
INSERT INTO "ledger_accounts" ("id", "currency", "kind", "merchant_id")
SELECT c::text || ':merchant:' || m."id" || ':' || k, c, k, m."id"
  FROM "merchants" m, unnest(enum_range(NULL::"Currency")) c, unnest(ARRAY['available', 'locked', 'hold']) k;
INSERT INTO "ledger_accounts" ("id", "currency", "kind", "connector")
SELECT c::text || ':' || x.k || coalesce(':' || x.conn, ''), c, x.k, x.conn
  FROM unnest(enum_range(NULL::"Currency")) c,
       (VALUES ('acquirer_clearing', 'sandbox'), ('payout_clearing', 'sandbox'), ('fee_revenue', NULL), ('refund_clearing', NULL),
               ('chargebacks', NULL), ('adjustments', NULL), ('fx', NULL)) AS x(k, conn);

INSERT INTO "ledger_transfers" ("id", "kind", "ref_type", "ref_id", "merchant_id", "memo", "created_at")
SELECT "kind"::text || ':' || "ref_id", "kind", "ref_type", "ref_id", "merchant_id", "memo", "created_at" FROM "ledger_entries_v1";

-- Each old entry as the legs the new code posts for its kind. A payment credit also books the
-- commission the old ledger left out (acquirer clearing -> fee revenue) and, for a USD/EUR
-- bill, the conversion through the fx accounts; neither touches a merchant account.
INSERT INTO "ledger_entries" ("transfer_id", "leg", "currency", "debit_account", "credit_account", "amount")
SELECT o."kind"::text || ':' || o."ref_id", x.leg, x.cur::"Currency", x.dr, x.cr, x.amt
  FROM (SELECT e.*, e."currency"::text || ':merchant:' || e."merchant_id" || ':' AS m, e."currency"::text || ':' AS op,
               p."commission" AS p_commission, p."amount_received" AS p_received
          FROM "ledger_entries_v1" e
          LEFT JOIN "payments" p ON e."kind" = 'PAYMENT_CREDIT' AND p."id" = e."ref_id") o
 CROSS JOIN LATERAL (VALUES
   (1, 'RUB', 'RUB:acquirer_clearing:sandbox', CASE WHEN o."currency" = 'RUB' THEN o.m || 'available' ELSE 'RUB:fx' END,
       CASE WHEN o."kind" = 'PAYMENT_CREDIT' THEN CASE WHEN o."currency" = 'RUB' THEN o."delta_available" ELSE o.p_received END END),
   (2, o."currency"::text, o.op || 'fx', o.m || 'available',
       CASE WHEN o."kind" = 'PAYMENT_CREDIT' AND o."currency" <> 'RUB' THEN o."delta_available" END),
   (3, o."currency"::text, CASE WHEN o."currency" = 'RUB' THEN 'RUB:acquirer_clearing:sandbox' ELSE o.op || 'fx' END, o.op || 'fee_revenue',
       CASE WHEN o."kind" = 'PAYMENT_CREDIT' THEN o.p_commission END),
   (4, o."currency"::text, o.m || 'available', o.m || 'locked', CASE WHEN o."kind" IN ('PAYOUT_LOCK', 'REFUND_LOCK') THEN o."delta_locked" END),
   (5, o."currency"::text, o.m || 'available', o.m || 'hold', CASE WHEN o."kind" = 'PAYOUT_LOCK' THEN o."delta_hold" END),
   (6, o."currency"::text, o.m || 'locked', o.op || 'payout_clearing:sandbox', CASE WHEN o."kind" = 'PAYOUT_DEBIT' THEN -o."delta_locked" END),
   (7, o."currency"::text, o.m || 'hold', o.op || 'fee_revenue', CASE WHEN o."kind" = 'PAYOUT_DEBIT' THEN -o."delta_hold" END),
   (8, o."currency"::text, o.m || 'locked', o.m || 'available', CASE WHEN o."kind" IN ('PAYOUT_RELEASE', 'REFUND_RELEASE') THEN -o."delta_locked" END),
   (9, o."currency"::text, o.m || 'hold', o.m || 'available', CASE WHEN o."kind" = 'PAYOUT_RELEASE' THEN -o."delta_hold" END),
   (10, o."currency"::text, o.m || 'locked', o.op || 'refund_clearing', CASE WHEN o."kind" = 'REFUND_DEBIT' THEN -o."delta_locked" END),
   (11, o."currency"::text, o.op || 'adjustments', o.m || 'available', CASE WHEN o."kind" = 'ADJUSTMENT' AND o."delta_available" > 0 THEN o."delta_available" END),
   (12, o."currency"::text, o.m || 'available', o.op || 'adjustments', CASE WHEN o."kind" = 'ADJUSTMENT' AND o."delta_available" < 0 THEN -o."delta_available" END),
   -- A chargeback kind (added by a parallel branch) written one-sided before this migration.
   (13, o."currency"::text, o.m || 'available', o.op || 'chargebacks', CASE WHEN o."kind"::text = 'CHARGEBACK_DEBIT' AND o."delta_available" < 0 THEN -o."delta_available" END)
 ) AS x(leg, cur, dr, cr, amt)
 WHERE x.amt > 0;

-- Whatever of an old entry the legs above do not reproduce (a shape no code wrote) goes against
-- the adjustments account, so every merchant account ends exactly where its old entries put it.
INSERT INTO "ledger_entries" ("transfer_id", "leg", "currency", "debit_account", "credit_account", "amount")
SELECT t.id, 20 + b.i, o."currency",
       CASE WHEN r.v > 0 THEN o."currency"::text || ':adjustments' ELSE a.acct END,
       CASE WHEN r.v > 0 THEN a.acct ELSE o."currency"::text || ':adjustments' END, abs(r.v)
  FROM "ledger_entries_v1" o
 CROSS JOIN LATERAL (SELECT o."kind"::text || ':' || o."ref_id" AS id) t
 CROSS JOIN LATERAL (VALUES (0, 'available', o."delta_available"), (1, 'locked', o."delta_locked"), (2, 'hold', o."delta_hold")) AS b(i, bucket, old)
 CROSS JOIN LATERAL (SELECT o."currency"::text || ':merchant:' || o."merchant_id" || ':' || b.bucket AS acct) a
 CROSS JOIN LATERAL (
   SELECT b.old - coalesce(sum(CASE WHEN e."credit_account" = a.acct THEN e."amount" ELSE -e."amount" END), 0) AS v
     FROM "ledger_entries" e
    WHERE e."transfer_id" = t.id AND (e."credit_account" = a.acct OR e."debit_account" = a.acct)
 ) r
 WHERE r.v <> 0;

-- The conversion must reproduce every merchant account; else the migration stops here.
DO $$
DECLARE bad integer;
BEGIN
  WITH old AS (
    SELECT "currency"::text || ':merchant:' || "merchant_id" || ':' || b.bucket AS acct, sum(b.v) AS v
      FROM "ledger_entries_v1", LATERAL (VALUES ('available', "delta_available"), ('locked', "delta_locked"), ('hold', "delta_hold")) AS b(bucket, v)
     GROUP BY 1
  ), neu AS (
    SELECT acct, sum(v) AS v FROM (
      SELECT "credit_account" AS acct, "amount" AS v FROM "ledger_entries"
      UNION ALL SELECT "debit_account", -"amount" FROM "ledger_entries") s
     WHERE acct LIKE '%:merchant:%' GROUP BY 1
  )
  SELECT count(*) INTO bad FROM old FULL JOIN neu USING (acct) WHERE coalesce(old.v, 0) <> coalesce(neu.v, 0);
  IF bad > 0 THEN RAISE EXCEPTION 'ledger conversion changed % merchant account(s)', bad; END IF;
END $$;

DROP TABLE "ledger_entries_v1";
DROP FUNCTION "ledger_entries_append_only"();

-- Transfers and entries are facts: corrections are new transfers.
CREATE FUNCTION "ledger_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER "ledger_entries_no_update_delete" BEFORE UPDATE OR DELETE ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION "ledger_append_only"();
CREATE TRIGGER "ledger_transfers_no_update_delete" BEFORE UPDATE OR DELETE ON "ledger_transfers"
  FOR EACH ROW EXECUTE FUNCTION "ledger_append_only"();
