import type { FastifyRequest } from 'fastify';
import { parseSearchDate } from '../lib/time.js';
import { queryOf } from './context.js';

export const PAGE_SIZE = 20;

export interface ListFilters {
  status?: string;
  shop_id?: string;
  from?: string;
  to?: string;
  /** Search text: an id, order id, card's last 4 digits or payer email (each list says which). */
  q?: string;
  page: number;
  /** Prisma `createdAt` bounds from the date fields. */
  createdAt?: { gte?: Date; lt?: Date };
  errors: Record<string, string>;
}

/** Filters and page of a cabinet list from its query string; bad dates are shown next to the field. */
export function listFilters(req: FastifyRequest, statuses: readonly string[]): ListFilters {
  const q = queryOf(req);
  const { t } = req.cabinet;
  const errors: Record<string, string> = {};
  const tz = req.server.config.tz;
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

/** The Prisma `where` of a merchant's bill or payment list under these filters. */
export function listWhere<S extends string>(merchantId: string, f: ListFilters) {
  return {
    merchantId,
    ...(f.status ? { status: f.status as S } : {}),
    ...(f.shop_id ? { shopId: f.shop_id } : {}),
    ...(f.createdAt ? { createdAt: f.createdAt } : {}),
  };
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

/** A card's last 4 digits typed in a search box. */
export const isLast4 = (q: string) => /^\d{4}$/.test(q);

/** Prisma paging arguments: newest first, one row more than a page to know if there is a next. */
export const pageArgs = (f: ListFilters) => ({
  orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }], skip: (f.page - 1) * PAGE_SIZE, take: PAGE_SIZE + 1,
});
