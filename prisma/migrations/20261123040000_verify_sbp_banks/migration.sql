-- Data: the SBP bank seed (20261121010000) checked against NSPK's C2B member directory
-- (qr.nspk.ru/proxyapp/c2bmembers.json, as carried by the public repository eav93/sbp,
-- data/banks.json, snapshot 2026-04-20; docs/decisions.md "Public clients (issue 12)").
-- Rows are never deleted: a payout account may reference a member id (bank_member_id), so a
-- wrong id is deactivated (payouts to it answer direction_not_available instead of reaching
-- a provider with an id NSPK does not know) and the right one is added.

-- VTB's member id is 110000000005 (schema bank110000000005), not 100000000005.
INSERT INTO "sbp_banks" ("member_id", "name", "name_en", "bic") VALUES
  (110000000005, 'Банк ВТБ', 'VTB Bank', '044525187')
ON CONFLICT ("member_id") DO NOTHING;
UPDATE "sbp_banks" SET "active" = false, "updated_at" = now() WHERE "member_id" = 100000000005;

-- 100000000041 is BCS Bank in NSPK's directory; Metallinvestbank is 100000000046. The old row
-- carried Metallinvestbank's name and BIC under BCS Bank's id: the data moves to the right id,
-- the old row is deactivated (its BIC is not BCS Bank's, so it is not renamed in place).
INSERT INTO "sbp_banks" ("member_id", "name", "name_en", "bic") VALUES
  (100000000046, 'Металлинвестбанк', 'Metallinvestbank', '044525176')
ON CONFLICT ("member_id") DO NOTHING;
UPDATE "sbp_banks" SET "active" = false, "updated_at" = now() WHERE "member_id" = 100000000041;

-- Promsvyazbank is listed by NSPK under its current name.
UPDATE "sbp_banks" SET "name" = 'Банк ПСБ', "name_en" = 'PSB', "updated_at" = now()
WHERE "member_id" = 100000000010 AND "name" = 'Промсвязьбанк';
