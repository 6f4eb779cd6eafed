-- Running totals of what counts against the payout limits (payouts not FAIL/ERROR/DECLINED),
-- per merchant and day / month in the service time zone: the limit check reads two rows
-- instead of summing the merchant's payouts of the month under its lock, which grew with the
-- merchant's monthly volume (docs/performance.md, Growth). Kept by the payout service in the
-- transaction that creates payouts (+) and the one that makes them FAIL/ERROR/DECLINED (-).
CREATE TABLE "payout_usage" (
    "merchant_id" TEXT NOT NULL,
    "period" CHAR(1) NOT NULL,
    "period_start" DATE NOT NULL,
    "amount" DECIMAL(20,8) NOT NULL DEFAULT 0,
    CONSTRAINT "payout_usage_pkey" PRIMARY KEY ("merchant_id","period","period_start"),
    CONSTRAINT "payout_usage_period_check" CHECK ("period" IN ('D', 'M')),
    CONSTRAINT "payout_usage_amount_check" CHECK ("amount" >= 0)
);
ALTER TABLE "payout_usage" ADD CONSTRAINT "payout_usage_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Payouts made before this migration, counted in the default service time zone.
INSERT INTO "payout_usage" ("merchant_id", "period", "period_start", "amount")
SELECT "merchant_id", 'D', ("created_at" AT TIME ZONE 'Europe/Moscow')::date, sum("amount")
  FROM "payouts" WHERE "status" NOT IN ('FAIL', 'ERROR', 'DECLINED') GROUP BY 1, 2, 3
UNION ALL
SELECT "merchant_id", 'M', date_trunc('month', "created_at" AT TIME ZONE 'Europe/Moscow')::date, sum("amount")
  FROM "payouts" WHERE "status" NOT IN ('FAIL', 'ERROR', 'DECLINED') GROUP BY 1, 2, 3;
