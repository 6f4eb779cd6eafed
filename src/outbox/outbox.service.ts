import pino from 'pino';
import type { Config } from '../config.js';
import type { Db, InTx } from '../db/client.js';
import { withPgTx } from '../db/client.js';
import type { OutboxEventStatus } from '../generated/prisma/enums.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../lib/ids.js';
import { enqueueEvent, NO_URL, type PaymentPostbackFields } from './events.js';
import { OutboxDeliverer, type DeliveryResult, type TokenReader } from './deliverer.js';
import { REDELIVERABLE_FROM } from './outbox-event.states.js';

/** Dead events, as far as the transition table lets them go back to PENDING. */
const DEAD_REDELIVERABLE = REDELIVERABLE_FROM.filter((s) => s === 'DEAD');

export type EventStatusFilter = 'pending' | 'delivered' | 'dead';

export interface EventListFilter {
  status?: EventStatusFilter; merchantId?: string; kind?: string;
  /** Keyset cursor: only events with a smaller id (older). */
  beforeId?: string; limit?: number;
  /** true: only events given up because no URL was configured; false: all but those. */
  notConfigured?: boolean; createdFrom?: Date; createdBefore?: Date;
}

export interface AttemptView {
  attempted_at: string;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  response_head: string | null;
  /** The URL this attempt posted to (null for attempts recorded before it was kept). */
  url: string | null;
}

export interface EventView {
  id: string;
  merchant_id: string;
  kind: string;
  aggregate_id: string;
  trs_id: string | null;
  url: string | null;
  status: EventStatusFilter;
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  fields: Record<string, unknown>;
  attempts: AttemptView[];
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());
const ID_RE = /^\d{1,18}$/;

/**
 * The operator's (and the cabinet's) view of outbound events: list with attempts, redeliver
 * one or all dead events of a merchant, and send a test postback to a shop's Result URL.
 */
export class OutboxService {
  constructor(private readonly config: Config, private readonly db: Db, private readonly merchants: TokenReader) {}

  /**
   * Newest first, in the events' real order: by their bigint id (a sequence), never by its
   * text (which put 9 before 25). `beforeId` pages on (keyset: ids below it).
   */
  async list(filter: EventListFilter = {}): Promise<EventView[]> {
    return (await this.page(filter)).data;
  }

