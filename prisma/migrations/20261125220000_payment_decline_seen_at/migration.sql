-- When a provider first answered that a payment was declined without saying why (T-Bank's
-- GetState: the reason comes only in its notification). The payment waits for the notification
-- until DECLINE_REASON_WAIT_MS after this, then fails with the generic reason.
ALTER TABLE "payments" ADD COLUMN "decline_seen_at" TIMESTAMPTZ(3);
