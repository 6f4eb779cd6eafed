-- Monthly partitions (issue 18 item 3; docs/decisions.md "Partitions and retention"):
-- payments, ledger_entries, outbox_events and delivery_attempts become RANGE partitioned by
-- their creation time (UTC calendar months), each with a DEFAULT partition so an insert never
-- fails for lack of a month. The service creates months ahead (src/db/partitions.ts) through
-- create_month_partition() below; retention drops whole months of delivered outbox events.
--
-- The conversion reads the catalog, not a column list: whatever columns, CHECKs, indexes,
-- foreign keys (both ways), triggers and owned sequences a table has when this runs are carried
-- to the partitioned table. A partitioned table's unique constraints must contain the partition
-- key, so the guarantees that did not are kept elsewhere:
--   payments.id unique          -> payment_keys (id) primary key, kept by triggers on payments;
--                                  refunds/chargebacks (any FK to payments(id)) now reference it
--   outbox_events (kind, aggregate_id) unique (the dedupe the inserts rely on)
--                               -> outbox_event_keys (kind, aggregate_id) primary key, checked by
--                                  a BEFORE INSERT trigger that skips a duplicate (as ON CONFLICT
--                                  DO NOTHING did); outbox_events.id unique -> outbox_event_keys(id);
--                                  delivery_attempts.event_id references it
--   ledger_entries (transfer_id, leg) primary key
--                               -> (transfer_id, leg, created_at), and (transfer_id, created_at)
--                                  references ledger_transfers (id, created_at): every entry of a
--                                  transfer has the transfer's creation time, so all of them are in
--                                  one partition and the partition's key is the global one.
--                                  ledger_transfers (not partitioned) keeps id = kind:ref_id unique.
--   delivery_attempts.id        -> (id, attempted_at) (ids come from the sequence).
-- Any other unique index without the partition key stops this migration (a guarantee would be lost).

-- Creates the month partition of `parent` holding `month` (UTC), if missing. Rows of that month
-- already in the DEFAULT partition are moved into it (the default is detached for the move, so
-- no row trigger of the parent fires on rows that are only changing place). Returns true when
-- it created the partition. Callers serialise with an advisory lock (src/db/partitions.ts).
CREATE FUNCTION "create_month_partition"(parent text, month date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  lo timestamptz := make_timestamptz(extract(year FROM month)::int, extract(month FROM month)::int, 1, 0, 0, 0, 'UTC');
  hi timestamptz := make_timestamptz(extract(year FROM month)::int, extract(month FROM month)::int, 1, 0, 0, 0, 'UTC')
                    + interval '1 month';
  part text := parent || '_p' || to_char(month, 'YYYY_MM');
  def text := parent || '_default';
  key text;
  moved boolean := false;
BEGIN
  IF to_regclass(format('public.%I', part)) IS NOT NULL THEN RETURN false; END IF;
  SELECT a.attname INTO key
    FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
   WHERE p.partrelid = format('public.%I', parent)::regclass;
  IF key IS NULL THEN RAISE EXCEPTION '% is not partitioned', parent; END IF;
  IF to_regclass(format('public.%I', def)) IS NOT NULL THEN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)', def, key, key) INTO moved USING lo, hi;
  END IF;
  IF moved THEN
    EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', parent, def);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    EXECUTE format('WITH m AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO %I SELECT * FROM m',
                   def, key, key, part) USING lo, hi;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, lo, hi);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I DEFAULT', parent, def);
  ELSE
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, parent, lo, hi);
  END IF;
  RETURN true;
END;
$$;

