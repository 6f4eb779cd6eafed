import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOutboxWorker } from '../../src/workers/outbox.js';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant } from '../factories/merchant.js';
import { enqueueTestPostbacks } from '../factories/outbox.js';
import { startReceiver, waitFor } from './receiver.js';

/**
 * The per-merchant cap lends idle slots: a merchant alone with events due gets every slot of the
 * worker, and gives back the lent ones as soon as another merchant has events due. Real
 * receivers on 127.0.0.1 that hold each request open until released, so the requests open at
 * once at a receiver are the deliveries in flight for that merchant.
 */
let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });
// Each test starts with nothing else due (what a test before left pending is retired).
beforeEach(async () => { await t.db.pool.query(`UPDATE outbox_events SET status = 'DEAD' WHERE status = 'PENDING'`); });

const log = { info() {}, warn() {}, error() {}, debug() {} } as never;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const enqueue = (merchantId: string, url: string, n: number, tag: string) => enqueueTestPostbacks(t, merchantId, url, n, tag);

describe('the outbox cap lends idle slots', () => {
  it('one merchant alone with a backlog gets every slot of the worker (8 of 8 in flight at once, not its cap of 4)', async () => {
    const rx = await startReceiver(() => 'hold');
    const a = await createMerchant(t);
    await enqueue(a.merchantId, `${rx.url}/alone`, 30, 'alone');
    const w = startOutboxWorker({ config: t.config, db: t.db, services: t.app.services, log }, { pollMs: 50, concurrency: 8 });
    try {
      await waitFor(() => rx.held === 8, 5000);
      // Held there: no more than the worker's slots, even after lent slots are given back (lendMs).
      // Time is the subject: 1.5 s outlasts lendMs, so a slot given back and re-lent shows here.
      await sleep(1500);
      expect(rx.held).toBe(8);
      expect(rx.maxHeld).toBe(8);
      // Answered, the backlog goes on at full width.
      rx.releaseHeld();
      await waitFor(() => rx.held === 8, 5000);
      expect(rx.received.length).toBe(16);
    } finally {
      rx.releaseHeld();
      rx.setMode(() => 'ok');
      await w.stop();
      await rx.close();
    }
  });

  it('two merchants due: each is held to its cap (4 of 8); a lender gives its slots back once another merchant has events due', async () => {
    const ra = await startReceiver(() => 'hold');
    const rb = await startReceiver(() => 'hold');
    const a = await createMerchant(t);
    const b = await createMerchant(t);
    await enqueue(a.merchantId, `${ra.url}/a`, 40, 'two-a');
    const w = startOutboxWorker({ config: t.config, db: t.db, services: t.app.services, log }, { pollMs: 50, concurrency: 8 });
    try {
      // A alone: every slot.
      await waitFor(() => ra.held === 8, 5000);
      // B's events become due while A's 8 are in flight: B gets its 4 once A's lent slots are
      // given back (within lendMs), A's deliveries in flight are not interrupted.
      await enqueue(b.merchantId, `${rb.url}/b`, 40, 'two-b');
      const since = Date.now();
      await waitFor(() => rb.held === 4, 5000);
      expect(Date.now() - since).toBeLessThan(3000);
      expect(ra.held).toBe(8);
      // A's receiver answers: A's new claims stop at its cap, B keeps its 4.
      ra.releaseHeld();
      ra.resetMaxHeld();
      await waitFor(() => ra.held === 4, 5000);
      await sleep(1500); // time is the subject: past lendMs, A is still held to its cap
      expect(ra.held).toBe(4);
      expect(rb.held).toBe(4);
      expect(ra.maxHeld).toBe(4);
      // Both answer: each stays at its cap, round after round.
      for (let round = 0; round < 3; round++) {
        ra.releaseHeld();
        rb.releaseHeld();
        ra.resetMaxHeld();
        rb.resetMaxHeld();
        await waitFor(() => ra.held === 4 && rb.held === 4, 5000);
        await sleep(300); // time is the subject: several polls (50 ms) that must not exceed the cap
        expect([ra.maxHeld, rb.maxHeld]).toEqual([4, 4]);
      }
    } finally {
      ra.setMode(() => 'ok');
      rb.setMode(() => 'ok');
      ra.releaseHeld();
      rb.releaseHeld();
      await w.stop();
      await ra.close();
      await rb.close();
    }
  });
  it('no slots are lent to a merchant whose requests have not been answered yet; once its receiver answers, they are', async () => {
    const ra = await startReceiver(() => 'hold');
    const rb = await startReceiver(() => 'ok');
    const a = await createMerchant(t);
    const b = await createMerchant(t);
    await enqueue(a.merchantId, `${ra.url}/a`, 40, 'silent-a');
    await enqueue(b.merchantId, `${rb.url}/b`, 1, 'silent-b');
    const w = startOutboxWorker({ config: t.config, db: t.db, services: t.app.services, log }, { pollMs: 50, concurrency: 8 });
    try {
      // B is due too: A gets its cap; B is delivered, then A is alone but nothing of A's has come back.
      await waitFor(() => rb.received.length === 1 && ra.held === 4, 5000);
      await sleep(1500); // time is the subject: past lendMs, nothing is lent to a silent merchant
      expect(ra.held).toBe(4);
      expect(ra.maxHeld).toBe(4);
      // A's receiver answers: A alone is lent every slot.
      ra.releaseHeld();
      await waitFor(() => ra.held === 8, 5000);
      expect(rb.received).toHaveLength(1);
    } finally {
      ra.setMode(() => 'ok');
      ra.releaseHeld();
      await w.stop();
      await ra.close();
      await rb.close();
    }
  });
});
