-- The outbox claim reads each merchant's oldest due events (at most what its cap lets in) and
-- steps from merchant to merchant through this index, instead of ranking every due event: one
-- merchant's backlog of 10,000 cost every claim a sort of 10,000 rows (docs/performance.md,
-- "The outbox claim reads each merchant's head"). Partial: only pending events are claimed.
CREATE INDEX "outbox_events_pending_merchant_idx" ON "outbox_events" ("merchant_id", "next_attempt_at", "id") WHERE "status" = 'PENDING';
