import type { Decimal } from 'decimal.js';
import type { Prisma } from '../generated/prisma/client.js';
import { isLast4, type ListFilters } from './paging.js';

/**
 * The `where` of each cabinet list under its filters (status, shop, dates, search), shared by
 * the list pages and their CSV exports so both show the same rows. Always scoped to the
 * signed-in merchant. Search is exact (ids, order id, email without case) or a card's last 4
 * digits: every branch hits an index or the merchant's own rows only.
 */
const dates = (f: ListFilters) => (f.createdAt ? { createdAt: f.createdAt } : {});
const email = (q: string) => ({ equals: q, mode: 'insensitive' as const });

export function paymentWhere(merchantId: string, f: ListFilters): Prisma.PaymentWhereInput {
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

export function billWhere(merchantId: string, f: ListFilters): Prisma.BillWhereInput {
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
export function payoutWhere(merchantId: string, f: ListFilters): Prisma.PayoutWhereInput {
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

export function refundWhere(merchantId: string, f: ListFilters): Prisma.RefundWhereInput {
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

/**
 * How much of a payment went back: null, 'partly' or 'full' ("Partly refunded" / "Refunded").
 * The whole is what the refund service lets go back: the credited amount plus the commission.
 */
export function refundState(p: { refundedAmount: Decimal; accountAmount: Decimal | null; commission: Decimal }): 'full' | 'partly' | null {
  if (!p.refundedAmount.gt(0)) return null;
  if (p.accountAmount === null) return 'partly';
  return p.refundedAmount.gte(p.accountAmount.add(p.commission)) ? 'full' : 'partly';
}
