-- Sign-in lock-out moved from the account (anyone could lock its owner out) to the
-- (email, address) pair and per-address limits, kept by the sign-in guard (issue 19.4).
ALTER TABLE "merchants" DROP COLUMN "failed_login_count", DROP COLUMN "locked_until";
