import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startOutboxWorker } from '../../src/workers/outbox.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { enqueueTestPostbacks } from '../factories/outbox.js';
import { startReceiver } from '../outbox/receiver.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Attack (issue 19.5): a merchant whose Result URL never answers filled every delivery slot,
 * so another merchant's postback waited 38-40 s. Real receivers: one that never answers
 * (merchant A, many events), one that answers (merchant B).
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const log = { info() {}, warn() {}, error() {}, debug() {} } as never;

const enqueue = (merchantId: string, url: string, n: number, tag: string) => enqueueTestPostbacks(t, merchantId, url, n, tag);

describe('one merchant cannot slow everyone\'s postbacks', () => {
  test('A\'s receiver never answers and A has 200 events due first; B\'s postback is delivered within a few seconds', async () => {
    const hang = await startReceiver(() => 'timeout');
    const ok = await startReceiver(() => 'ok');
    const a = await createMerchant(t);
    const b = await createMerchant(t);
    await enqueue(a.merchantId, `${hang.url}/result`, 200, 'a');
    // Time is the subject: B's event is due after all of A's (a later created_at).
    await new Promise((r) => setTimeout(r, 20));
    await enqueue(b.merchantId, `${ok.url}/result`, 1, 'b');
    const started = Date.now();
    const w = startOutboxWorker({ config: t.config, db: t.db, services: t.app.services, log }, { pollMs: 50, concurrency: 16, timeoutMs: 10_000 });
    try {
      await waitFor(() => ok.received.length > 0, "B's postback received", 15_000, 50);
      const waited = Date.now() - started;
      expect(ok.received.map((r) => r.fields.TrsId)).toEqual(['b-0']);
      expect(waited, `B waited ${waited} ms`).toBeLessThan(3000);
      // A is still being tried, with at most its share of the slots.
      expect(hang.received.length).toBeGreaterThan(0);
      expect(hang.received.length).toBeLessThanOrEqual(8);
    } finally {
      await hang.close();
      await w.stop();
      await ok.close();
    }
  });
});

describe('slots lent to a merchant alone come back when another merchant has events due', () => {
  test('A\'s 200 events due with a receiver that never answers take every slot; B\'s postback due later is still delivered within a few seconds', async () => {
    // Alone means alone: the events the test above left due are retired.
    await t.db.pool.query(`UPDATE outbox_events SET status = 'DEAD' WHERE status = 'PENDING'`);
    const hang = await startReceiver(() => 'timeout');
    const ok = await startReceiver(() => 'ok');
    const a = await createMerchant(t);
    const b = await createMerchant(t);
    await enqueue(a.merchantId, `${hang.url}/lent`, 200, 'lent-a');
    const w = startOutboxWorker({ config: t.config, db: t.db, services: t.app.services, log }, { pollMs: 50, concurrency: 16, timeoutMs: 10_000 });
    try {
      // A alone: the cap lends it every slot (16, not its 8), all hanging.
      await waitFor(() => hang.received.length >= 16, "A's postbacks holding 16 slots", 5000, 20);
      expect(hang.received.length).toBe(16);
      // B's event becomes due while every slot is held by A.
      await enqueue(b.merchantId, `${ok.url}/result`, 1, 'lent-b');
      const started = Date.now();
      await waitFor(() => ok.received.length > 0, "B's postback received", 15_000, 50);
      const waited = Date.now() - started;
      expect(ok.received.map((r) => r.fields.TrsId)).toEqual(['lent-b-0']);
      expect(waited, `B waited ${waited} ms`).toBeLessThan(3000);
      // A's deliveries were not cut short nor doubled: still its 16 requests, none answered yet.
      expect(hang.received.length).toBe(16);
    } finally {
      await hang.close();
      await w.stop();
      await ok.close();
    }
  });
});

describe('a receiver that keeps timing out holds its slots for less', () => {
  test('after two timeouts in a row the attempt is cut at a fifth of the timeout (at least 1 s)', async () => {
    const { OutboxDeliverer } = await import('../../src/outbox/deliverer.js');
    const hang = await startReceiver(() => 'timeout');
    const m = await createMerchant(t);
    await enqueue(m.merchantId, `${hang.url}/slow`, 3, 'slow');
    const d = new OutboxDeliverer({ config: t.config, db: t.db, services: t.app.services, log }, { timeoutMs: 2500 });
    try {
      const latencies: number[] = [];
      const ids = (await t.db.pool.query(`SELECT id::text AS id FROM outbox_events WHERE merchant_id = $1 ORDER BY id`, [m.merchantId])).rows.map((r) => r.id as string);
      for (const id of ids) {
        const ev = await d.claimOne(id);
        const r = await d.deliver(ev!);
        await d.record([r]);
        latencies.push(r.attempt!.latencyMs);
      }
      expect(latencies[0]).toBeGreaterThanOrEqual(2400);
      expect(latencies[1]).toBeGreaterThanOrEqual(2400);
      expect(latencies[2]).toBeLessThan(1500);
    } finally {
      await hang.close();
    }
  });
});
