import type { Queryable } from '../db/client.js';

/**
 * Which of `merchantIds` are test twins (test mode's rows, `live_merchant_id` set), each with
 * its live merchant: their objects are shown marked "test" in the console's lists and link to
 * the live merchant, so an operator at night does not act on them as live money
 * (docs/adr/0040-operator-console.md).
 */
export async function testTwinsOf(db: Queryable, merchantIds: readonly string[]): Promise<Map<string, string>> {
  const ids = [...new Set(merchantIds)];
  if (ids.length === 0) return new Map();
  const r = await db.query<{ id: string; live: string }>(
    'SELECT id, live_merchant_id AS live FROM merchants WHERE id = ANY($1::text[]) AND live_merchant_id IS NOT NULL', [ids],
  );
  return new Map(r.rows.map((x) => [x.id, x.live]));
}

/** The console's list filter: everything (test rows marked), live only, or test only. */
export type ObjectMode = 'all' | 'live' | 'test';
export const modeOf = (v: string | undefined): ObjectMode => (v === 'live' || v === 'test' ? v : 'all');
