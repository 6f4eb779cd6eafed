-- When the payment page last asked the provider about a payment still in PROCESS: the page asks
-- at most once per interval per payment across every API process (a conditional UPDATE picks
-- the one that asks), where an in-memory map let each process ask on its own.
ALTER TABLE "payments" ADD COLUMN "provider_asked_at" TIMESTAMPTZ(3);
