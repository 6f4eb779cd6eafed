import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { enqueueEvent } from '../../src/outbox/events.js';
import metricsPlugin from '../../src/metrics/index.js';

let t: TestApp;
let m: MerchantFixture;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
});
afterAll(async () => { await t.close(); });

async function scrape(): Promise<string> {
  const r = await t.app.inject({ method: 'GET', url: '/metrics', headers: admin });
  expect(r.statusCode).toBe(200);
  return r.body;
}

/** The value of one sample line, e.g. value(text, 'outbox_backlog'). */
function value(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

describe('GET /metrics access', () => {
  it('refuses a scrape without the operator token with 401 Unauthenticated', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(r.statusCode).toBe(401);
    expect(r.json()).toEqual({ success: false, message: 'Unauthenticated.' });
  });

  it('refuses a merchant API token or a wrong token', async () => {
    for (const authorization of [m.auth.authorization, `Bearer ${ADMIN_TOKEN}x`, ADMIN_TOKEN]) {
      const r = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });
      expect(r.statusCode).toBe(401);
    }
  });

  it('answers Prometheus text format with the operator token', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/metrics', headers: admin });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(r.body).toContain('# TYPE http_requests_total counter');
    expect(r.body).toContain('# TYPE http_request_duration_seconds histogram');
    expect(r.body).toContain('process_resident_memory_bytes');
  });
});

