-- Issue 27: the audit trail names a person. `actor` keeps the stable key (operator:<id>,
-- merchant:<id>, merchant-user:<id>, admin-token, cli:<os user>); `actor_name` is who that was
-- when the entry was written (the email; admin-token; cli:<os user>), kept because a removed
-- team member's row is deleted and an email may change. Old rows have NULL here and are
-- resolved from the key when read.
ALTER TABLE "audit_log" ADD COLUMN "actor_name" TEXT;
CREATE INDEX "audit_log_actor_name_id_idx" ON "audit_log"("actor_name", "id");