-- Turns `tbl` into a table partitioned by month on `key`. `key_ddl`: the key column's definition
-- when the table lacks it (then `key_fill` computes it from the old row `o`). `skip_unique`:
-- unique indexes whose guarantee the caller keeps by other means. `keys_table`: where the foreign
-- keys of other tables into this one point afterwards (same columns, same actions).
CREATE FUNCTION pg_temp.partition_monthly(tbl text, key text, key_ddl text, key_fill text, skip_unique text[], keys_table text, ahead int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  old text := tbl || '_unpartitioned';
  rel regclass := format('public.%I', tbl)::regclass;
  pk_name text;
  pk_cols text;
  cols text;
  first_month date;
  m date;
  r record;
  later text[] := '{}';
  fk_in text[] := '{}';
  s text;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = rel AND attnum > 0 AND NOT attisdropped AND attidentity <> '') THEN
    RAISE EXCEPTION '%: identity columns are not carried by this conversion', tbl;
  END IF;
  SELECT c.conname, string_agg(format('%I', a.attname), ', ' ORDER BY k.ord) INTO pk_name, pk_cols
    FROM pg_constraint c CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
   WHERE c.conrelid = rel AND c.contype = 'p' GROUP BY c.conname;
  -- Indexes (but the primary key), read while the table still has its name.
  FOR r IN SELECT i.indexrelid, i.indisunique, c.relname AS name, pg_get_indexdef(i.indexrelid) AS ddl,
                  (SELECT conname FROM pg_constraint x WHERE x.conindid = i.indexrelid AND x.conrelid = rel) AS con,
                  EXISTS (SELECT 1 FROM unnest(i.indkey) k JOIN pg_attribute a ON a.attrelid = rel AND a.attnum = k WHERE a.attname = key) AS has_key
             FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = rel AND NOT i.indisprimary LOOP
    IF r.indisunique AND r.name = ANY (skip_unique) THEN CONTINUE; END IF;
    IF r.indisunique AND NOT r.has_key THEN
      RAISE EXCEPTION '%: unique index % lacks the partition key %; keep its guarantee before partitioning', tbl, r.name, key;
    END IF;
    later := later || CASE WHEN r.con IS NOT NULL
      THEN format('ALTER TABLE %I ADD CONSTRAINT %I %s', tbl, r.con, pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conindid = r.indexrelid AND conrelid = rel)))
      ELSE r.ddl END;
  END LOOP;
  -- Foreign keys of the table, CHECK constraints come with LIKE.
  FOR r IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = rel AND contype = 'f' LOOP
    later := later || format('ALTER TABLE %I ADD CONSTRAINT %I %s', tbl, r.conname, r.def);
  END LOOP;
  -- Triggers (the ledger's append-only one among them).
  FOR r IN SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = rel AND NOT tgisinternal LOOP
    later := later || r.def;
  END LOOP;
  -- Foreign keys of other tables into this one (refunds, chargebacks -> payments; delivery
  -- attempts -> outbox events; any other): they reference the key table afterwards.
  FOR r IN SELECT conrelid::regclass AS src, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE confrelid = rel AND contype = 'f' LOOP
    IF keys_table IS NULL THEN RAISE EXCEPTION '%: % references it and no key table is given', tbl, r.conname; END IF;
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.src, r.conname);
    later := later || format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.src, r.conname,
                             regexp_replace(r.def, 'REFERENCES [^(]+\(', format('REFERENCES %I(', keys_table)));
  END LOOP;

  EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, old);
  EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', old, pk_name, old || '_pkey');
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMMENTS%s) PARTITION BY RANGE (%I)',
                 tbl, old, coalesce(', ' || key_ddl, ''), key);
  -- Sequences (bigserial ids) now belong to the new table, so dropping the old one keeps them.
  FOR r IN SELECT s.oid::regclass AS seq, a.attname
             FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
             JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
            WHERE d.refobjid = format('public.%I', old)::regclass AND d.deptype = 'a' LOOP
    EXECUTE format('ALTER SEQUENCE %s OWNED BY %I.%I', r.seq, tbl, r.attname);
  END LOOP;

  EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', tbl || '_default', tbl);
  EXECUTE format('SELECT date_trunc(''month'', min(%s) AT TIME ZONE ''UTC'')::date FROM %I o',
                 CASE WHEN key_ddl IS NULL THEN format('o.%I', key) ELSE key_fill END, old) INTO first_month;
  m := least(coalesce(first_month, date_trunc('month', now() AT TIME ZONE 'UTC')::date), date_trunc('month', now() AT TIME ZONE 'UTC')::date);
  WHILE m <= (date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => ahead))::date LOOP
    PERFORM "create_month_partition"(tbl, m);
    m := (m + interval '1 month')::date;
  END LOOP;

  SELECT string_agg(format('%I', attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute WHERE attrelid = format('public.%I', old)::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '';
  IF key_ddl IS NULL THEN
    EXECUTE format('INSERT INTO %I (%s) SELECT %s FROM %I o', tbl, cols, cols, old);
  ELSE
    EXECUTE format('INSERT INTO %I (%s, %I) SELECT %s, %s FROM %I o', tbl, cols, key, cols, key_fill, old);
  END IF;
  EXECUTE format('DROP TABLE %I', old);

  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (%s%s)', tbl, pk_name, pk_cols,
                 CASE WHEN pk_cols ~ ('(^|, )' || format('%I', key) || '(,|$)') THEN '' ELSE ', ' || format('%I', key) END);
  FOREACH s IN ARRAY later LOOP EXECUTE s; END LOOP;
END;
$$;

-- Side tables of the ids that stay unique across months.
CREATE TABLE "payment_keys" (
    "id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "payment_keys_pkey" PRIMARY KEY ("id")
);
INSERT INTO "payment_keys" ("id", "created_at") SELECT "id", "created_at" FROM "payments";

CREATE TABLE "outbox_event_keys" (
    "kind" "OutboxEventKind" NOT NULL,
    "aggregate_id" TEXT NOT NULL,
    "id" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "outbox_event_keys_pkey" PRIMARY KEY ("kind", "aggregate_id")
);
CREATE UNIQUE INDEX "outbox_event_keys_id_key" ON "outbox_event_keys"("id");
INSERT INTO "outbox_event_keys" ("kind", "aggregate_id", "id", "created_at")
SELECT "kind", "aggregate_id", "id", "created_at" FROM "outbox_events";

-- Every entry of a transfer carries the transfer's creation time (see above).
CREATE UNIQUE INDEX "ledger_transfers_id_created_at_key" ON "ledger_transfers"("id", "created_at");

-- What each table holds now, to check after the move.
CREATE TEMP TABLE "partition_counts" ON COMMIT DROP AS
SELECT 'payments' AS t, count(*) AS n FROM "payments" UNION ALL SELECT 'ledger_entries', count(*) FROM "ledger_entries"
UNION ALL SELECT 'outbox_events', count(*) FROM "outbox_events" UNION ALL SELECT 'delivery_attempts', count(*) FROM "delivery_attempts";
CREATE TEMP TABLE "partition_balances" ON COMMIT DROP AS
SELECT acct, sum(v) AS v FROM (SELECT "credit_account" AS acct, "amount" AS v FROM "ledger_entries"
                               UNION ALL SELECT "debit_account", -"amount" FROM "ledger_entries") s GROUP BY 1;

SELECT pg_temp.partition_monthly('payments', 'created_at', NULL, NULL, '{}', 'payment_keys', 3);
SELECT pg_temp.partition_monthly('outbox_events', 'created_at', NULL, NULL, '{outbox_events_kind_aggregate_id_key}', 'outbox_event_keys', 3);
SELECT pg_temp.partition_monthly('delivery_attempts', 'attempted_at', NULL, NULL, '{}', NULL, 3);
SELECT pg_temp.partition_monthly('ledger_entries', 'created_at', '"created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP',
                                 '(SELECT t."created_at" FROM "ledger_transfers" t WHERE t."id" = o."transfer_id")', '{}', NULL, 3);

-- The entries' transfer is referenced with its creation time (see above).
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_transfer_id_fkey";
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transfer_id_fkey" FOREIGN KEY ("transfer_id", "created_at") REFERENCES "ledger_transfers"("id", "created_at") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The key tables are kept by triggers, so every writer of payments and outbox_events (raw SQL
-- and Prisma alike) keeps them without knowing.
CREATE FUNCTION "payment_keys_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "payment_keys" ("id", "created_at") VALUES (NEW."id", NEW."created_at");
  RETURN NEW;
