-- A merchant's event log (cabinet, console and operator API filtered by merchant) pages newest
-- first by id (keyset: id < before_id ORDER BY id DESC); this index serves each page as an index
-- scan per month partition instead of sorting all of the merchant's events.
CREATE INDEX "outbox_events_merchant_id_id_idx" ON "outbox_events"("merchant_id", "id");
