-- The owner's "Require two-factor authentication for everyone" (issue 17): while true, a cabinet
-- account of this merchant (its own login or a team member) without TOTP reaches only the page
-- that sets it up (src/cabinet/index.ts).
ALTER TABLE "merchants" ADD COLUMN "require_two_factor" BOOLEAN NOT NULL DEFAULT false;
