import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/client.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { OutboxEventKind } from '../generated/prisma/enums.js';
import { eventBody, NO_URL } from './events.js';
import { sendForm } from './http-sender.js';
import { decide, type EventDecision } from '../lib/delivery-retry.js';
import { assertTransition, OUTBOX_EVENT_PAIRS } from './outbox-event.states.js';

export interface OutboxWorkerOptions {
  /** Lease owner name; unique per worker. */
  workerId?: string;
  /** Deliveries in flight at most. */
  concurrency?: number;
  /**
   * Deliveries in flight at most for one merchant (default half of concurrency), so one slow
   * receiver cannot hold every slot; lent more while no other merchant has events due.
   */
  perMerchant?: number;
  /** A delivery past the merchant's cap (a lent slot) gives its slot back after this long (default 1000). */
  lendMs?: number;
  /** How long a claimed event is ours; another worker takes it over after that. */
  leaseMs?: number;
  /** Per-attempt HTTP timeout (must stay well under leaseMs). */
  timeoutMs?: number;
  /** Sleep when nothing is due. */
  pollMs?: number;
  /** The clock (injectable: retry-schedule tests move it instead of waiting). */
  now?: () => Date;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Retry delays (default RETRY_DELAYS_MS, about 24 h); the attempts allowed are one more. */
  retryDelaysMs?: readonly number[];
  /** Defaults to config.allowPrivateWebhookUrls. */
  allowPrivate?: boolean;
}

/** Reads a shop's signing token from its stored ciphertext (the merchant service does, above the outbox). */
export interface TokenReader { decryptToken(enc: string): string }

/** What delivery needs: the token decryption only, so a service can deliver too (test postback). */
export type OutboxCtx = { config: Config; db: Db; log: FastifyBaseLogger } & { services: { merchants: TokenReader } };
type Ctx = OutboxCtx;

/** An event claimed under our lease, with what is needed to send it. */
export interface ClaimedEvent {
  id: string;
  merchantId: string;
  kind: OutboxEventKind;
  aggregateId: string;
  fields: Record<string, unknown>;
  /** Attempts made before this one. */
  attempts: number;
  /** The owner's current URL (resolved at send time), null when none is configured. */
  url: string | null;
  tokenEnc: string;
}

/** The outcome of one claimed event, waiting to be written (in bulk). */
export interface DeliveryResult {
  eventId: string;
  decision: EventDecision;
  lastError: string | null;
  /** null when nothing was sent (no URL configured). */
  attempt: {
    attemptedAt: Date;
    httpStatus: number | null;
    latencyMs: number;
    error: string | null;
    responseHead: string | null;
    /** Where it was posted (the owner's URL at send time). */
    url?: string | null;
  } | null;
}

// The URL an event goes to is the one configured NOW: the shop's Result URL for a payment
// postback, the merchant's payout webhook URL for a payout webhook, the payment's shop's
// Result URL for a refund or chargeback postback. Events whose payment or
// payout row is not found (test postbacks) keep the URL stored at enqueue time.
// Payments are found through payment_keys (id -> created_at): the partition key lets the
// planner probe one month's partition, not every month's (docs/adr/0012-payment-ids-name-their-month.md).
const CLAIM_SELECT = `
  SELECT c.id::text AS id, c.merchant_id, c.kind::text AS kind, c.aggregate_id, c.payload, c.attempts, m.api_token_enc,
         CASE WHEN c.kind = 'PAYMENT_POSTBACK' AND p.id IS NOT NULL THEN s.result_url
              WHEN c.kind = 'PAYOUT_WEBHOOK' AND po.id IS NOT NULL THEN m.payout_webhook_url
              WHEN c.kind IN ('REFUND_POSTBACK', 'CHARGEBACK_POSTBACK') AND s2.id IS NOT NULL THEN s2.result_url
              ELSE c.url END AS target_url
    FROM claimed c
    JOIN merchants m ON m.id = c.merchant_id
    LEFT JOIN payment_keys pk ON c.kind = 'PAYMENT_POSTBACK' AND pk.id = c.aggregate_id
    LEFT JOIN payments p ON p.id = pk.id AND p.created_at = pk.created_at
    LEFT JOIN shops s ON s.id = p.shop_id
    LEFT JOIN payouts po ON c.kind = 'PAYOUT_WEBHOOK' AND po.id = c.aggregate_id
    LEFT JOIN refunds rf ON c.kind = 'REFUND_POSTBACK' AND rf.id = c.aggregate_id
    LEFT JOIN chargebacks cb ON c.kind = 'CHARGEBACK_POSTBACK' AND cb.id = c.aggregate_id
    LEFT JOIN payment_keys pk2 ON pk2.id = COALESCE(rf.payment_id, cb.payment_id)
    LEFT JOIN payments p2 ON p2.id = pk2.id AND p2.created_at = pk2.created_at
    LEFT JOIN shops s2 ON s2.id = p2.shop_id`;

