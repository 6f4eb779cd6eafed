import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringify } from 'csv-stringify';
import { formatDateTime } from '../lib/time.js';
import type { Lang } from './i18n.js';
import type { ListFilters } from './paging.js';

/** Rows read from the database per round trip while a CSV export streams. */
export const EXPORT_BATCH = 500;

/**
 * A CSV export, streamed (issue 16 item 3): rows are read in keyset batches as the client
 * takes them (backpressure through the pipeline), so a year of payments never sits in memory
 * and no connection is held between batches. Opens in a spreadsheet as it is: UTF-8 with a BOM,
 * the locale's separators (Russian: `;` between fields and a decimal comma, English: `,` and a
 * dot), dates in the service time zone. Amounts are the Decimal's exact fixed string.
 */
export function csvFormat(lang: Lang, tz: string) {
  return {
    delimiter: lang === 'ru' ? ';' : ',',
    /** An amount: its fixed string with the locale's decimal mark; '' for none. */
    num: (d: { toFixed(n: number): string } | null | undefined, places = 2) => (d === null || d === undefined ? '' : lang === 'ru' ? d.toFixed(places).replace('.', ',') : d.toFixed(places)),
    date: (d: Date | null | undefined) => (d ? formatDateTime(d, tz) : ''),
  };
}

/** Keyset batches over `fetch(afterId)` until a short batch. */
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

/** `name-<from>_<to>.csv` from the filters' dates. */
export function exportFilename(name: string, f: ListFilters): string {
  const part = (s: string | undefined) => (s && /^\d{4}-\d{2}-\d{2}$/.test(s) ? s : '');
  const range = [part(f.from), part(f.to)].filter(Boolean).join('_');
  return `${name}${range ? `-${range}` : ''}.csv`;
}

/** Sends `rows` (each an array of cells in `header` order) as a streamed CSV download. */
export async function sendCsv(req: FastifyRequest, reply: FastifyReply, filename: string, header: string[], rows: AsyncIterable<string[]>): Promise<FastifyReply> {
  const lang = req.cabinet.lang;
  const csv = stringify({ bom: true, header: true, columns: header, delimiter: lang === 'ru' ? ';' : ',', record_delimiter: 'windows' });
  reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`);
  pipeline(Readable.from(rows), csv).catch((err: unknown) => {
    req.log.error({ err }, 'cabinet CSV export failed');
    csv.destroy(err as Error);
  });
  return reply.send(csv);
}
