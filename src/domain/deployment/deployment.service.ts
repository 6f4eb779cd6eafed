import { Decimal } from 'decimal.js';
import type { Config, PaymentsProfile } from '../../config.js';
import { withPgTx, type Queryable } from '../../db/client.js';
import { newId } from '../../lib/ids.js';
import { writeAudit, type Actor } from '../../audit/audit.js';
import { post } from '../ledger/ledger.js';
import { adjustment } from '../ledger/postings.js';
import type { Currency } from '../../generated/prisma/enums.js';
import type { OperationType } from '../operation-type.js';

/**
 * The deployment's profile as the database knows it (table `deployment`), and the one
 * transition that needs care: a database that ran as `sandbox` becomes `production` only when no
 * live balance holds money the sandbox (or any test-mode connector) credited, and no live
 * operation through such a connector is still running (docs/operations.md "Deployment profiles").
 */

/** Money a test-mode connector put on a live balance, not cleared yet (per merchant and currency). */
export interface SandboxMoney { merchantId: string; email: string; currency: Currency; amount: Decimal; available: Decimal }

/** A live operation through a test-mode connector (or none yet) that is not final. */
export interface SandboxInFlight { merchantId: string; email: string; objectType: OperationType; id: string; status: string }

export class ProfileRefusedError extends Error {
  constructor(readonly lines: string[]) { super(lines.join('\n')); }
}

/**
 * What a live merchant's accounts received and gave through test-mode connectors, by the ledger:
 * every transfer of a payment, payout, refund or chargeback whose operation went through a
 * connector that is not live, summed over the merchant's own accounts (credits minus debits),
 * less what the operator cleared (sandbox_money_clearances).
 */
const SANDBOX_MONEY_SQL = `
WITH ops AS (
  SELECT 'payment'::text AS ref_type, id AS ref_id FROM payments WHERE mode = 'live' AND connector_mode IS DISTINCT FROM 'live' AND connector IS NOT NULL
  UNION ALL SELECT 'payout', id FROM payouts WHERE mode = 'live' AND connector_mode IS DISTINCT FROM 'live' AND connector IS NOT NULL
  UNION ALL SELECT 'refund', id FROM refunds WHERE mode = 'live' AND connector_mode IS DISTINCT FROM 'live' AND connector IS NOT NULL
  UNION ALL SELECT 'chargeback', cb.id FROM chargebacks cb JOIN payments p ON p.id = cb.payment_id
             WHERE p.mode = 'live' AND p.connector_mode IS DISTINCT FROM 'live' AND p.connector IS NOT NULL),
moved AS (
  SELECT t.merchant_id, e.currency,
         sum(CASE WHEN e.credit_account LIKE e.currency::text || ':merchant:' || t.merchant_id || ':%' THEN e.amount ELSE 0 END)
       - sum(CASE WHEN e.debit_account LIKE e.currency::text || ':merchant:' || t.merchant_id || ':%' THEN e.amount ELSE 0 END) AS amount
    FROM ops JOIN ledger_transfers t ON t.ref_type = ops.ref_type AND t.ref_id = ops.ref_id
    JOIN ledger_entries e ON e.transfer_id = t.id
   GROUP BY t.merchant_id, e.currency),
cleared AS (SELECT merchant_id, currency, sum(amount) AS amount FROM sandbox_money_clearances GROUP BY merchant_id, currency)
SELECT m.id AS merchant_id, m.email, mv.currency::text AS currency, (mv.amount - coalesce(c.amount, 0))::text AS amount,
       coalesce(b.available, 0)::text AS available
  FROM moved mv
  JOIN merchants m ON m.id = mv.merchant_id AND m.live_merchant_id IS NULL
  LEFT JOIN cleared c ON c.merchant_id = mv.merchant_id AND c.currency = mv.currency
  LEFT JOIN balances b ON b.merchant_id = mv.merchant_id AND b.currency = mv.currency
 WHERE mv.amount - coalesce(c.amount, 0) > 0
 ORDER BY m.email, mv.currency`;

