import pino from 'pino';
import { OutboxDeliverer } from '../../src/outbox/deliverer.js';
import type { TestApp } from '../helpers/app.js';

export interface DeliverUntilOptions {
  /** Work to repeat before each delivery pass (run the refund/payout workers again, say). */
  before?: () => Promise<unknown>;
  /** Bound on the wait (default 20 s); a pass is quick, so this only matters when something is wrong. */
  timeoutMs?: number;
  log?: pino.Logger;
}

/**
 * Runs the outbox deliverer, pass after pass, until `found()` holds, and fails after the bound.
 * One pass is not the outcome a test names: under load (the whole suite on 2 cores) a worker's
 * provider call can time out and leave the operation for its next pass, so its event is not
 * written yet; a receiver slow to answer within the 2 s timeout leaves the event waiting for a
 * retry. The deliverer's clock runs a second ahead (events written just now are due) and its
 * retries are due at once, so a retry lands on the next pass instead of an hour later.
 */
export async function deliverUntil(t: TestApp, found: () => boolean | Promise<boolean>, o: DeliverUntilOptions = {}): Promise<void> {
  const d = new OutboxDeliverer(
    { config: t.config, db: t.db, services: t.app.services, log: o.log ?? pino({ level: 'silent' }) },
    { now: () => new Date(Date.now() + 1000), random: () => 0.5, timeoutMs: 2000, retryDelaysMs: Array<number>(20).fill(0) },
  );
  const end = Date.now() + (o.timeoutMs ?? 20_000);
  for (;;) {
    await o.before?.();
    await d.runOnce();
    if (await found()) return;
    if (Date.now() > end) throw new Error('deliverUntil: the awaited delivery did not arrive in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
