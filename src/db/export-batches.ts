/** Rows read from the database per round trip while an export streams. */
export const EXPORT_BATCH = 500;

/**
 * Keyset batches over `fetch(after)` until a short batch: an export of any length reads
 * EXPORT_BATCH rows at a time as its consumer takes them, holding no connection in between.
 */
export async function* batches<T extends { id: string }>(fetch: (after: T | undefined) => Promise<T[]>): AsyncGenerator<T> {
  let last: T | undefined;
  for (;;) {
    const rows = await fetch(last);
    for (const r of rows) yield r;
    if (rows.length < EXPORT_BATCH) return;
    last = rows.at(-1);
  }
}

/** Prisma arguments of the batch after `after`: oldest first, EXPORT_BATCH rows. */
export const exportPage = (after: { id: string } | undefined) => ({
  orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }], take: EXPORT_BATCH,
  ...(after ? { cursor: { id: after.id }, skip: 1 } : {}),
});
