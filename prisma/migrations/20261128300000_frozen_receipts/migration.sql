-- One receipt per operation, frozen (docs/adr/0087-one-receipt-per-operation-frozen.md): the
-- 54-FZ receipt built when a payment, its capture or a refund is created is kept with it, as the
-- service's own JSON (src/domain/receipt/receipt-json.ts), and every repeat sends that one; NULL
-- when the shop did not fiscalize then (or the row is older than this column).
ALTER TABLE "payments" ADD COLUMN "receipt" jsonb, ADD COLUMN "capture_receipt" jsonb;
ALTER TABLE "refunds" ADD COLUMN "receipt" jsonb;
