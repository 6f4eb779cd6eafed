-- The cabinet finds bills, payments, refunds and payouts by any part of an order id (issue 30:
-- only an exact order id was found). ILIKE '%part%' is served by trigram GIN indexes; pg_trgm
-- ships with PostgreSQL (contrib, also in embedded-postgres) and is a trusted extension since
-- PostgreSQL 13, so the database owner may create it without superuser.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "bills_order_id_trgm_idx" ON "bills" USING GIN ("order_id" gin_trgm_ops);
CREATE INDEX "payouts_order_id_trgm_idx" ON "payouts" USING GIN ("order_id" gin_trgm_ops);
