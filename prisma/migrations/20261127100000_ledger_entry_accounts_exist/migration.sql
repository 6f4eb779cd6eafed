-- The accounts a transfer names must exist, refused at write time (issue 28 item 3;
-- docs/adr/0061-ledger-legs-name-existing-accounts.md). Until now a leg could name any text and
-- only `GET /admin/v1/ledger/verify` found an unknown account, after the money had moved; a
-- per-connector clearing account had no row at all before its first transfer.

-- A connector's clearing accounts (acquirer and payout, every currency) exist from its creation
-- on, whoever creates it (the operator API, the CLI, a migration, a test).
CREATE FUNCTION "connector_ledger_accounts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "ledger_accounts" ("id", "currency", "kind", "connector")
  SELECT c::text || ':' || k || ':' || NEW."name", c, k, NEW."name"
    FROM unnest(enum_range(NULL::"Currency")) c, unnest(ARRAY['acquirer_clearing', 'payout_clearing']) k
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END;
$$;
CREATE TRIGGER "connectors_ledger_accounts" AFTER INSERT ON "connectors"
  FOR EACH ROW EXECUTE FUNCTION "connector_ledger_accounts"();

INSERT INTO "ledger_accounts" ("id", "currency", "kind", "connector")
SELECT c::text || ':' || k || ':' || n."name", c, k, n."name"
  FROM "connectors" n, unnest(enum_range(NULL::"Currency")) c, unnest(ARRAY['acquirer_clearing', 'payout_clearing']) k
ON CONFLICT DO NOTHING;

-- Accounts that entries already name without a row (the clearing account of a connector since
-- renamed or removed; a merchant account made by hand): given their row, as the verify rule
-- accepted them. An id that is no account at all (an unknown kind, a missing merchant) fails the
-- ledger_accounts CHECKs or foreign key here, and the migration stops: the books need an operator.
INSERT INTO "ledger_accounts" ("id", "currency", "kind", "merchant_id", "connector")
SELECT x.acct, split_part(x.acct, ':', 1)::"Currency",
       CASE WHEN split_part(x.acct, ':', 2) = 'merchant' THEN split_part(x.acct, ':', 4) ELSE split_part(x.acct, ':', 2) END,
       CASE WHEN split_part(x.acct, ':', 2) = 'merchant' THEN split_part(x.acct, ':', 3) END,
       CASE WHEN split_part(x.acct, ':', 2) <> 'merchant' THEN nullif(split_part(x.acct, ':', 3), '') END
  FROM (SELECT "debit_account" AS acct FROM "ledger_entries" UNION SELECT "credit_account" FROM "ledger_entries") x
 WHERE NOT EXISTS (SELECT 1 FROM "ledger_accounts" a WHERE a."id" = x.acct);

-- Each leg's two accounts: one primary-key lookup each when a leg is written.
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_debit_account_fkey"
  FOREIGN KEY ("debit_account") REFERENCES "ledger_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_credit_account_fkey"
  FOREIGN KEY ("credit_account") REFERENCES "ledger_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
