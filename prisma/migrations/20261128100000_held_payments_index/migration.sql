-- What a merchant's two-stage payments hold (docs/adr/0073-two-stage-payments.md): the cabinet's
-- overview, the console's merchant page and the operator API sum it per currency. Few rows are
-- held at a time, so a partial index keeps that sum off the merchant's whole payment history.
CREATE INDEX "payments_held_idx" ON "payments" ("merchant_id") WHERE "status" = 'PROCESS' AND "authorized_amount" IS NOT NULL;