// Due events oldest first, at most `perMerchant` per merchant counting those in flight, idle
// slots lent: outbox_claim_due (prisma/migrations/20261125233000_outbox_claim_function says
// how, and why it is a function) leases them to this worker; this statement reads their targets.
const CLAIM_DUE_SQL = `
  WITH claimed AS (SELECT * FROM outbox_claim_due($1, $2, $3, $4::int, $5::jsonb, $6::int, $7::int, $8::text[]))
  ${CLAIM_SELECT}`;

const CLAIM_ONE_SQL = `
  WITH claimed AS (
    UPDATE outbox_events e SET lease_owner = $1, lease_until = $3
     WHERE e.id = $4 AND e.status = 'PENDING' AND (e.lease_until IS NULL OR e.lease_until <= $2)
    RETURNING e.id, e.merchant_id, e.kind, e.aggregate_id, e.url, e.payload, e.attempts)
  ${CLAIM_SELECT}`;

// One statement writes a whole batch of results: the events (only those whose lease is still
// ours: a worker that lost its lease cannot finish an event) and every attempt made.
const RECORD_SQL = `
  WITH r AS (
    SELECT * FROM unnest($2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::boolean[],
                         $7::timestamptz[], $8::int[], $9::int[], $10::text[], $11::text[], $14::text[])
      AS r(id, status, next_at, last_error, attempted, attempted_at, http_status, latency_ms, error, response_head, url)
  ), upd AS (
    UPDATE outbox_events e
       SET status = r.status::"OutboxEventStatus",
           attempts = e.attempts + CASE WHEN r.attempted THEN 1 ELSE 0 END,
           next_attempt_at = COALESCE(r.next_at, e.next_attempt_at),
           last_error = r.last_error,
           delivered_at = CASE WHEN r.status = 'DELIVERED' THEN r.attempted_at ELSE e.delivered_at END,
           lease_owner = NULL, lease_until = NULL
      FROM r
     WHERE e.id = r.id AND e.lease_owner = $1
       -- The transition table is the guard: only (current, result) pairs it lists.
       AND EXISTS (SELECT 1 FROM unnest($12::text[], $13::text[]) AS t(f, tt) WHERE t.f = e.status::text AND t.tt = r.status)
    RETURNING e.id
  ), ins AS (
    INSERT INTO delivery_attempts (event_id, attempted_at, http_status, latency_ms, error, response_head, url)
    SELECT id, attempted_at, http_status, latency_ms, error, response_head, url FROM r WHERE attempted
  )
  SELECT count(*)::int AS n FROM upd`;

/**
 * Claims due events under a lease, posts them, and writes the results in bulk. Used by the
 * background loop (src/workers/outbox.ts), by test postbacks (deliverNow), and by tests that drive
 * it step by step with an injected clock (runOnce).
 */
export class OutboxDeliverer {
  readonly workerId: string;
  readonly leaseMs: number;
  readonly timeoutMs: number;
  readonly now: () => Date;
  private readonly random: () => number;
  private readonly allowPrivate: boolean;
  private readonly delays: readonly number[] | undefined;
  private readonly tokens = new Map<string, string>();
  /** Timeouts in a row per receiver (URL origin); reset by any answer. */
  private readonly timeouts = new Map<string, number>();