END;
$$;
CREATE FUNCTION "payment_keys_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "payment_keys" WHERE "id" = OLD."id";
  RETURN OLD;
END;
$$;
CREATE FUNCTION "partition_key_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%: % and the creation time are fixed once written', TG_TABLE_NAME, TG_ARGV[0] USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER "payments_keys_insert" BEFORE INSERT ON "payments" FOR EACH ROW EXECUTE FUNCTION "payment_keys_insert"();
CREATE TRIGGER "payments_keys_delete" AFTER DELETE ON "payments" FOR EACH ROW EXECUTE FUNCTION "payment_keys_delete"();
CREATE TRIGGER "payments_keys_immutable" BEFORE UPDATE OF "id", "created_at" ON "payments" FOR EACH ROW
  WHEN (OLD."id" IS DISTINCT FROM NEW."id" OR OLD."created_at" IS DISTINCT FROM NEW."created_at")
  EXECUTE FUNCTION "partition_key_immutable"('id');

-- A second event of the same (kind, aggregate_id) is skipped, as ON CONFLICT DO NOTHING did.
CREATE FUNCTION "outbox_event_keys_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "outbox_event_keys" ("kind", "aggregate_id", "id", "created_at")
  VALUES (NEW."kind", NEW."aggregate_id", NEW."id", NEW."created_at")
  ON CONFLICT ("kind", "aggregate_id") DO NOTHING;
  IF NOT FOUND THEN RETURN NULL; END IF;
  RETURN NEW;
