import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { enqueueTestPostbacks } from '../factories/outbox.js';
import { cabinetMerchant, signedIn, type CabinetClient, type CabinetMerchant } from '../cabinet/helpers.js';
import { enrolledOperator } from '../operator/helpers.js';
import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/outbox/events.js';

/**
 * Issue 30 item 1: the event log is in the events' real order (their bigint id, never its text)
 * on every face, and following the cursor each page gives walks every event exactly once.
 * The sequence is moved to 95 so the ids cross 99 -> 100 (as text, "99" > "122").
 */
let t: TestApp;
let m: CabinetMerchant;
let mine: string[];
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const N = 27;

beforeAll(async () => {
  t = await setupTestApp();
  m = await cabinetMerchant(t, { shop: { resultUrl: 'https://shop.example/result' } });
  const other = await cabinetMerchant(t);
  await t.db.pool.query(`SELECT setval(pg_get_serial_sequence('outbox_events', 'id'), 95)`);
  // Interleaved with another merchant's events, in separate transactions.
  for (let i = 0; i < N; i++) {
    await enqueueTestPostbacks(t, m.merchantId, 'https://shop.example/result', 1, `mine-${i}`);
    if (i % 3 === 0) await enqueueTestPostbacks(t, other.merchantId, 'https://other.example/result', 1, `other-${i}`);
  }
  const r = await t.db.pool.query<{ id: string }>('SELECT e.id::text AS id FROM outbox_events e WHERE merchant_id = $1 ORDER BY e.id DESC', [m.merchantId]);
  mine = r.rows.map((x) => x.id);
  expect(mine).toHaveLength(N);
  expect(mine.some((id) => id.length === 2) && mine.some((id) => id.length === 3)).toBe(true);
});
afterAll(async () => { await t.close(); });

/** Follows `next` from the first page until it is null; the ids of every page. */
async function walk(first: string, readPage: (url: string) => Promise<{ ids: string[]; next: string | null }>): Promise<string[][]> {
  const pages: string[][] = [];
  let url: string | null = first;
  while (url !== null) {
    const p = await readPage(url);
    pages.push(p.ids);
    url = p.next;
    if (pages.length > 20) throw new Error('the pages never end');
  }
  return pages;
}

