import type { Prisma } from '../../generated/prisma/client.js';

/**
 * A merchant's list under its filters (the cabinet's lists and their CSV exports): status, shop,
 * creation time bounds and a search text. Always scoped to the merchant. Search is exact for ids
 * (bill, payment, payout, refund: copied whole) and emails (without case), a card's last 4 digits,
 * and any part of an order id without case (3 characters or more: the trigram indexes on
 * bills.order_id and payouts.order_id serve it; shorter text matches the order id exactly):
 * every branch hits an index or the merchant's own rows only.
 */
export interface ListFilter {
  status?: string;
  shop_id?: string;
  /** Search text: an id, order id, card's last 4 digits or payer email (each list says which). */
  q?: string;
  createdAt?: { gte?: Date; lt?: Date };
}

/** A card's last 4 digits typed in a search box. */
export const isLast4 = (q: string) => /^\d{4}$/.test(q);

const dates = (f: ListFilter) => (f.createdAt ? { createdAt: f.createdAt } : {});
const email = (q: string) => ({ equals: q, mode: 'insensitive' as const });

/** The shortest text searched inside order ids: a trigram index cannot narrow anything shorter. */
export const ORDER_ID_PART_MIN = 3;

/**
 * An order id matching the search text: containing it (without case) when long enough, else equal.
 * Prisma passes `contains` to ILIKE as it is, so LIKE's wildcards typed in the box are escaped.
 */
const orderId = (q: string) => (q.length >= ORDER_ID_PART_MIN ? { contains: q.replace(/[\\%_]/g, '\\$&'), mode: 'insensitive' as const } : q);

export function paymentWhere(merchantId: string, f: ListFilter): Prisma.PaymentWhereInput {
  const or: Prisma.PaymentWhereInput[] = [];
  if (f.q) {
    or.push({ id: f.q }, { billId: f.q }, { bill: { orderId: orderId(f.q) } });
    if (f.q.includes('@')) or.push({ payerEmail: email(f.q) }, { bill: { payerEmail: email(f.q) } });
    if (isLast4(f.q)) or.push({ fromCard: { endsWith: f.q } });
  }
  return {
    merchantId, ...dates(f),
    ...(f.status ? { status: f.status as Prisma.PaymentWhereInput['status'] } : {}),
    ...(f.shop_id ? { shopId: f.shop_id } : {}),
    ...(or.length ? { OR: or } : {}),
  };
}

export function billWhere(merchantId: string, f: ListFilter): Prisma.BillWhereInput {
  const or: Prisma.BillWhereInput[] = [];
  if (f.q) {
    or.push({ id: f.q }, { orderId: orderId(f.q) }, { payments: { some: { id: f.q } } });
    if (f.q.includes('@')) or.push({ payerEmail: email(f.q) }, { payments: { some: { payerEmail: email(f.q) } } });
    if (isLast4(f.q)) or.push({ payments: { some: { fromCard: { endsWith: f.q } } } });
  }
  return {
    merchantId, ...dates(f),
    ...(f.status ? { status: f.status as Prisma.BillWhereInput['status'] } : {}),
    ...(f.shop_id ? { shopId: f.shop_id } : {}),
    ...(or.length ? { OR: or } : {}),
  };
}

/** Payouts belong to the merchant, not to a shop: no shop filter. */
export function payoutWhere(merchantId: string, f: ListFilter): Prisma.PayoutWhereInput {
  const or: Prisma.PayoutWhereInput[] = [];
  if (f.q) {
    or.push({ id: f.q }, { orderId: orderId(f.q) });
    if (isLast4(f.q)) or.push({ accountMasked: { endsWith: f.q } });
  }
  return {
    merchantId, ...dates(f),
    ...(f.status ? { status: f.status as Prisma.PayoutWhereInput['status'] } : {}),
    ...(or.length ? { OR: or } : {}),
  };
}

export function refundWhere(merchantId: string, f: ListFilter): Prisma.RefundWhereInput {
  const or: Prisma.RefundWhereInput[] = [];
  if (f.q) {
    or.push({ id: f.q }, { paymentId: f.q }, { payment: { billId: f.q } }, { payment: { bill: { orderId: orderId(f.q) } } });
    if (f.q.includes('@')) or.push({ payment: { payerEmail: email(f.q) } });
    if (isLast4(f.q)) or.push({ payment: { fromCard: { endsWith: f.q } } });
  }
  return {
    merchantId, ...dates(f),
    ...(f.status ? { status: f.status as Prisma.RefundWhereInput['status'] } : {}),
    ...(f.shop_id ? { payment: { shopId: f.shop_id } } : {}),
    ...(or.length ? { OR: or } : {}),
  };
}
