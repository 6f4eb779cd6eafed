import type { Queryable } from '../db/client.js';

/**
 * Which of `merchantIds` are test twins (test mode's rows, `live_merchant_id` set): their
 * objects are shown marked "test" in the console's lists, so an operator at night does not act
 * on them as live money (docs/decisions.md "Test objects in the operator console").
 */
export async function testMerchantIds(db: Queryable, merchantIds: readonly string[]): Promise<Set<string>> {
  const ids = [...new Set(merchantIds)];
  if (ids.length === 0) return new Set();
  const r = await db.query<{ id: string }>('SELECT id FROM merchants WHERE id = ANY($1::text[]) AND live_merchant_id IS NOT NULL', [ids]);
  return new Set(r.rows.map((x) => x.id));
}

/** The console's list filter: everything (test rows marked), live only, or test only. */
export type ObjectMode = 'all' | 'live' | 'test';
export const modeOf = (v: string | undefined): ObjectMode => (v === 'live' || v === 'test' ? v : 'all');
export const keepFor = (mode: ObjectMode, isTest: boolean): boolean => mode === 'all' || (mode === 'test') === isTest;
