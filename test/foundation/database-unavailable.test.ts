import { createServer, connect, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createDb, type Db } from '../../src/db/client.js';
import { isDatabaseUnavailable } from '../../src/db/database-error.js';
import { setupTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/service-process.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, createBill } from '../factories/payment.js';

/**
 * A TCP hop between the service and PostgreSQL that can be cut (every connection reset, new
 * ones refused, as when the database machine is lost) and restored on the same port.
 */
async function cuttableHop(target: { host: string; port: number }) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const open = () => new Promise<void>((resolve) => {
    server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      sockets.add(client); sockets.add(upstream);
      client.pipe(upstream); upstream.pipe(client);
      const close = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
      client.on('error', close); upstream.on('error', close); client.on('close', close); upstream.on('close', close);
    });
    server.listen(port, '127.0.0.1', () => resolve());
  });
  await open();
  return {
    port,
    async cut() {
      await new Promise<void>((resolve) => { server!.close(() => resolve()); for (const s of sockets) s.resetAndDestroy(); sockets.clear(); });
    },
    restore: open,
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server?.close(() => resolve()) ?? resolve(); }),
  };
}

let t: TestApp;
let m: MerchantFixture;
let hop: Awaited<ReturnType<typeof cuttableHop>>;
let app: FastifyInstance;
let db: Db;
beforeAll(async () => {
  t = await setupTestApp();
  m = await createMerchant(t);
  const u = new URL(t.dbUrl);
  hop = await cuttableHop({ host: u.hostname, port: Number(u.port || 5432) });
  u.hostname = '127.0.0.1';
  u.port = String(hop.port);
  db = createDb(u.toString(), { max: 4 });
  app = await buildApp({ config: testConfig(u.toString()), db, logger: false });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await db?.close();
  await hop?.close();
  await t.close();
});

const UNAVAILABLE = { success: false, message: 'api:error.general_error' };

describe('while the database cannot be reached the service answers 503 with Retry-After, never 500', () => {
  it('the database is lost (connections reset, new ones refused): the merchant API, the payment form, the cabinet and the console answer 503 + Retry-After; once it is back the same pool serves again', async () => {
    const balance = () => app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: m.auth });
    expect((await balance()).statusCode).toBe(200);
    const billId = await createBill(t, m);

    await hop.cut();
    for (const r of [
      await balance(),
      await app.inject({ method: 'POST', url: '/api/v1/bill/create', headers: m.auth, payload: { amount: 100, shop_id: m.shopId } }),
      await app.inject({ method: 'POST', url: `/pay/${billId}`, headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(cardForm()).toString() }),
    ]) {
      expect(r.statusCode, r.body).toBe(503);
      expect(r.json()).toEqual(UNAVAILABLE);
      expect(r.headers['retry-after']).toBe('2');
    }
    const cabinet = await app.inject({ method: 'POST', url: '/cabinet/login', headers: { cookie: 'cab_pre=x1' }, payload: { _csrf: 'x1', email: 'a@example.test', password: 'p' } });
    expect(cabinet.statusCode).toBe(503);
    expect(cabinet.headers['retry-after']).toBe('2');
    const console = await app.inject({ method: 'GET', url: '/operator/login' });
    expect(console.statusCode).not.toBe(500);

    // The dead connections were dropped: the first request after the database is back is served.
    await hop.restore();
    expect((await balance()).statusCode).toBe(200);
  });

  it('what counts as unreachable: refused and reset sockets, a server shutting down or in recovery, a standby, Prisma\'s unreachable codes; a constraint or a bug does not', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isDatabaseUnavailable({ code: '57P01', severity: 'FATAL', message: 'terminating connection due to administrator command' })).toBe(true);
    expect(isDatabaseUnavailable({ code: '25006', severity: 'ERROR', message: 'cannot execute INSERT in a read-only transaction' })).toBe(true);
    expect(isDatabaseUnavailable({ code: 'P1001', message: "Can't reach database server" })).toBe(true);
    expect(isDatabaseUnavailable({ code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'ConnectionClosed' } } } })).toBe(true);
    expect(isDatabaseUnavailable({ code: '23514', severity: 'ERROR', message: 'violates check constraint "balances_non_negative_check"' })).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
  });
});