  constructor(private readonly ctx: Ctx, opts: OutboxWorkerOptions = {}) {
    this.workerId = opts.workerId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.now = opts.now ?? (() => new Date());
    this.random = opts.random ?? Math.random;
    this.allowPrivate = opts.allowPrivate ?? ctx.config.allowPrivateWebhookUrls;
    this.delays = opts.retryDelaysMs;
  }

  /**
   * Claims up to `limit` due events (FOR UPDATE SKIP LOCKED: concurrent workers never share
   * one), at most `perMerchant` per merchant counting `busy` (its deliveries in flight). With
   * `lend`, a merchant may go on up to `lend.upTo` in flight when no other merchant has an event
   * the cap lets in, unless it is in `lend.not`.
   */
  async claim(
    limit: number, q: Queryable = this.ctx.db.pool, perMerchant = limit, busy: ReadonlyMap<string, number> = new Map(),
    lend: { upTo: number; not?: readonly string[] } = { upTo: perMerchant },
  ): Promise<ClaimedEvent[]> {
    const now = this.now();
    const inFlight = JSON.stringify([...busy].map(([m, n]) => ({ m, n })));
    // Named: planned once per connection (node-postgres drops the name behind PgBouncer).
    const r = await q.query({ name: 'outbox_claim', text: CLAIM_DUE_SQL, values: [
      this.workerId, now, new Date(now.getTime() + this.leaseMs), limit, inFlight, perMerchant, Math.max(perMerchant, lend.upTo), lend.not ?? [],
    ] });
    return r.rows.map(toClaimed);
  }

  /** Claims one given event if it is pending and not leased by another worker. */
  async claimOne(eventId: string): Promise<ClaimedEvent | null> {
    const now = this.now();
    const r = await this.ctx.db.pool.query(CLAIM_ONE_SQL, [this.workerId, now, new Date(now.getTime() + this.leaseMs), eventId]);
    return r.rows[0] ? toClaimed(r.rows[0]) : null;
  }

  /** Posts one claimed event (never throws) and decides its next state. */
  async deliver(ev: ClaimedEvent, opts: { retries?: boolean } = {}): Promise<DeliveryResult> {
    const attemptedAt = this.now();
    if (!ev.url) return { eventId: ev.id, decision: { status: 'DEAD' }, lastError: NO_URL, attempt: null };
    let token: string;
    try {
      token = this.token(ev.tokenEnc);
    } catch {
      // The encryption key changed under the stored token: nothing can be signed; keep it for retry.
      this.ctx.log.error({ eventId: ev.id, merchantId: ev.merchantId }, 'outbox: cannot decrypt the merchant token');
      const decision = decide({ kind: 'retryable', reason: 'cannot sign' }, ev.attempts + 1, attemptedAt, this.random, this.delays);
      return { eventId: ev.id, decision, lastError: 'cannot sign: token not decryptable', attempt: { attemptedAt, httpStatus: null, latencyMs: 0, error: 'cannot sign: token not decryptable', responseHead: null } };
    }
    const body = eventBody(ev.kind, ev.fields, token);
    const origin = originOf(ev.url);
    // A receiver that keeps timing out gets a fifth of the timeout (at least 1 s) until it
    // answers again: its events still go out, but hold their slots for less.
    const slow = (this.timeouts.get(origin) ?? 0) >= SLOW_AFTER_TIMEOUTS;
    const timeoutMs = slow ? Math.max(1000, Math.floor(this.timeoutMs / 5)) : this.timeoutMs;
    const r = await sendForm(ev.url, body, { timeoutMs, allowPrivate: this.allowPrivate });
    if (r.outcome.kind === 'retryable' && r.outcome.reason === 'timeout') {
      if (this.timeouts.size > 10_000) this.timeouts.clear();
      this.timeouts.set(origin, (this.timeouts.get(origin) ?? 0) + 1);
    } else if (r.httpStatus !== null) {
      this.timeouts.delete(origin);
    }
    let decision = decide(r.outcome, ev.attempts + 1, this.now(), this.random, this.delays);
    if (decision.status === 'PENDING' && opts.retries === false) decision = { status: 'DEAD' };
    assertTransition('PENDING', decision.status);
    const lastError = r.outcome.kind === 'delivered' ? null : (r.error ?? r.outcome.reason);
    if (r.outcome.kind !== 'delivered') {
      this.ctx.log.warn({ eventId: ev.id, merchantId: ev.merchantId, kind: ev.kind, attempt: ev.attempts + 1, status: r.httpStatus, error: lastError, next: decision.status }, 'outbox: delivery failed');
    }
    return {
      eventId: ev.id, decision, lastError,
      attempt: { attemptedAt, httpStatus: r.httpStatus, latencyMs: r.latencyMs, error: r.error, responseHead: r.responseHead, url: ev.url },
    };
  }

