-- Connector kinds live in code (src/domain/providers/connectors/index.ts, docs/decisions.md
-- "Connector kinds live in code"): the registry refuses a kind that is not in the list before
-- anything is written, and a stored row of a kind a later build no longer has is simply not
-- built (routing answers 422 for it). A CHECK restating the list would make every new kind a
-- migration as well as a folder.
ALTER TABLE "connectors" DROP CONSTRAINT "connectors_kind_check";
