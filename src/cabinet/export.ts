import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringify } from 'csv-stringify';
import { formatDateTime } from '../lib/time.js';
import { csvCell } from '../lib/csv-cell.js';
import { csvAmount } from '../lib/money-format.js';
import type { Decimal } from 'decimal.js';
import type { Lang } from '../lib/i18n.js';
import type { ListFilters } from './paging.js';

/**
 * A CSV export, streamed: rows are read in keyset batches (the domain's
 * list reads, `db/export-batches.ts`) as the client takes them (backpressure through the
 * pipeline), so a year of payments never sits in memory and no connection is held between
 * batches. Opens in a spreadsheet as it is: UTF-8 with a BOM,
 * the locale's separators (Russian: `;` between fields and a decimal comma, English: `,` and a
 * dot), dates in the merchant's time zone. Amounts are plain decimals with two places.
 */
export function csvFormat(lang: Lang, tz: string) {
  return {
    delimiter: lang === 'ru' ? ';' : ',',
    /** An amount: a plain decimal with two places and the locale's decimal mark (lib/money-format.ts); '' for none. */
    num: (d: Decimal.Value | null | undefined) => (d === null || d === undefined ? '' : csvAmount(d, lang)),
    date: (d: Date | null | undefined) => (d ? formatDateTime(d, tz) : ''),
  };
}

/** `name-<from>_<to>.csv` from the filters' dates. */
export function exportFilename(name: string, f: ListFilters): string {
  const part = (s: string | undefined) => (s && /^\d{4}-\d{2}-\d{2}$/.test(s) ? s : '');
  const range = [part(f.from), part(f.to)].filter(Boolean).join('_');
  return `${name}${range ? `-${range}` : ''}.csv`;
}

/**
 * Sends `rows` (each an array of cells in `header` order) as a streamed CSV download; every
 * cell is neutralized against formula injection (csvCell: a payer's email `=HYPERLINK(...)`).
 */
export async function sendCsv(req: FastifyRequest, reply: FastifyReply, filename: string, header: string[], rows: AsyncIterable<string[]>): Promise<FastifyReply> {
  const lang = req.cabinet.lang;
  const csv = stringify({ bom: true, header: true, columns: header, delimiter: lang === 'ru' ? ';' : ',', record_delimiter: 'windows' });
  reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`);
  async function* safe() { for await (const r of rows) yield r.map(csvCell); }
  pipeline(Readable.from(safe()), csv).catch((err: unknown) => {
    req.log.error({ err }, 'cabinet CSV export failed');
    csv.destroy(err as Error);
  });
  return reply.send(csv);
}