  /** Writes a batch of results in one statement; returns how many events were still ours. */
  async record(results: DeliveryResult[]): Promise<number> {
    if (results.length === 0) return 0;
    const cols = {
      id: [] as string[], status: [] as string[], next: [] as (Date | null)[], err: [] as (string | null)[],
      attempted: [] as boolean[], at: [] as Date[], http: [] as (number | null)[], lat: [] as number[],
      aerr: [] as (string | null)[], head: [] as (string | null)[], url: [] as (string | null)[],
    };
    for (const x of results) {
      cols.id.push(x.eventId);
      cols.status.push(x.decision.status);
      cols.next.push(x.decision.status === 'PENDING' ? x.decision.nextAttemptAt : null);
      cols.err.push(x.lastError);
      cols.attempted.push(x.attempt !== null);
      cols.at.push(x.attempt?.attemptedAt ?? this.now());
      cols.http.push(x.attempt?.httpStatus ?? null);
      cols.lat.push(x.attempt?.latencyMs ?? 0);
      cols.aerr.push(x.attempt?.error ?? null);
      cols.head.push(x.attempt?.responseHead ?? null);
      cols.url.push(x.attempt?.url ?? null);
    }
    const r = await this.ctx.db.pool.query(RECORD_SQL, [
      this.workerId, cols.id, cols.status, cols.next, cols.err, cols.attempted, cols.at, cols.http, cols.lat, cols.aerr, cols.head,
      ...OUTBOX_EVENT_PAIRS, cols.url,
    ]);
    return r.rows[0].n as number;
  }

  /** Gives back every lease this worker still holds (graceful stop). */
  async releaseAll(): Promise<number> {
    const r = await this.ctx.db.pool.query(
      `UPDATE outbox_events SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND status = 'PENDING'`,
      [this.workerId],
    );
    return r.rowCount ?? 0;
  }

  /** Gives back the leases of these events (claimed but not sent). */
  async release(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const r = await this.ctx.db.pool.query(
      `UPDATE outbox_events SET lease_owner = NULL, lease_until = NULL WHERE id = ANY($2::bigint[]) AND lease_owner = $1`,
      [this.workerId, ids],
    );
    return r.rowCount ?? 0;
  }

  /** One step: claim up to `limit` due events, post them all concurrently, record the results. */
  async runOnce(limit = 100): Promise<{ claimed: number; delivered: number; results: DeliveryResult[] }> {
    const events = await this.claim(limit);
    const results = await Promise.all(events.map((e) => this.deliver(e)));
    await this.record(results);
    return { claimed: events.length, delivered: results.filter((r) => r.decision.status === 'DELIVERED').length, results };
  }

  private token(enc: string): string {
    let t = this.tokens.get(enc);
    if (t === undefined) {
      t = this.ctx.services.merchants.decryptToken(enc);
      if (this.tokens.size > 10_000) this.tokens.clear();
      this.tokens.set(enc, t);
    }
    return t;
  }
}

/** Timeouts in a row after which a receiver gets the shorter timeout. */
const SLOW_AFTER_TIMEOUTS = 2;

const originOf = (url: string): string => {
  try { return new URL(url).origin; } catch { return url; }
};

function toClaimed(row: Record<string, unknown>): ClaimedEvent {
  const payload = (row.payload ?? {}) as { fields?: Record<string, unknown> };
  return {
    id: row.id as string,
    merchantId: row.merchant_id as string,
    kind: row.kind as OutboxEventKind,
    aggregateId: row.aggregate_id as string,
    fields: payload.fields ?? {},
    attempts: row.attempts as number,
    url: (row.target_url as string | null) || null,
    tokenEnc: row.api_token_enc as string,
  };
}
