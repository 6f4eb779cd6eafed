import { withPgTx } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/outbox/events.js';
import type { TestApp } from '../helpers/app.js';

/** Enqueues `n` test postbacks of a merchant to `url` in one transaction (TrsId `${tag}-${i}`), due now, oldest first. */
export async function enqueueTestPostbacks(t: TestApp, merchantId: string, url: string, n: number, tag: string): Promise<void> {
  await withPgTx(t.db.pool, async (c) => {
    for (let i = 0; i < n; i++) {
      const trs = `${tag}-${i}`;
      await enqueueEvent(c, { merchantId, kind: 'TEST_POSTBACK', aggregateId: trs, url, fields: { InvId: trs, OutSum: '1.00', Commission: '0.00', Currency: 'RUB', CurrencyIn: 'RUB', TrsId: trs, Status: 'SUCCESS', custom: '' } });
    }
  });
}
