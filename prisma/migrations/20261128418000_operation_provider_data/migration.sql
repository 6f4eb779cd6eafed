-- Each operation keeps its provider's own state, opaque to everything but that provider's
-- connector, which answers it with an outcome and gets it back on every later call
-- (docs/adr/0118-each-operation-keeps-its-provider-state.md). payments is partitioned: the
-- parent's ALTER reaches every partition.
ALTER TABLE "payments" ADD COLUMN "provider_data" JSONB;
ALTER TABLE "refunds" ADD COLUMN "provider_data" JSONB;
ALTER TABLE "payouts" ADD COLUMN "provider_data" JSONB;
-- T-Bank's state does not say that a payment was made to be held (PayType "T"): its connector
-- keeps that in the payment's provider_data from Init's answer on. Payments opened before,
-- still running, get it here, so their AUTHORIZED is still read as a hold.
UPDATE "payments" p SET "provider_data" = '{"payType": "T"}'::jsonb
  FROM "bills" b, "connectors" c
 WHERE p."status" = 'PROCESS' AND b."id" = p."bill_id" AND b."capture" = false
   AND c."name" = p."connector" AND c."kind" = 'tbank';
