import type { Queryable } from './client.js';
import { statement } from './statement.js';
import type { Counter, Hit, LimitStore } from '../lib/limit-store.js';

// The window of a counter: PostgreSQL's clock, so processes on hosts whose clocks differ agree.
const KEYS = `SELECT x.n, x.k, x.w, x.lim, x.dep, x.ord, floor(extract(epoch FROM now()) * 1000 / x.w)::bigint AS win
  FROM unnest(:names::text[], :keys::text[], :windows::int8[], :limits::int4[], :deps::int4[]) WITH ORDINALITY AS x(n, k, w, lim, dep, ord)`;
const UPSERT = `INSERT INTO limit_counters AS c (name, key, window_no, hits, expires_at)`;
const BUMP = `ON CONFLICT (name, key, window_no) DO UPDATE SET hits = c.hits + EXCLUDED.hits`;

const PEEK = statement('limit_peek', `
  WITH k AS (${KEYS})
  SELECT COALESCE(c.hits, 0) AS hits FROM k
  LEFT JOIN limit_counters c ON c.name = k.n AND c.key = k.k AND c.window_no = k.win
  ORDER BY k.ord`);

const ADD = statement('limit_add', `
  WITH k AS (${KEYS}), up AS (
    ${UPSERT} SELECT n, k, win, :by::int4, to_timestamp((win + 1) * w / 1000.0) FROM k ${BUMP}
    RETURNING c.name, c.key, c.window_no, c.hits, c.expires_at)
  SELECT up.hits, up.window_no, greatest(0, ceil(extract(epoch FROM up.expires_at - now()) * 1000))::int AS ttl_ms
  FROM k JOIN up ON up.name = k.n AND up.key = k.k ORDER BY k.ord`);

// Counted only when every counter is below its limit in the snapshot, and each row only while it
// is still below its limit when locked (ON CONFLICT sees the latest row): of concurrent
// admissions no more than the limit pass. One that loses such a race on one counter may still
// have counted on another of its counters.
const ADMIT = statement('limit_admit', `
  WITH k AS (${KEYS}),
  pre AS (
    SELECT k.*, COALESCE(c.hits, 0) AS hits FROM k
    LEFT JOIN limit_counters c ON c.name = k.n AND c.key = k.k AND c.window_no = k.win),
  cur AS (
    SELECT a.*, CASE WHEN a.dep IS NOT NULL AND (SELECT b.hits FROM pre b WHERE b.ord = a.dep + 1) = 0 THEN 2147483647 ELSE a.lim END AS eff
    FROM pre a),
  up AS (
    ${UPSERT} SELECT n, k, win, 1, to_timestamp((win + 1) * w / 1000.0) FROM cur WHERE (SELECT bool_and(hits < eff) FROM cur)
    ${BUMP} WHERE c.hits < (SELECT a.eff FROM cur a WHERE a.n = c.name AND a.k = c.key)
    RETURNING c.name, c.key, c.window_no, c.hits)
  SELECT up.hits, up.window_no FROM k JOIN up ON up.name = k.n AND up.key = k.k ORDER BY k.ord`);

const RELEASE = statement('limit_release', `
  WITH f AS (
    DELETE FROM limit_counters c USING unnest(:fnames::text[], :fkeys::text[]) AS x(n, k) WHERE c.name = x.n AND c.key = x.k)
  UPDATE limit_counters c SET hits = c.hits - 1
  FROM unnest(:bnames::text[], :bkeys::text[], :bwindows::int8[]) AS x(n, k, win)
  WHERE c.name = x.n AND c.key = x.k AND c.window_no = x.win AND c.hits > 0`);

const SWEEP = statement('limit_sweep', `DELETE FROM limit_counters WHERE expires_at < now() - interval '1 second'`);

const params = (cs: readonly Counter[]) => ({
  names: cs.map((c) => c.name),
  keys: cs.map((c) => c.key),
  windows: cs.map((c) => c.windowMs),
  limits: cs.map((c) => c.limit),
  deps: cs.map((c) => c.onlyAfter ?? null),
});

/**
 * Limits counted in PostgreSQL (the UNLOGGED `limit_counters` table), so N API processes on any
 * number of hosts allow the limit once in total, not N times. Fixed windows: a key's count starts
 * over when its window ends. Each call is one statement.
 */
export class LimitCounters implements LimitStore {
  constructor(private readonly db: Queryable) {}

  async peek(counters: readonly Counter[]): Promise<number[]> {
    const r = await this.db.query<{ hits: number }>(PEEK.bind(params(counters)));
    return r.rows.map((x) => x.hits);
  }

  async add(counters: readonly Counter[], by = 1): Promise<Array<{ hits: number; ttlMs: number; window: string }>> {
    const r = await this.db.query<{ hits: number; window_no: string; ttl_ms: number }>(ADD.bind({ ...params(counters), by }));
    return r.rows.map((x) => ({ hits: x.hits, ttlMs: x.ttl_ms, window: x.window_no }));
  }

  async admit(counters: readonly Counter[]): Promise<Hit[] | null> {
    const r = await this.db.query<{ hits: number; window_no: string }>(ADMIT.bind(params(counters)));
    if (r.rows.length !== counters.length) return null;
    const after = r.rows.map((x) => x.hits);
    // A concurrent admission counted in between: the later ones past the limit are refused.
    const within = counters.every((c, i) => after[i]! <= c.limit || (c.onlyAfter !== undefined && after[c.onlyAfter] === 1));
    return within ? counters.map((counter, i) => ({ counter, window: r.rows[i]!.window_no })) : null;
  }

  async release(forget: readonly Counter[], takeBack: readonly Hit[]): Promise<void> {
    await this.db.query(RELEASE.bind({
      fnames: forget.map((c) => c.name), fkeys: forget.map((c) => c.key),
      bnames: takeBack.map((h) => h.counter.name), bkeys: takeBack.map((h) => h.counter.key), bwindows: takeBack.map((h) => h.window),
    }));
  }

  /** Deletes the windows that are over; the number deleted. */
  async sweep(): Promise<number> {
    return (await this.db.query(SWEEP.bind({}))).rowCount ?? 0;
  }
}
