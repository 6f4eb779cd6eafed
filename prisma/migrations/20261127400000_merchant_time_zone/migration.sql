-- The merchant's time zone (an IANA name such as Europe/Moscow): how the cabinet, its CSVs and
-- the payer's receipt write times for this merchant. NULL: the deployment's TZ. Checked by the
-- service against the runtime's zone database (PostgreSQL's own list may differ).
ALTER TABLE "merchants" ADD COLUMN "time_zone" TEXT;