/** Live operations that a production start would hand to live connectors, or that the sandbox still runs. */
const IN_FLIGHT_SQL = `
SELECT o.merchant_id, m.email, o.object_type, o.id, o.status FROM (
  SELECT merchant_id, 'payment' AS object_type, id, status::text FROM payments
   WHERE status = 'PROCESS' AND mode = 'live' AND connector_mode IS DISTINCT FROM 'live' AND connector IS NOT NULL
  UNION ALL
  SELECT merchant_id, 'payout', id, status::text FROM payouts
   WHERE status IN ('NEW', 'MODERATING', 'PROCESS') AND (connector IS NULL OR (mode = 'live' AND connector_mode IS DISTINCT FROM 'live'))
  UNION ALL
  SELECT merchant_id, 'refund', id, status::text FROM refunds
   WHERE status IN ('NEW', 'PROCESS') AND (connector IS NULL OR (mode = 'live' AND connector_mode IS DISTINCT FROM 'live'))
) o JOIN merchants m ON m.id = o.merchant_id AND m.live_merchant_id IS NULL
ORDER BY m.email, o.object_type, o.id
LIMIT 200`;

export const CLEAR_COMMAND = 'npm run admin -- sandbox-money:clear';

export async function databaseProfile(c: Queryable): Promise<PaymentsProfile> {
  const r = await c.query<{ profile: PaymentsProfile }>('SELECT profile FROM deployment');
  return r.rows[0]?.profile ?? 'sandbox';
}

export async function sandboxMoney(c: Queryable): Promise<SandboxMoney[]> {
  const r = await c.query<{ merchant_id: string; email: string; currency: Currency; amount: string; available: string }>(SANDBOX_MONEY_SQL);
  return r.rows.map((x) => ({ merchantId: x.merchant_id, email: x.email, currency: x.currency, amount: new Decimal(x.amount), available: new Decimal(x.available) }));
}

export async function sandboxInFlight(c: Queryable): Promise<SandboxInFlight[]> {
  const r = await c.query<{ merchant_id: string; email: string; object_type: SandboxInFlight['objectType']; id: string; status: string }>(IN_FLIGHT_SQL);
  return r.rows.map((x) => ({ merchantId: x.merchant_id, email: x.email, objectType: x.object_type, id: x.id, status: x.status }));
}

/**
 * Records the profile this start runs with, after the checks that keep live money safe:
 * - to `production` from a database that ran as `sandbox`: refused while a live balance holds
 *   sandbox money or a live operation through the sandbox (or not routed yet) is running; the
 *   refusal names the merchants and the command that clears the money (audited);
 * - to `sandbox` from a database that ran as `production` while live connectors moved money:
 *   refused (the sandbox would be the default acquirer of real merchants' balances again).
 * Already in the profile: nothing to check (production admits no sandbox money on its own).
 */
export async function enterProfile(c: Queryable, config: Pick<Config, 'profile'>): Promise<void> {
  const was = await databaseProfile(c);
  if (was === config.profile) return;
  if (config.profile === 'production') {
    const money = await sandboxMoney(c);
    const running = await sandboxInFlight(c);
    if (money.length > 0 || running.length > 0) throw new ProfileRefusedError(productionRefusal(money, running));
  } else {
    const live = await c.query(`SELECT 1 FROM payments WHERE mode = 'live' AND connector_mode = 'live' LIMIT 1`);
    if ((live.rowCount ?? 0) > 0) {
      throw new ProfileRefusedError([
        'PAYMENTS_PROFILE=sandbox refused: this database ran as production and live connectors moved real money through it.',
        'In the sandbox profile the sandbox would be the default acquirer of those live balances. Start it with PAYMENTS_PROFILE=production.',
      ]);
    }
  }
  await c.query('UPDATE deployment SET profile = $1, changed_at = now()', [config.profile]);
}

