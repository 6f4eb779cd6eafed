import type { Prisma } from '../../generated/prisma/client.js';

/**
 * A merchant's list under its filters (the cabinet's lists and their CSV exports): status, shop,
 * creation time bounds and a search text. Always scoped to the merchant. Search is exact (ids,
 * order id, email without case) or a card's last 4 digits: every branch hits an index or the
 * merchant's own rows only.
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

export function paymentWhere(merchantId: string, f: ListFilter): Prisma.PaymentWhereInput {
  const or: Prisma.PaymentWhereInput[] = [];
  if (f.q) {
    or.push({ id: f.q }, { billId: f.q }, { bill: { orderId: f.q } });
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
    or.push({ id: f.q }, { orderId: f.q }, { payments: { some: { id: f.q } } });
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
    or.push({ id: f.q }, { orderId: f.q });
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
    or.push({ id: f.q }, { paymentId: f.q }, { payment: { billId: f.q } }, { payment: { bill: { orderId: f.q } } });
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
