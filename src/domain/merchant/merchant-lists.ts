import type { Db } from '../../db/client.js';
import { paymentMonthOf, paymentMonthWhere, type PaymentMonth } from '../payment/payment-by-id.js';
import { batches, exportPage } from '../../db/export-batches.js';
import { NotFoundError } from '../../errors.js';
import { billWhere, paymentWhere, payoutWhere, refundWhere, type ListFilter } from './list-filters.js';

/** What the payment lists and the detail page show beside the payment row. */
const PAYMENT_INCLUDE = { shop: { select: { name: true } }, bill: { select: { orderId: true, payerEmail: true } } } as const;
const REFUND_INCLUDE = { payment: { select: { billId: true, shop: { select: { name: true } }, bill: { select: { orderId: true } } } } } as const;
const BILL_INCLUDE = { shop: { select: { name: true } } } as const;

/** One page of a list: newest first; `hasNext` when there is a row past it. */
export interface ListPage { page: number; size: number }
const pageArgs = (p: ListPage) => ({
  orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }], skip: (p.page - 1) * p.size, take: p.size + 1,
});
const paged = <T>(rows: T[], p: ListPage) => ({ rows: rows.slice(0, p.size), hasNext: rows.length > p.size });

/**
 * The merchant's own lists as the cabinet shows them (bills, payments, refunds, payouts, the
 * balance statement): one page under the filters, every row of them for a CSV export (keyset
 * batches, oldest first), and one object's page. Always scoped to the merchant: another
 * merchant's object is NotFoundError. Reads only (Prisma: operator-volume traffic).
 */
export class MerchantLists {
  constructor(private readonly db: Db) {}

  async payments(merchantId: string, f: ListFilter, p: ListPage) {
    return paged(await this.db.prisma.payment.findMany({ where: paymentWhere(merchantId, f), ...pageArgs(p), include: PAYMENT_INCLUDE }), p);
  }

  paymentsForExport(merchantId: string, f: ListFilter) {
    const where = paymentWhere(merchantId, f);
    return batches((after: { id: string } | undefined) => this.db.prisma.payment.findMany({ where, include: PAYMENT_INCLUDE, ...exportPage(after) }));
  }

  /** The merchant's latest payments (the dashboard). */
  latestPayments(merchantId: string, n: number) {
    return this.db.prisma.payment.findMany({ where: { merchantId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: n, include: PAYMENT_INCLUDE });
  }

  async payment(merchantId: string, id: string) {
    // Its creation month's partition first (the id names it), then every month (older ids).
    const find = (month: PaymentMonth) => this.db.prisma.payment.findFirst({ where: { id, merchantId, ...paymentMonthWhere(month) }, include: PAYMENT_INCLUDE });
    const month = paymentMonthOf(id);
    const payment = (month && await find(month)) ?? await find(null);
    if (!payment) throw new NotFoundError();
    return payment;
  }

  async bills(merchantId: string, f: ListFilter, p: ListPage) {
    return paged(await this.db.prisma.bill.findMany({ where: billWhere(merchantId, f), ...pageArgs(p), include: BILL_INCLUDE }), p);
  }

  /** A bill with its latest payments (at most `take`). */
  async bill(merchantId: string, id: string, take: number) {
    const bill = await this.db.prisma.bill.findFirst({ where: { id, merchantId }, include: BILL_INCLUDE });
    if (!bill) throw new NotFoundError();
    const payments = await this.db.prisma.payment.findMany({
      where: { billId: id, merchantId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take, include: PAYMENT_INCLUDE,
    });
    return { bill, payments };
  }

  async refunds(merchantId: string, f: ListFilter, p: ListPage) {
    return paged(await this.db.prisma.refund.findMany({ where: refundWhere(merchantId, f), ...pageArgs(p), include: REFUND_INCLUDE }), p);
  }

  refundsForExport(merchantId: string, f: ListFilter) {
    const where = refundWhere(merchantId, f);
    return batches((after: { id: string } | undefined) => this.db.prisma.refund.findMany({ where, include: REFUND_INCLUDE, ...exportPage(after) }));
  }

  async payouts(merchantId: string, f: ListFilter, p: ListPage) {
    return paged(await this.db.prisma.payout.findMany({ where: payoutWhere(merchantId, f), ...pageArgs(p) }), p);
  }

  payoutsForExport(merchantId: string, f: ListFilter) {
    const where = payoutWhere(merchantId, f);
    return batches((after: { id: string } | undefined) => this.db.prisma.payout.findMany({ where, ...exportPage(after) }));
  }

  async payout(merchantId: string, id: string) {
    const payout = await this.db.prisma.payout.findFirst({ where: { id, merchantId } });
    if (!payout) throw new NotFoundError();
    return payout;
  }

  /** The merchant's ledger transfers in the time bounds with their entries (the balance statement), oldest first. */
  transfersForExport(merchantId: string, createdAt: ListFilter['createdAt']) {
    const where = { merchantId, ...(createdAt ? { createdAt } : {}) };
    return batches((after: { id: string } | undefined) => this.db.prisma.ledgerTransfer.findMany({
      where, include: { entries: { orderBy: { leg: 'asc' } } }, ...exportPage(after),
    }));
  }
}