  /**
   * One keyset page of `list`: `limit` events and the cursor of the next page (the last id
   * shown), or null when nothing older matches. Reads one row more to know, so the last page
   * never points at an empty one.
   */
  async page(filter: EventListFilter = {}): Promise<{ data: EventView[]; nextBeforeId: string | null }> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.notConfigured !== undefined) {
      args.push(NO_URL);
      where.push(filter.notConfigured ? `status = 'DEAD' AND last_error = $${args.length}` : `NOT (status = 'DEAD' AND last_error IS NOT DISTINCT FROM $${args.length})`);
    }
    if (filter.createdFrom) { args.push(filter.createdFrom); where.push(`created_at >= $${args.length}`); }
    if (filter.createdBefore) { args.push(filter.createdBefore); where.push(`created_at < $${args.length}`); }
    if (filter.status) { args.push(filter.status.toUpperCase()); where.push(`status = $${args.length}::"OutboxEventStatus"`); }
    if (filter.merchantId) { args.push(filter.merchantId); where.push(`merchant_id = $${args.length}`); }
    if (filter.kind) { args.push(filter.kind); where.push(`kind::text = $${args.length}`); }
    if (filter.beforeId) {
      if (!ID_RE.test(filter.beforeId)) throw ValidationError.field('before_id', 'The before_id is invalid.');
      args.push(filter.beforeId); where.push(`e.id < $${args.length}::bigint`);
    }
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
    args.push(limit + 1);
    // ORDER BY names the column through the table alias: a bare `id` would be the text output column.
    const r = await this.db.pool.query(
      `SELECT e.id::text AS id, merchant_id, kind::text AS kind, aggregate_id, url, payload, status::text AS status, attempts,
              next_attempt_at, last_error, created_at, delivered_at
         FROM outbox_events e ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY e.id DESC LIMIT $${args.length}`,
      args,
    );
    const more = r.rows.length > limit;
    const rows = more ? r.rows.slice(0, limit) : r.rows;
    return { data: await this.withAttempts(rows), nextBeforeId: more ? (rows.at(-1)!.id as string) : null };
  }

  /**
   * Events given up on: `dead` after failed deliveries, `notConfigured` never sent because no URL
   * was set (the cabinet's "Not configured"; not a delivery failure, so not counted as dead).
   */
  async givenUpCounts(): Promise<{ dead: number; notConfigured: number }> {
    const r = await this.db.pool.query<{ dead: number; not_configured: number }>(
      `SELECT count(*) FILTER (WHERE last_error IS DISTINCT FROM $1)::int AS dead, count(*) FILTER (WHERE last_error = $1)::int AS not_configured
         FROM outbox_events WHERE status = 'DEAD'`,
      [NO_URL],
    );
    return { dead: r.rows[0]!.dead, notConfigured: r.rows[0]!.not_configured };
  }

  async get(id: string, merchantId?: string): Promise<EventView> {
    if (!ID_RE.test(id)) throw new NotFoundError('Event not found.');
    const r = await this.db.pool.query(
      `SELECT id::text AS id, merchant_id, kind::text AS kind, aggregate_id, url, payload, status::text AS status, attempts,
              next_attempt_at, last_error, created_at, delivered_at
         FROM outbox_events WHERE id = $1::bigint ${merchantId ? 'AND merchant_id = $2' : ''}`,
      merchantId ? [id, merchantId] : [id],
    );
    if (!r.rows[0]) throw new NotFoundError('Event not found.');
    return (await this.withAttempts(r.rows))[0]!;
  }

  /**
   * Sends an event again: a DEAD or DELIVERED event goes back to PENDING, due now, with a fresh
   * retry budget (its attempt history is kept). A PENDING event is made due now; one being
   * delivered (leased) is left to its worker. `merchantId` scopes it (cabinet).
   */
  async redeliver(id: string, merchantId?: string, inTx?: InTx<{ id: string; status: string }>): Promise<EventView> {
    const before = await this.get(id, merchantId);
    await withPgTx(this.db.pool, async (c) => {
      await c.query(
        `UPDATE outbox_events
            SET status = 'PENDING', attempts = 0, next_attempt_at = now(), last_error = NULL, delivered_at = NULL,
                lease_owner = NULL, lease_until = NULL
          WHERE id = $1::bigint AND status = ANY($2::"OutboxEventStatus"[])`,
        [before.id, REDELIVERABLE_FROM],
      );
      await c.query(
        `UPDATE outbox_events SET next_attempt_at = now()
          WHERE id = $1::bigint AND status = 'PENDING' AND next_attempt_at > now() AND (lease_until IS NULL OR lease_until <= now())`,
        [before.id],
      );
      if (inTx) await inTx(c, { id: String(before.id), status: String(before.status) });
    });
    return this.get(before.id, merchantId);
  }

  /** Puts every DEAD event of a merchant back to PENDING; returns how many. */
  async redeliverDead(merchantId: string, inTx?: InTx<{ redelivered: number }>): Promise<{ redelivered: number }> {
    const m = await this.db.pool.query('SELECT 1 FROM merchants WHERE id = $1', [merchantId]);
    if (m.rowCount === 0) throw new NotFoundError('Merchant not found.');
    return withPgTx(this.db.pool, async (c) => {
      const r = await c.query(
        `UPDATE outbox_events
            SET status = 'PENDING', attempts = 0, next_attempt_at = now(), last_error = NULL, lease_owner = NULL, lease_until = NULL
          WHERE merchant_id = $1 AND status = ANY($2::"OutboxEventStatus"[])`,
        [merchantId, DEAD_REDELIVERABLE],
      );
      const out = { redelivered: r.rowCount ?? 0 };
      if (inTx) await inTx(c, out);
      return out;
    });
  }

  /**
   * A test postback (payment postback fields with sample values, signed with the current token)
   * to the shop's Result URL, sent at once, outside any transaction. One attempt, no retries:
   * the caller sees the answer now. `merchantId` (cabinet) must own the shop; the operator
   * passes null.
   */
  async sendTestPostback(merchantId: string | null, shopId: string): Promise<{ delivered: boolean; event: EventView; attempt: AttemptView | null }> {
    const s = await this.db.pool.query('SELECT id, merchant_id, result_url FROM shops WHERE id = $1', [shopId]);
    const shop = s.rows[0] as { id: string; merchant_id: string; result_url: string | null } | undefined;
    if (!shop || (merchantId !== null && shop.merchant_id !== merchantId)) throw new NotFoundError('Shop not found.');
    if (!shop.result_url) throw ValidationError.field('result_url', 'The shop has no Result URL.');
    const trsId = `test-${newId()}`;
    const fields: PaymentPostbackFields = {
      InvId: 'test', OutSum: '100.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: trsId, Status: 'SUCCESS', custom: 'test postback',
    };
    const eventId = await withPgTx(this.db.pool, async (c) => {
      await enqueueEvent(c, { merchantId: shop.merchant_id, kind: 'TEST_POSTBACK', aggregateId: trsId, url: shop.result_url, fields });
      // The key row (written by the insert's trigger): outbox partitions have no (kind, aggregate_id) index.
      const r = await c.query(`SELECT id::text AS id FROM outbox_event_keys WHERE kind = 'TEST_POSTBACK' AND aggregate_id = $1`, [trsId]);
      return r.rows[0].id as string;
    });
    const d = new OutboxDeliverer({ config: this.config, db: this.db, services: { merchants: this.merchants }, log: silentLog });
    const ev = await d.claimOne(eventId);
    let result: DeliveryResult | null = null;
    if (ev) {
      result = await d.deliver(ev, { retries: false });
      await d.record([result]);
    }
    const event = await this.get(eventId);
    return { delivered: event.status === 'delivered', event, attempt: event.attempts.at(-1) ?? null };
  }

  private async withAttempts(rows: Record<string, unknown>[]): Promise<EventView[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id as string);
    const a = await this.db.pool.query(
      `SELECT event_id::text AS event_id, attempted_at, http_status, latency_ms, error, response_head, url
         FROM delivery_attempts WHERE event_id = ANY($1::bigint[]) ORDER BY event_id, attempted_at, id`,
      [ids],
    );
    const byEvent = new Map<string, AttemptView[]>();
    for (const x of a.rows) {
      const list = byEvent.get(x.event_id) ?? [];
      list.push({ attempted_at: iso(x.attempted_at)!, http_status: x.http_status, latency_ms: x.latency_ms, error: x.error, response_head: x.response_head, url: x.url });
      byEvent.set(x.event_id, list);
    }
    return rows.map((r) => {
      const fields = ((r.payload as { fields?: Record<string, unknown> } | null)?.fields) ?? {};
      const status = (r.status as OutboxEventStatus).toLowerCase() as EventStatusFilter;
      return {
        id: r.id as string,
        merchant_id: r.merchant_id as string,
        kind: r.kind as string,
        aggregate_id: r.aggregate_id as string,
        trs_id: typeof fields.TrsId === 'string' ? fields.TrsId : null,
        url: r.url as string | null,
        status,
        attempt_count: r.attempts as number,
        next_attempt_at: status === 'pending' ? iso(r.next_attempt_at as Date) : null,
        last_error: r.last_error as string | null,
        created_at: iso(r.created_at as Date)!,
        delivered_at: iso(r.delivered_at as Date | null),
        fields,
        attempts: byEvent.get(r.id as string) ?? [],
      };
    });
  }
}

// A test postback's failure is the caller's answer, not a log line.
const silentLog = pino({ level: 'silent' });
