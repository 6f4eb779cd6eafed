-- The refund and payout workers poll every second even when nothing is due. Their claims read
-- the (status, process_after) indexes, which hold every row ever made and, per poll, visit every
-- PROCESS row waiting for its next reconciliation check (a heap fetch each): the idle cost grew
-- with the rows waiting. These partial indexes hold only the rows that can become due, keyed by
-- the moment they do, so an idle poll reads one index page and no row. The claims in
-- src/domain/refund/refund.repository.ts and src/domain/payout/payout.service.ts order by the
-- same expressions (they must stay identical for the planner to use them).
CREATE INDEX "refunds_due_idx" ON "refunds" (
  (CASE WHEN "status" = 'NEW' THEN "process_after" ELSE coalesce(greatest("next_check_at", "lease_until"), '-infinity'::timestamptz) END)
) WHERE "status" IN ('NEW', 'PROCESS');

CREATE INDEX "payouts_due_idx" ON "payouts" ((greatest("process_after", "next_check_at", "lease_until")))
  WHERE "status" = 'PROCESS';
