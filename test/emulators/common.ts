import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

/**
 * What the provider emulators share: a real HTTP server on 127.0.0.1 that can misbehave on
 * demand, and a notifier that posts notifications with retries and can duplicate, reorder or
 * lose them. The provider rules live in yookassa.ts and tbank.ts, each citing its source.
 */

/** A switch for the API, taken by the next matching calls (`times`, default 1; Infinity = the instance). */
export interface ApiMisbehaviour {
  /** Operation name as the emulator names it (e.g. 'payments.create', 'Init'); any when absent. */
  op?: string;
  times?: number;
  /** Answer this much later (the operation is applied after the delay). */
  delayMs?: number;
  /** Answer this 5xx before applying anything. */
  status5xx?: number;
  /** Apply the operation, then hold the answer past the client's timeout ('hold') or cut the connection ('drop'). */
  timeoutAfterApply?: 'hold' | 'drop';
  /** How long 'hold' keeps the connection open before cutting it (default 60 s, or until stop()). */
  holdMs?: number;
  /**
   * YooKassa: apply the creation, then answer 202 "processing" this many times (default 1) to it
   * and to its repeats under the same key, with `retry_after` (ms, default 50) in the body; the
   * stored result after that.
   */
  processing?: { answers?: number; retryAfterMs?: number };
  /**
   * Answer 429 before applying anything (a rate limit); `retryAfter` seconds as the header when
   * given, `retryAfterMs` as the body's `retry_after` (ms) when given.
   */
  status429?: { retryAfter?: number; retryAfterMs?: number };
  /**
   * YooKassa: apply the creation, then answer 500 "result unknown" this many times (default 1)
   * to it and to its repeats under the same key; the stored result after that.
   */
  status5xxAfterApply?: { answers?: number };
  /** T-Bank: answer HTTP 200 with Success false and this ErrorCode before applying anything. */
  errorCode?: string;
  /**
   * T-Bank: apply the operation, then answer HTTP 200 with Success false, this ErrorCode and no
   * Status: 9999 is "internal error" ([5] of the T-Bank emulator), after which the operation's
   * effect is known only from GetState.
   */
  errorAfterApply?: string;
}

/**
 * How the next notifications are delivered:
 * - normal: once, retried until the receiver accepts it;
 * - duplicate: each one `copies` times (default 2), each copy accepted separately;
 * - out-of-order: kept until flushNotifications(), then delivered newest first;
 * - lost: never sent (recorded in `lost`).
 */
export type NotificationMode = 'normal' | 'duplicate' | 'out-of-order' | 'lost';

export interface NotificationSwitch { notifications: NotificationMode; copies?: number }

export type Misbehaviour = ApiMisbehaviour | NotificationSwitch;

export function isNotificationSwitch(m: Misbehaviour): m is NotificationSwitch {
  return 'notifications' in m;
}

export class MisbehaviourQueue {
  private list: { m: ApiMisbehaviour; left: number }[] = [];

  add(m: ApiMisbehaviour) { this.list.push({ m, left: m.times ?? 1 }); }

  clear() { this.list = []; }

  /** The first switch that matches `op` (and `where`, when given), spending one of its uses. */
  take(op: string, where: (m: ApiMisbehaviour) => boolean = () => true): ApiMisbehaviour | undefined {
    const i = this.list.findIndex((e) => e.left > 0 && (e.m.op === undefined || e.m.op === op) && where(e.m));
    if (i < 0) return undefined;
    const e = this.list[i]!;
    e.left -= 1;
    if (e.left <= 0) this.list.splice(i, 1);
    return e.m;
  }
}

export interface Delivery {
  url: string;
  body: unknown;
  attempt: number;
  status: number | null;
  responseText: string;
  accepted: boolean;
  at: number;
}

export interface NotifierOptions {
  /** Is the receiver's answer an acknowledgement? (YooKassa: HTTP 200; T-Bank: the body "OK".) */
  accepts: (status: number, text: string) => boolean;
  /** Attempts per notification before giving up (the real providers keep trying for hours). */
  maxAttempts?: number;
  /** First retry delay; doubled each attempt. */
  retryBaseMs?: number;
  timeoutMs?: number;
}

