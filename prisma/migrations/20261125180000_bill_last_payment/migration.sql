-- The bill's latest payment, written by the statement that opens a payment, in the same UPDATE
-- that takes the bill's row lock (its id and creation time come from one clock reading there).
-- The finishing statement moves the bill only when its payment is this one: a compare on the
-- bill row it updates anyway, where a subquery over payments probed a partition per month kept
-- and read the statement's snapshot (docs/decisions.md "The latest payment of a bill").
-- No backfill: a bill whose payments all predate the column (NULL) is judged by that subquery,
-- and gets the column with its next payment. Adding nullable columns rewrites nothing.
ALTER TABLE "bills" ADD COLUMN "last_payment_id" TEXT, ADD COLUMN "last_payment_at" TIMESTAMPTZ(3);
