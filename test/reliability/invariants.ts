import pg from 'pg';
import { verifyLedger } from '../../src/domain/ledger/ledger.js';

/**
 * The money invariants of docs/reliability.md, checked on a whole database. Returns the
 * violations found (empty when the books are right).
 */
export async function checkInvariants(dbUrl: string, opts: { requireDelivered: boolean }): Promise<string[]> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  const bad: string[] = [];
  try {
    const books = await verifyLedger(c);
    if (!books.ok) bad.push(`ledger problems: ${JSON.stringify(books.problems.slice(0, 5))}`);
    const neg = await c.query(`SELECT * FROM balances WHERE available < 0 OR locked < 0 OR hold < 0`);
    if (neg.rowCount) bad.push(`negative balance: ${JSON.stringify(neg.rows)}`);
    const over = await c.query(`
      SELECT p.id, p.refunded_amount, coalesce(sum(r.amount) FILTER (WHERE r.status <> 'FAIL'), 0) AS live
        FROM payments p LEFT JOIN refunds r ON r.payment_id = p.id
       GROUP BY p.id, p.created_at -- the primary key of the partitioned table (its other columns follow from it)
      HAVING p.refunded_amount <> coalesce(sum(r.amount) FILTER (WHERE r.status <> 'FAIL'), 0)
          OR p.refunded_amount > coalesce(p.account_amount, 0) + p.commission`);
    if (over.rowCount) bad.push(`refunds above received or out of step: ${JSON.stringify(over.rows.slice(0, 5))}`);
    const dupOrders = await c.query(`SELECT merchant_id, order_id, count(*) FROM payout_requests WHERE order_id IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1`);
    if (dupOrders.rowCount) bad.push(`two payout requests for one order_id: ${JSON.stringify(dupOrders.rows)}`);
    const paymentEvents = await c.query(`
      SELECT p.id, count(e.id) AS n FROM payments p
        LEFT JOIN outbox_events e ON e.kind = 'PAYMENT_POSTBACK' AND e.aggregate_id = p.id
       WHERE p.status IN ('SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL') GROUP BY p.id HAVING count(e.id) <> 1`);
    if (paymentEvents.rowCount) bad.push(`final payments without exactly one event: ${paymentEvents.rowCount}`);
    const payoutEvents = await c.query(`
      SELECT p.id, count(e.id) AS n FROM payouts p
        LEFT JOIN outbox_events e ON e.kind = 'PAYOUT_WEBHOOK' AND e.aggregate_id = p.id
       WHERE p.status IN ('SUCCESS', 'FAIL', 'ERROR', 'DECLINED') GROUP BY p.id HAVING count(e.id) <> 1`);
    if (payoutEvents.rowCount) bad.push(`final payouts without exactly one event: ${payoutEvents.rowCount}`);
    const credited = await c.query(`
      SELECT p.id FROM payments p
       WHERE (p.status IN ('SUCCESS', 'UNDERPAID', 'OVERPAID')) <>
             EXISTS (SELECT 1 FROM ledger_transfers l WHERE l.kind = 'PAYMENT_CREDIT' AND l.ref_id = p.id)`);
    if (credited.rowCount) bad.push(`payments credited not exactly when they received money: ${credited.rowCount}`);
    const normalTwice = await c.query(`
      SELECT b.id FROM bills b JOIN payments p ON p.bill_id = b.id
       WHERE b.type = 'NORMAL' AND p.status IN ('SUCCESS', 'UNDERPAID', 'OVERPAID') GROUP BY b.id HAVING count(*) > 1`);
    if (normalTwice.rowCount) bad.push(`NORMAL bills paid twice: ${normalTwice.rowCount}`);
    // The payout limit totals equal what they total (processes here run in the default TZ).
    const usage = await c.query(`
      WITH want AS (
        SELECT merchant_id, 'D' AS period, (created_at AT TIME ZONE 'Europe/Moscow')::date AS start, sum(amount) AS amount
          FROM payouts WHERE status NOT IN ('FAIL', 'ERROR', 'DECLINED') GROUP BY 1, 2, 3
        UNION ALL
        SELECT merchant_id, 'M', date_trunc('month', created_at AT TIME ZONE 'Europe/Moscow')::date, sum(amount)
          FROM payouts WHERE status NOT IN ('FAIL', 'ERROR', 'DECLINED') GROUP BY 1, 2, 3)
      SELECT * FROM want w FULL JOIN payout_usage u
        ON u.merchant_id = w.merchant_id AND u.period = w.period AND u.period_start = w.start
       WHERE coalesce(w.amount, 0) <> coalesce(u.amount, 0)`);
    if (usage.rowCount) bad.push(`payout_usage out of step: ${JSON.stringify(usage.rows.slice(0, 5))}`);
    if (opts.requireDelivered) {
      const pending = await c.query(`SELECT status, count(*) FROM outbox_events WHERE status <> 'DELIVERED' AND url IS NOT NULL GROUP BY status`);
      if (pending.rowCount) bad.push(`events not delivered: ${JSON.stringify(pending.rows)}`);
    }
  } finally {
    await c.end();
  }
  return bad;
}
