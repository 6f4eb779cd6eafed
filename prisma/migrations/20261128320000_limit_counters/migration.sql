-- Limits every API process shares (docs/adr/0098-limits-counted-once-in-postgresql.md): one row
-- per limit, key and fixed window, bumped by one UPSERT ... RETURNING. UNLOGGED: a hit writes no
-- WAL and waits for no standby, so the per-token limit costs every API request one cheap
-- statement; a crash or a failover starts the windows over (the table comes back empty), which
-- for limits of minutes is accepted. Past windows are swept by the limit-counters worker.
-- fillfactor 50: the counter is updated in place (HOT), one row per key and window.
CREATE UNLOGGED TABLE "limit_counters" (
  "name" TEXT NOT NULL,
  "key" TEXT NOT NULL,
  "window_no" BIGINT NOT NULL,
  "hits" INTEGER NOT NULL,
  "expires_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "limit_counters_pkey" PRIMARY KEY ("name", "key", "window_no")
) WITH (fillfactor = 50);

CREATE INDEX "limit_counters_expires_at_idx" ON "limit_counters" ("expires_at");