function productionRefusal(money: SandboxMoney[], running: SandboxInFlight[]): string[] {
  const lines = ['PAYMENTS_PROFILE=production refused: this database ran as sandbox and live merchants still hold what the sandbox moved.'];
  for (const m of money) lines.push(`  merchant ${m.merchantId} (${m.email}): ${m.amount.toFixed(2)} ${m.currency} credited by the sandbox on its live balance`);
  for (const o of running) lines.push(`  merchant ${o.merchantId} (${o.email}): ${o.objectType} ${o.id} is ${o.status} without a live connector`);
  if (running.length > 0) lines.push('Let the running operations finish in the sandbox profile first (or decline the payouts waiting for moderation).');
  if (money.length > 0) lines.push(`Clear that money (an audited debit of each live balance): ${CLEAR_COMMAND} [--merchant <id>] --reason "<why>", then start again.`);
  return lines;
}

export interface Clearance { merchantId: string; email: string; currency: Currency; amount: Decimal; debited: Decimal; adjustmentId: string | null }

/**
 * Clears the sandbox's money off live balances (the command the refused start names): for each
 * merchant and currency, the available balance is debited by the sandbox money, at most what is
 * available (an ADJUSTMENT transfer), and the clearance is recorded for the whole amount, so a
 * shortfall (sandbox money already paid out) is written off on the record rather than taken
 * from money a live connector brought. Each clearance is in the audit trail.
 */
export async function clearSandboxMoney(db: { pool: import('pg').Pool }, who: Actor, o: { merchantId?: string; reason: string }): Promise<Clearance[]> {
  const out: Clearance[] = [];
  for (const m of await sandboxMoney(db.pool)) {
    if (o.merchantId && m.merchantId !== o.merchantId) continue;
    out.push(await withPgTx(db.pool, async (c) => {
      await c.query('SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE', [m.merchantId]);
      const now = (await sandboxMoney(c)).find((x) => x.merchantId === m.merchantId && x.currency === m.currency);
      if (!now) return { ...m, debited: new Decimal(0), adjustmentId: null };
      const debited = Decimal.min(now.amount, now.available);
      let adjustmentId: string | null = null;
      const memo = `sandbox money cleared before production: ${o.reason}`;
      if (debited.gt(0)) {
        adjustmentId = newId();
        await c.query(`INSERT INTO balance_adjustments (id, merchant_id, currency, amount, reason) VALUES ($1, $2, $3::"Currency", $4, $5)`,
          [adjustmentId, m.merchantId, m.currency, debited.neg().toFixed(), memo]);
        await post(c, adjustment({ adjustmentId, merchantId: m.merchantId, currency: m.currency, amount: debited.neg(), memo }));
      }
      const id = newId();
      await c.query(`INSERT INTO sandbox_money_clearances (id, merchant_id, currency, amount, adjustment_id, actor) VALUES ($1, $2, $3::"Currency", $4, $5, $6)`,
        [id, m.merchantId, m.currency, now.amount.toFixed(), adjustmentId, who.actor]);
      await writeAudit(c, who, {
        action: 'merchant.sandbox_money.clear', objectType: 'merchant', objectId: m.merchantId, before: null,
        after: { currency: m.currency, sandbox_money: now.amount.toFixed(2), debited: debited.toFixed(2), written_off: now.amount.minus(debited).toFixed(2), adjustment_id: adjustmentId, reason: o.reason },
      });
      return { merchantId: m.merchantId, email: m.email, currency: m.currency, amount: now.amount, debited, adjustmentId };
    }));
  }
  return out;
}

/** The deployment's profile and the sandbox's leftovers on live balances, for the operator API. */
export class DeploymentService {
  constructor(private readonly config: Config, private readonly db: { pool: import('pg').Pool }) {}

  async state(): Promise<{ profile: PaymentsProfile; databaseProfile: PaymentsProfile; sandboxMoney: SandboxMoney[]; inFlight: SandboxInFlight[] }> {
    return {
      profile: this.config.profile, databaseProfile: await databaseProfile(this.db.pool),
      sandboxMoney: await sandboxMoney(this.db.pool), inFlight: await sandboxInFlight(this.db.pool),
    };
  }

  clearSandboxMoney(who: Actor, o: { merchantId?: string; reason: string }): Promise<Clearance[]> {
    return clearSandboxMoney(this.db, who, o);
  }
}
