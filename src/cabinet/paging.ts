import type { FastifyRequest } from 'fastify';
import { parseSearchDate } from '../lib/time.js';
import { cabinetTz } from './context.js';
import { queryOf } from '../lib/form-body.js';
import type { ListFilter } from '../domain/merchant/list-filters.js';

export const PAGE_SIZE = 20;

/** The domain's list filter (status, shop, search, `createdAt` bounds) plus what the form shows. */
export interface ListFilters extends ListFilter {
  from?: string;
  to?: string;
  page: number;
  errors: Record<string, string>;
}

/** Filters and page of a cabinet list from its query string; bad dates are shown next to the field. */
export function listFilters(req: FastifyRequest, statuses: readonly string[]): ListFilters {
  const q = queryOf(req);
  const { t } = req.cabinet;
  const errors: Record<string, string> = {};
  const tz = cabinetTz(req);
  const f: ListFilters = { page: Math.min(Math.max(1, Number.parseInt(q.page ?? '1', 10) || 1), 10000), errors };
  if (q.status && statuses.includes(q.status)) f.status = q.status;
  if (q.shop_id) f.shop_id = q.shop_id.slice(0, 64);
  if (q.q?.trim()) f.q = q.q.trim().slice(0, 320);
  const createdAt: { gte?: Date; lt?: Date } = {};
  if (q.from) {
    f.from = q.from.slice(0, 32);
    const d = parseSearchDate(f.from, tz, 'start');
    if (d) createdAt.gte = d; else errors.from = t('error.date');
  }
  if (q.to) {
    f.to = q.to.slice(0, 32);
    const d = parseSearchDate(f.to, tz, 'end');
    if (d) createdAt.lt = d; else errors.to = t('error.date');
  }
  if (createdAt.gte || createdAt.lt) f.createdAt = createdAt;
  return f;
}

/** The query string of these filters (pager links, export links), with `extra` on top. */
export function filterQuery(f: ListFilters, extra: Record<string, string | number | undefined> = {}): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries({ status: f.status, shop_id: f.shop_id, from: f.from, to: f.to, q: f.q, ...extra })) {
    if (v !== undefined && v !== '') u.set(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : '';
}