export class Notifier {
  mode: NotificationMode = 'normal';
  copies = 2;
  readonly deliveries: Delivery[] = [];
  readonly lost: { url: string; body: unknown }[] = [];
  private held: { url: string; body: unknown }[] = [];
  private pending = new Set<Promise<void>>();
  private stopped = false;
  private timers = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: NotifierOptions) {}

  set(s: NotificationSwitch) {
    this.mode = s.notifications;
    if (s.copies) this.copies = s.copies;
  }

  /** Queues one notification as the current mode says. */
  notify(url: string | undefined, body: unknown) {
    if (!url) return;
    if (this.mode === 'lost') { this.lost.push({ url, body }); return; }
    if (this.mode === 'out-of-order') { this.held.push({ url, body }); return; }
    const n = this.mode === 'duplicate' ? this.copies : 1;
    for (let i = 0; i < n; i += 1) this.track(this.deliver(url, body));
  }

  /** Delivers the held notifications newest first, and returns to normal delivery. */
  flushNotifications() {
    const held = this.held.reverse();
    this.held = [];
    this.mode = 'normal';
    for (const h of held) this.track(this.deliver(h.url, h.body));
  }

  get heldCount() { return this.held.length; }

  /** Posts once, now, with no retry: the caller sees what the receiver answered (forged notifications). */
  async postOnce(url: string, body: unknown): Promise<{ status: number; text: string }> {
    const r = await postJson(url, body, this.opts.timeoutMs ?? 5000);
    this.deliveries.push({ url, body, attempt: 1, status: r.status, responseText: r.text, accepted: false, at: Date.now() });
    return r;
  }

  /** Resolves once every notification sent so far has been accepted or given up on. */
  async idle() {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  stop() {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
  }

  private track(p: Promise<void>) {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private async deliver(url: string, body: unknown) {
    const max = this.opts.maxAttempts ?? 8;
    let delay = this.opts.retryBaseMs ?? 25;
    for (let attempt = 1; attempt <= max && !this.stopped; attempt += 1) {
      let status: number | null = null;
      let text = '';
      try {
        const r = await postJson(url, body, this.opts.timeoutMs ?? 5000);
        status = r.status;
        text = r.text;
      } catch (e) {
        text = (e as Error).message;
      }
      const accepted = status !== null && this.opts.accepts(status, text);
      this.deliveries.push({ url, body, attempt, status, responseText: text, accepted, at: Date.now() });
      if (accepted) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => { this.timers.delete(t); resolve(); }, delay);
        this.timers.add(t);
      });
      delay *= 2;
    }
  }
}

async function postJson(url: string, body: unknown, timeoutMs: number) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, text: await res.text() };
}

export interface Req {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  raw: string;
  socket: Socket;
}

export interface Answer {
  status: number;
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export const json = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body), contentType: 'application/json; charset=utf-8' });
export const html = (body: string, status = 200): Answer => ({ status, body, contentType: 'text/html; charset=utf-8' });
export const redirect = (location: string): Answer => ({ status: 303, body: '', headers: { location } });

/**
 * The HTTP side: one handler, every open socket tracked so stop() (and 'drop') can cut them,
 * and the misbehaviour switches applied around the operation.
 */
export class EmulatorServer {
  private server!: http.Server;
  private sockets = new Set<Socket>();
  private holds = new Set<() => void>();
  baseUrl = '';

  constructor(private readonly handle: (req: Req) => Promise<Answer | null>) {}

  async start() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const r: Req = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          raw: Buffer.concat(chunks).toString('utf8'),
          socket: req.socket,
        };
        this.handle(r).then((a) => {
          if (a === null || res.destroyed) return;
          res.writeHead(a.status, { ...(a.contentType ? { 'content-type': a.contentType } : {}), ...(a.headers ?? {}) });
          res.end(a.body);
        }, (e: unknown) => {
          if (res.destroyed) return;
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`emulator bug: ${(e as Error).stack ?? String(e)}`);
        });
      });
    });
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Runs `apply` under the switch `m`: delayed, refused with a 5xx before applying, or applied
   * and then answered never (null: the socket is held or cut).
   */
  async guarded(req: Req, m: ApiMisbehaviour | undefined, fail5xx: (status: number) => Answer, apply: () => Answer | Promise<Answer>): Promise<Answer | null> {
    if (m?.delayMs) await sleep(m.delayMs);
    if (m?.status5xx) return fail5xx(m.status5xx);
    const a = await apply();
    if (m?.timeoutAfterApply === 'drop') { req.socket.destroy(); return null; }
    if (m?.timeoutAfterApply === 'hold') {
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, m.holdMs ?? 60_000);
        function done() { clearTimeout(t); resolve(); }
        this.holds.add(done);
      });
      req.socket.destroy();
      return null;
    }
    return a;
  }

  async stop() {
    for (const h of this.holds) h();
    this.holds.clear();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export function escapeHtml(s: string) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function parseForm(raw: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(raw));
}

/** Card numbers never appear whole in answers or logs: first 6 and last 4, as both providers show them. */
export function maskPan(pan: string) {
  return `${pan.slice(0, 6)}******${pan.slice(-4)}`;
}
