-- The outbox claim as a function (src/outbox/deliverer.ts calls it, then reads where each
-- claimed event goes). Due events oldest first, at most p_cap per merchant counting those
-- already in flight (p_busy: [{"m": merchant_id, "n": in flight}]), so a merchant with a large
-- backlog or a receiver that never answers cannot take every slot from the others. The cap lends
-- what would stay idle: a merchant may go on up to p_upto in flight when no OTHER merchant has
-- an event the cap lets in, unless it is in p_not_lent (the worker's merchants whose receiver
-- has not answered lately). Lent events come after every capped one and are spread over the
-- borrowers (fewest in flight first).
--
-- Why a function: it runs many times a second under a backlog, and as one statement over every
-- monthly partition its planning cost as much as its execution, while the plan PostgreSQL keeps
-- for a named statement read every due event (docs/performance.md, session 7). Here each step
-- is a statement whose every plan is an index probe, planned once per session:
-- 1. step from one merchant with a due event to the next (outbox_events_pending_merchant_idx:
--    one descent per merchant, whatever its backlog);
-- 2. read that merchant's oldest due events, no more than it can be given;
-- 3. rank those heads as the cap says, lock the picked rows (SKIP LOCKED: another worker may
--    hold them; checked again once locked) and lease them, found by ctid within their month.
-- ROWS 1: the statement around it (named, so planned once) then reads each claimed event's shop
-- by index probes; a larger estimate let a small database's plan hash-join every payment.
CREATE FUNCTION "outbox_claim_due"(p_worker text, p_now timestamptz, p_lease_until timestamptz, p_limit int,
                                   p_busy jsonb, p_cap int, p_upto int, p_not_lent text[])
RETURNS TABLE (id bigint, merchant_id text, kind "OutboxEventKind", aggregate_id text, url text, payload jsonb, attempts int)
LANGUAGE plpgsql ROWS 1 AS $$
#variable_conflict use_column
DECLARE
  m text := '';
  busy int;
  k int;
  r record;
  h_tid tid[] := '{}';
  h_month timestamptz[] := '{}';
  h_id bigint[] := '{}';
  h_merchant text[] := '{}';
  h_due timestamptz[] := '{}';
  h_k int[] := '{}';
BEGIN
  LOOP
    SELECT o.merchant_id INTO m FROM outbox_events o
     WHERE o.status = 'PENDING' AND o.merchant_id > m AND o.next_attempt_at <= p_now AND (o.lease_until IS NULL OR o.lease_until <= p_now)
     ORDER BY o.merchant_id, o.next_attempt_at, o.id LIMIT 1;
    EXIT WHEN NOT FOUND;
    busy := coalesce((SELECT (b->>'n')::int FROM jsonb_array_elements(p_busy) b WHERE b->>'m' = m LIMIT 1), 0);
    k := busy;
    FOR r IN SELECT o.ctid AS tid, o.id, o.created_at, o.next_attempt_at FROM outbox_events o
              WHERE o.status = 'PENDING' AND o.merchant_id = m AND o.next_attempt_at <= p_now AND (o.lease_until IS NULL OR o.lease_until <= p_now)
              ORDER BY o.merchant_id, o.next_attempt_at, o.id LIMIT greatest(least(p_upto - busy, p_limit), 0) LOOP
      k := k + 1;
      h_tid := h_tid || r.tid; h_month := h_month || r.created_at; h_id := h_id || r.id;
      h_merchant := h_merchant || m; h_due := h_due || r.next_attempt_at; h_k := h_k || k;
    END LOOP;
  END LOOP;
  IF cardinality(h_id) = 0 THEN RETURN; END IF;
  RETURN QUERY
  WITH head AS (
    SELECT * FROM unnest(h_tid, h_month, h_id, h_merchant, h_due, h_k) AS h(tid, created_at, id, merchant_id, next_attempt_at, k)
  ), pick AS (
    SELECT c.tid, c.id, c.created_at FROM (
      SELECT r.tid, r.id, r.created_at, r.next_attempt_at, r.k, r.k > p_cap AS lent,
             count(*) FILTER (WHERE r.k <= p_cap) OVER ()
               - count(*) FILTER (WHERE r.k <= p_cap) OVER (PARTITION BY r.merchant_id) AS others
        FROM head r
       WHERE r.k <= p_cap OR (r.k <= p_upto AND r.merchant_id <> ALL(p_not_lent))) c
     WHERE NOT c.lent OR c.others = 0
     ORDER BY c.lent, CASE WHEN c.lent THEN c.k END, c.next_attempt_at
     LIMIT p_limit
  ), locked AS (
    SELECT e.ctid AS tid, e.created_at FROM pick JOIN outbox_events e ON e.ctid = pick.tid AND e.created_at = pick.created_at
     WHERE e.id = pick.id AND e.status = 'PENDING' AND e.next_attempt_at <= p_now AND (e.lease_until IS NULL OR e.lease_until <= p_now)
       FOR UPDATE OF e SKIP LOCKED
  ), claimed AS (
    UPDATE outbox_events e SET lease_owner = p_worker, lease_until = p_lease_until
      FROM locked l WHERE e.ctid = l.tid AND e.created_at = l.created_at
    RETURNING e.id, e.merchant_id, e.kind, e.aggregate_id, e.url, e.payload, e.attempts)
  SELECT * FROM claimed;
END
$$;