describe('request metrics', () => {
  it('counts every one of 20 concurrent requests, labelled by route and status', async () => {
    const series = 'http_requests_total{method="GET",route="/health",status_code="200"}';
    const before = value(await scrape(), series) ?? 0;
    const rs = await Promise.all(Array.from({ length: 20 }, () => t.app.inject({ method: 'GET', url: '/health' })));
    expect(rs.every((r) => r.statusCode === 200)).toBe(true);
    const text = await scrape();
    expect(value(text, series)).toBe(before + 20);
    expect(value(text, 'http_request_duration_seconds_count{method="GET",route="/health",status_code="200"}')).toBe(before + 20);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0\.025",method="GET",route="\/health",status_code="200"\} \d+/);
  });

  it('sees the merchant API routes too (registered in their own scope before the metrics plugin)', async () => {
    const series = 'http_requests_total{method="GET",route="/api/v1/bill/status",status_code="401"}';
    const before = value(await scrape(), series) ?? 0;
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/bill/status?id=abc' });
    expect(r.statusCode).toBe(401);
    expect(value(await scrape(), series)).toBe(before + 1);
  });

  it('labels unmatched URLs as one series and never leaks the raw URL', async () => {
    await t.app.inject({ method: 'GET', url: '/secret-probe-path-1' });
    await t.app.inject({ method: 'GET', url: '/secret-probe-path-2' });
    const text = await scrape();
    expect(text).not.toContain('secret-probe-path');
    expect(value(text, 'http_requests_total{method="GET",route="unmatched",status_code="404"}')).toBeGreaterThanOrEqual(2);
  });

  it('labels a parameterised route by its pattern, not by the id in the URL', async () => {
    const app = Fastify();
    app.decorate('config', t.config);
    app.decorate('db', t.db);
    await app.register(metricsPlugin);
    app.get('/things/:id', async () => ({ ok: true }));
    await app.ready();
    await app.inject({ method: 'GET', url: '/things/AbC123secret' });
    await app.inject({ method: 'GET', url: '/things/Zz999' });
    const text = (await app.inject({ method: 'GET', url: '/metrics', headers: admin })).body;
    await app.close();
    expect(text).not.toContain('AbC123secret');
    expect(value(text, 'http_requests_total{method="GET",route="/things/:id",status_code="200"}')).toBe(2);
  });

  it('reports the database pool size and usage of the process', async () => {
    const text = await scrape();
    expect(value(text, 'db_pool_max_connections')).toBe(30);
    expect(value(text, 'db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'db_pool_idle_connections')).toBeGreaterThanOrEqual(0);
    expect(value(text, 'db_pool_waiting_requests')).toBe(0);
  });
});

describe('database gauges computed at scrape time', () => {
  it('reports the outbox backlog, the oldest pending age, retrying, dead and attempt counts', async () => {
    const base = await scrape();
    const backlog0 = value(base, 'outbox_backlog')!;
    const dead0 = value(base, 'outbox_dead_events')!;
    const unset0 = value(base, 'outbox_not_configured_events')!;
    const attempts0 = value(base, 'outbox_delivery_attempts_total')!;
    const c = t.db.pool;
    const fields = { TrsId: 'x' };
    await enqueueEvent(c, { merchantId: m.merchantId, kind: 'TEST_POSTBACK', aggregateId: 'metrics-b', url: 'http://127.0.0.1:9/b', fields });
    await enqueueEvent(c, { merchantId: m.merchantId, kind: 'TEST_POSTBACK', aggregateId: 'metrics-unset', url: null, fields });
    await enqueueEvent(c, { merchantId: m.merchantId, kind: 'TEST_POSTBACK', aggregateId: 'metrics-dead', url: 'http://127.0.0.1:9/d', fields });
    await c.query(`UPDATE outbox_events SET status = 'DEAD', last_error = 'HTTP 500' WHERE aggregate_id = 'metrics-dead'`);
    // An event 90 s old with 2 attempts (written so: an event's creation time, its partition key, is fixed once written).
    await c.query(
      `INSERT INTO outbox_events (merchant_id, kind, aggregate_id, url, payload, attempts, created_at)
       VALUES ($1, 'TEST_POSTBACK', 'metrics-a', 'http://127.0.0.1:9/a', $2::jsonb, 2, now() - interval '90 seconds')`,
      [m.merchantId, JSON.stringify({ fields })],
    );
    await c.query(
      `INSERT INTO delivery_attempts (event_id, http_status, latency_ms)
       SELECT id, 503, 5 FROM outbox_events WHERE aggregate_id = 'metrics-a' UNION ALL
       SELECT id, 503, 7 FROM outbox_events WHERE aggregate_id = 'metrics-a'`,
    );
    const text = await scrape();
    expect(value(text, 'outbox_backlog')).toBe(backlog0 + 2);
    expect(value(text, 'outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(90);
    expect(value(text, 'outbox_oldest_pending_age_seconds')).toBeLessThan(3600);
    expect(value(text, 'outbox_retrying_events')).toBeGreaterThanOrEqual(1);
    // Dead and "no URL configured" are counted apart (issue 16): an alert on dead events does
    // not fire for missing settings.
    expect(value(text, 'outbox_dead_events')).toBe(dead0 + 1);
    expect(value(text, 'outbox_not_configured_events')).toBe(unset0 + 1);
    expect(value(text, 'outbox_delivery_attempts_total')).toBe(attempts0 + 2);

    await c.query(`UPDATE outbox_events SET status = 'DELIVERED', delivered_at = now() WHERE aggregate_id IN ('metrics-a', 'metrics-b')`);
    const after = await scrape();
    expect(value(after, 'outbox_backlog')).toBe(backlog0);
  });

  it('reports an empty outbox as backlog 0 and oldest age 0', async () => {
    await t.db.pool.query(`UPDATE outbox_events SET status = 'DELIVERED' WHERE status = 'PENDING'`);
    const text = await scrape();
    expect(value(text, 'outbox_backlog')).toBe(0);
    expect(value(text, 'outbox_oldest_pending_age_seconds')).toBe(0);
  });

  it('reports payouts by status, every status present even when zero', async () => {
    const c = t.db.pool;
    await c.query(`INSERT INTO payout_requests (id, merchant_id, request_hash) VALUES ('metrics-req', $1, 'h')`, [m.merchantId]);
    const statuses = ['PROCESS', 'PROCESS', 'SUCCESS', 'DECLINED'];
    for (const [i, s] of statuses.entries()) {
      await c.query(
        `INSERT INTO payouts (id, merchant_id, request_id, kind, status, account_type, account_masked, amount)
         VALUES ($1, $2, 'metrics-req', 'PERSONAL', $3::"PayoutStatus", 'CARD', '424242******4242', 10)`,
        [`metrics-p${i}`, m.merchantId, s],
      );
    }
    const text = await scrape();
    expect(value(text, 'payouts{status="PROCESS"}')).toBe(2);
    expect(value(text, 'payouts{status="SUCCESS"}')).toBe(1);
    expect(value(text, 'payouts{status="DECLINED"}')).toBe(1);
    expect(value(text, 'payouts{status="MODERATING"}')).toBe(0);
    expect(value(text, 'payouts{status="ERROR"}')).toBe(0);
  });
});
