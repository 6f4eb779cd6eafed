/**
 * The ceilings: bare Fastify + node-postgres handlers with no framework logic beyond what the
 * request needs, one mode per process (BARE_MODE):
 *   hello   GET  /       hello world, no database
 *   insert  POST /bill   the single-row insert a bill makes
 *   select  GET  /bill   a primary-key select of a bill
 *   tx      POST /tx     BEGIN, ledger insert, balance update, COMMIT
 * Same pool size as the service (20), JSON in and out. WEB_CONCURRENCY=N > 1 runs N processes
 * sharing the port through node's cluster, as the service does, so each process count of the
 * service is compared with the same count of bare handlers.
 */
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const processes = Math.max(1, Number(process.env.WEB_CONCURRENCY ?? 1));
if (processes > 1 && cluster.isPrimary) {
  for (let i = 0; i < processes; i++) cluster.fork();
  const stop = () => { for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM'); setTimeout(() => process.exit(0), 2000).unref(); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  await serve();
}

async function serve(): Promise<void> {
  pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
  const mode = process.env.BARE_MODE ?? 'hello';
  const merchantId = process.env.BENCH_MERCHANT_ID ?? '';
  /** The transaction spreads over the merchants it is sent (like the service's money paths). */
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
  pool.on('error', () => {});
  const app = Fastify({ logger: false });
  const id = (n: number): string => randomBytes(n).toString('base64url').slice(0, n);

  app.get('/health', async () => ({ status: 'ok' }));

  if (mode === 'hello') {
    app.get('/', async () => ({ hello: 'world' }));
  }

  if (mode === 'insert') {
    app.post('/bill', async (req) => {
      const b = req.body as { amount: string; shop_id: string };
      const billId = id(10);
      await pool.query(
        `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type) VALUES ($1, $2, $3, $4, 'RUB', 'NORMAL')`,
        [billId, merchantId, b.shop_id, b.amount],
      );
      return { success: 'true', bill_id: billId };
    });
  }

  if (mode === 'select') {
    app.get('/bill', async (req, reply) => {
      const q = req.query as { id: string };
      const r = await pool.query(`SELECT id, status, amount, type, currency_in, created_at FROM bills WHERE id = $1`, [q.id]);
      const b = r.rows[0];
      if (!b) return reply.status(422).send({ success: false });
      return { ...b, success: true };
    });
  }

  if (mode === 'tx') {
    app.post('/tx', async (req) => {
      const b = req.body as { amount: string; merchant_id?: string };
      const m = b.merchant_id ?? merchantId;
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        // The same table writes as before the double-entry ledger: one ledger insert statement
        // (a transfer and its entry, in the shape the service writes them).
        const ref = id(16);
        await c.query(
          `WITH t AS (INSERT INTO ledger_transfers (id, kind, ref_type, ref_id, merchant_id) VALUES ('ADJUSTMENT:' || $2, 'ADJUSTMENT', 'bench', $2, $1) RETURNING id)
           INSERT INTO ledger_entries (transfer_id, leg, currency, debit_account, credit_account, amount)
           SELECT t.id, 1, 'RUB', 'RUB:adjustments', 'RUB:merchant:' || $1 || ':available', $3 FROM t`,
          [m, ref, b.amount],
        );
        const r = await c.query(
          `UPDATE balances SET available = available + $3, updated_at = now() WHERE merchant_id = $1 AND currency = $2 RETURNING available`,
          [m, 'RUB', b.amount],
        );
        await c.query('COMMIT');
        return { success: true, available: r.rows[0].available };
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        c.release();
      }
    });
  }

  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
  const stop = async () => { await app.close(); await pool.end(); process.exit(0); };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}
