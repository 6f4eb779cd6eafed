-- Two-stage payments (docs/adr/0073-two-stage-payments.md): a bill created with `capture: false`
-- has its payments authorized (the money held on the payer's card), then captured in full or in
-- part, or cancelled, by the operator or the merchant's cabinet.
ALTER TABLE "bills" ADD COLUMN "capture" boolean NOT NULL DEFAULT true;

-- What the provider holds (set once, when it first says so), the capture asked for (set once:
-- a repeated capture sends the same amount under the same idempotency key) and a cancellation
-- asked for. The payment stays PROCESS until the provider's final answer.
ALTER TABLE "payments" ADD COLUMN "authorized_amount" numeric(12,2),
                       ADD COLUMN "authorized_at" timestamptz(3),
                       ADD COLUMN "capture_amount" numeric(12,2),
                       ADD COLUMN "cancel_requested_at" timestamptz(3);