const byFives = (ids: string[]) => Array.from({ length: Math.ceil(ids.length / 5) }, (_, i) => ids.slice(i * 5, i * 5 + 5));
const unescape = (s: string) => s.replace(/&#38;/g, '&');

describe('the event log pages in the events\' real order and neither repeats nor skips', () => {
  it('operator API: limit=5 and before_id from next_before_id, then links.next', async () => {
    const api = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: admin });
      expect(res.statusCode).toBe(200);
      return res.json();
    };
    const viaBeforeId = await walk(`/admin/v1/events?merchant_id=${m.merchantId}&limit=5`, async (url) => {
      const b = await api(url);
      return { ids: b.data.map((e: { id: string }) => e.id), next: b.next_before_id ? `/admin/v1/events?merchant_id=${m.merchantId}&limit=5&before_id=${b.next_before_id}` : null };
    });
    expect(viaBeforeId).toEqual(byFives(mine));
    const viaLinks = await walk(`/admin/v1/events?merchant_id=${m.merchantId}&limit=5`, async (url) => {
      const b = await api(url);
      expect(b.links.next === null).toBe(b.next_before_id === null);
      return { ids: b.data.map((e: { id: string }) => e.id), next: b.links.next ? b.links.next.replace(t.config.publicBaseUrl, '') : null };
    });
    expect(viaLinks).toEqual(byFives(mine));
    // Every merchant's events, also newest first by number.
    const all = (await api('/admin/v1/events?limit=1000')).data.map((e: { id: string }) => Number(e.id));
    expect(all).toEqual([...all].sort((a, b) => b - a));
  });

  const cabinetIds = (html: string) => [...html.matchAll(/<code>(mine-\d+-0)<\/code>/g)].map((x) => x[1]!);
  const trsToId = async () => new Map((await t.db.pool.query<{ id: string; aggregate_id: string }>(
    'SELECT id::text AS id, aggregate_id FROM outbox_events WHERE merchant_id = $1', [m.merchantId])).rows.map((r) => [r.aggregate_id, r.id]));

  it('cabinet: /cabinet/webhooks?per_page=5, following the "Next" link', async () => {
    const c: CabinetClient = await signedIn(t, m);
    const ids = await trsToId();
    const pages = await walk('/cabinet/webhooks?per_page=5', async (url) => {
      const res = await c.get(url);
      expect(res.statusCode).toBe(200);
      const next = /<a rel="next" href="([^"]+)"/.exec(res.body)?.[1];
      return { ids: cabinetIds(res.body).map((x) => ids.get(x)!), next: next ? unescape(next) : null };
    });
    expect(pages).toEqual(byFives(mine));
  });

  it('cabinet: the default page of 30 shows 27 events once, with no next page', async () => {
    const c = await signedIn(t, m);
    const res = await c.get('/cabinet/webhooks');
    const ids = await trsToId();
    expect(cabinetIds(res.body).map((x) => ids.get(x)!)).toEqual(mine);
    expect(res.body).not.toContain('rel="next"');
  });

  it('console: /operator/events?status=pending&merchant_id=..&per_page=5, following "Older events"', async () => {
    const op = await enrolledOperator(t, 'support');
    const pages = await walk(`/operator/events?status=pending&merchant_id=${m.merchantId}&per_page=5`, async (url) => {
      const res = await op.client.get(url);
      expect(res.statusCode).toBe(200);
      const next = /<a rel="next" href="([^"]+)"/.exec(res.body)?.[1];
      return { ids: [...res.body.matchAll(/<tr><td><code>(\d+)<\/code>/g)].map((x) => x[1]!), next: next ? unescape(next) : null };
    });
    expect(pages).toEqual(byFives(mine));
  });
});

describe('the console agrees with the cabinet on "not configured"', () => {
  it('the overview counts an event with no URL as not configured, not dead; the events page shows them apart', async () => {
    const op = await enrolledOperator(t, 'support');
    const count = async () => {
      const home = await op.client.get('/operator');
      return [/id="dead-count">(\d+)</.exec(home.body)![1], /id="not-configured-count">(\d+)</.exec(home.body)![1]].map(Number);
    };
    const [dead0, unset0] = await count();
    const fields = (trs: string) => ({ InvId: 'o', OutSum: '1.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: trs, Status: 'SUCCESS', custom: '' });
    await withPgTx(t.db.pool, (c) => enqueueEvent(c, { merchantId: m.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: 'unset-1', url: null, fields: fields('unset-1') }));
    await withPgTx(t.db.pool, (c) => enqueueEvent(c, { merchantId: m.merchantId, kind: 'PAYMENT_POSTBACK', aggregateId: 'gone-1', url: 'https://gone.example/x', fields: fields('gone-1') }));
    await t.db.pool.query(`UPDATE outbox_events SET status = 'DEAD', last_error = 'HTTP 500' WHERE aggregate_id = 'gone-1'`);
    expect(await count()).toEqual([dead0! + 1, unset0! + 1]);
    const statusesOn = async (url: string) => [...(await op.client.get(url)).body.matchAll(/data-status="([a-z_]+)"/g)].map((x) => x[1]);
    expect(await statusesOn(`/operator/events?merchant_id=${m.merchantId}`)).toEqual(['dead']);
    expect(await statusesOn(`/operator/events?status=not_configured&merchant_id=${m.merchantId}`)).toEqual(['not_configured']);
    // The cabinet says the same of the same events.
    const c = await signedIn(t, m);
    const cab = (await c.get('/cabinet/webhooks?status=not_configured')).body;
    expect([...cab.matchAll(/data-status="([a-z_]+)"/g)].map((x) => x[1])).toEqual(['not_configured']);
  });
});
