-- Issue 29 item 1: a shop's 54-FZ settings (docs/decisions.md "Fiscal receipts"): NULL, or
-- {"enabled": bool, "tax_system_code": 1..6, "vat_code": 1..6, "payment_subject": text,
-- "payment_mode": text}, validated by the service (src/domain/receipt/fiscal.ts).
ALTER TABLE "shops" ADD COLUMN "fiscalization" JSONB;