END;
$$;
CREATE FUNCTION "outbox_event_keys_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "outbox_event_keys" WHERE "id" = OLD."id";
  RETURN OLD;
END;
$$;
CREATE TRIGGER "outbox_events_keys_insert" BEFORE INSERT ON "outbox_events" FOR EACH ROW EXECUTE FUNCTION "outbox_event_keys_insert"();
CREATE TRIGGER "outbox_events_keys_delete" AFTER DELETE ON "outbox_events" FOR EACH ROW EXECUTE FUNCTION "outbox_event_keys_delete"();
CREATE TRIGGER "outbox_events_keys_immutable" BEFORE UPDATE OF "id", "kind", "aggregate_id", "created_at" ON "outbox_events" FOR EACH ROW
  WHEN (OLD."id" IS DISTINCT FROM NEW."id" OR OLD."kind" IS DISTINCT FROM NEW."kind"
        OR OLD."aggregate_id" IS DISTINCT FROM NEW."aggregate_id" OR OLD."created_at" IS DISTINCT FROM NEW."created_at")
  EXECUTE FUNCTION "partition_key_immutable"('id, kind and aggregate_id');

-- Every row moved, and every ledger account (merchant or operator) where it was; else stop here.
DO $$
DECLARE bad text;
BEGIN
  SELECT string_agg(c.t, ', ') INTO bad FROM "partition_counts" c
   WHERE c.n <> CASE c.t WHEN 'payments' THEN (SELECT count(*) FROM "payments") WHEN 'ledger_entries' THEN (SELECT count(*) FROM "ledger_entries")
                         WHEN 'outbox_events' THEN (SELECT count(*) FROM "outbox_events") ELSE (SELECT count(*) FROM "delivery_attempts") END;
  IF bad IS NOT NULL THEN RAISE EXCEPTION 'partitioning lost rows of %', bad; END IF;
  SELECT string_agg(acct, ', ') INTO bad FROM "partition_balances" o FULL JOIN (
    SELECT acct, sum(v) AS v FROM (SELECT "credit_account" AS acct, "amount" AS v FROM "ledger_entries"
                                   UNION ALL SELECT "debit_account", -"amount" FROM "ledger_entries") s GROUP BY 1) n USING (acct)
   WHERE o.v IS DISTINCT FROM n.v;
  IF bad IS NOT NULL THEN RAISE EXCEPTION 'partitioning changed ledger accounts %', bad; END IF;
END $$;

ANALYZE "payments", "ledger_entries", "outbox_events", "delivery_attempts", "payment_keys", "outbox_event_keys";
