-- API in the wild (issue 12): what the public clients send at bill/create and read back.
-- A bill may live `ttl` seconds (expires_at, computed at creation), carry its own Success/Fail
-- URLs (overriding the shop's), a "back to shop" URL, the page language, the payer's e-mail,
-- the payer fields the page must ask for, and the cart items shown on the page.
ALTER TABLE "bills"
  ADD COLUMN "ttl" INTEGER,
  ADD COLUMN "expires_at" TIMESTAMPTZ(3),
  ADD COLUMN "success_url" TEXT,
  ADD COLUMN "fail_url" TEXT,
  ADD COLUMN "return_url" TEXT,
  ADD COLUMN "locale" TEXT,
  ADD COLUMN "payer_email" TEXT,
  ADD COLUMN "request_fields" JSONB,
  ADD COLUMN "items" JSONB,
  ADD CONSTRAINT "bills_ttl_check" CHECK ("ttl" IS NULL OR "ttl" > 0),
  ADD CONSTRAINT "bills_locale_check" CHECK ("locale" IS NULL OR "locale" IN ('ru', 'en'));

-- What the payer typed on the page when the bill asked for it.
ALTER TABLE "payments"
  ADD COLUMN "payer_email" TEXT,
  ADD COLUMN "payer_phone" TEXT,
  ADD COLUMN "payer_name" TEXT,
  ADD COLUMN "payer_comment" TEXT;
