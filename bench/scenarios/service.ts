import { randomBytes } from 'node:crypto';
import type { LoadResult } from '../lib/load.js';
import { OPEN_LOOP_PERCENTS, openLoop, type OpenLoopResult } from '../lib/open-loop.js';
import { checkpoint, seededBillId, withClient } from '../lib/pg.js';
import { startService, type Child } from '../lib/proc.js';
import type { BenchPlan } from '../lib/plan.js';
import { measure, type ByConnections } from './ceilings.js';

export type ServiceScenario = 'bill_create' | 'bill_status' | 'payment' | 'payout' | 'merchant_balance';
/**
 * Open-loop runs at fixed rates, keyed `p50` / `p80`: the percent of the scenario's own maximum
 * (`max_rps`, its best closed-loop 2xx req/s in the same run and process count).
 */
export type OpenLoopRuns = Record<string, OpenLoopResult & { max_rps: number; percent: number }>;
export type ServiceResults = Record<ServiceScenario, ByConnections<LoadResult> | { unavailable: string }> & {
  /** VmHWM over the whole run, the open loops' overload included. */
  peak_rss_mb: number | null;
  /** VmHWM when the closed-loop scenarios had run, before any open loop (the target's figure). */
  peak_rss_closed_mb?: number | null;
  open_loop?: Partial<Record<ServiceScenario, OpenLoopRuns>>;
};


/** Env of the service under test: production start-up, workers off, limits far above the load. */
export function serviceEnv(url: string): Record<string, string> {
  return {
    DATABASE_URL: url,
    ADMIN_API_TOKEN: randomBytes(24).toString('base64url'),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    RUN_WORKERS: 'false',
    // The bench pays through the sandbox (no provider runs here): a sandbox deployment.
    PAYMENTS_PROFILE: 'sandbox',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    // The limiters still run on every request (their cost is measured); they just never trip.
    RATE_LIMIT_PER_TOKEN: '1000000000',
    RATE_LIMIT_PER_IP: '1000000000',
    PAY_ATTEMPTS_PER_IP: '1000000000',
  };
}

export interface Tenant { merchantId: string; token: string; shopId: string; payoutAccountId: string | null }

async function call(base: string, method: string, path: string, auth: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${auth}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, json, text };
}

async function admin(base: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(base, method, `/admin/v1${path}`, token, body);
  if (r.status >= 300) throw new Error(`${method} /admin/v1${path} -> ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}

/** A verified merchant with a shop, a card payout account and a large RUB balance, through the operator API. */
export async function setupTenant(base: string, adminToken: string, receiverUrl: string): Promise<Tenant> {
  const m = await admin(base, adminToken, 'POST', '/merchants', { name: 'Bench merchant', email: `bench-${randomBytes(6).toString("hex")}@bench.test` });
  const merchantId: string = m.id;
  await admin(base, adminToken, 'PATCH', `/merchants/${merchantId}`, { verified: true, grants: { refunds: true, regular_payouts: true } });
  const shop = await admin(base, adminToken, 'POST', `/merchants/${merchantId}/shops`, {
    name: 'Bench shop', result_url: `${receiverUrl}/result`, success_url: `${receiverUrl}/success`, fail_url: `${receiverUrl}/fail`,
  });
  await admin(base, adminToken, 'PUT', `/merchants/${merchantId}/payout-webhook`, { url: `${receiverUrl}/payouts` }).catch(() => {});
  let payoutAccountId: string | null = null;
  try {
    const acc = await admin(base, adminToken, 'POST', `/merchants/${merchantId}/payout-accounts`, { type: 'card', identifier: '4111111111111111', card_holder: 'BENCH USER' });
    payoutAccountId = acc.id;
    await admin(base, adminToken, 'POST', `/merchants/${merchantId}/balance-adjustments`, { currency: 'RUB', amount: '90000000.00', reason: 'bench' });
  } catch (e) {
    process.stdout.write(`  (payout setup failed: ${(e as Error).message})\n`);
  }
  return { merchantId, token: m.api_token, shopId: shop.id, payoutAccountId };
}

/** NORMAL bills written straight into the table, one per payment to be made, round-robin over the tenants. */
async function seedBills(url: string, ts: Tenant[], prefix: string, n: number): Promise<Array<{ id: string; merchant_id: string }>> {
  return withClient(url, async (c) => {
    await c.query(
      `INSERT INTO bills (id, merchant_id, shop_id, amount, currency_in, type)
       SELECT ${seededBillId(prefix, 'n')}, ($1::text[])[1 + n % $4], ($2::text[])[1 + n % $4], 100.00, 'RUB', 'NORMAL'
         FROM generate_series(1, $3) n`,
      [ts.map((t) => t.merchantId), ts.map((t) => t.shopId), n, ts.length],
    );
    await c.query('ANALYZE bills');
    const r = await c.query<{ id: string; merchant_id: string }>(`SELECT id, merchant_id FROM bills WHERE id LIKE $1 ORDER BY id`, [`${prefix}%`]);
    return r.rows;
  });
}

const cycle = <T>(xs: T[]) => { let i = 0; return () => xs[i++ % xs.length]!; };

/**
 * The service started like production (`npm run start:prod`: the compiled dist/main.js), set up through the operator API, exercised
 * through the merchant API and the payment page, requests spread round-robin over the tenants.
 * A scenario whose first request fails is reported unavailable with the answer it got, and the
 * run goes on.
 */
export async function runService(
  plan: BenchPlan, url: string, receiverUrl: string,
  /** API processes (WEB_CONCURRENCY): with more than one, node's cluster shares the port. */
  processes = 1,
): Promise<ServiceResults> {
  const env: Record<string, string> = { ...serviceEnv(url), WEB_CONCURRENCY: String(processes) };
  // Each API process loads and compiles the service on its own: on a busy machine a cluster
  // takes a multiple of one process's start-up.
  const child: Child = await startService('service', 'main', env, { readyTimeoutMs: 90_000 * Math.max(1, processes) });
  const base = `http://127.0.0.1:${child.port}`;
  const results = { peak_rss_mb: null } as ServiceResults;
  try {
    const tenants: Tenant[] = [];
    for (let i = 0; i < plan.tenants; i += 4) {
      const n = Math.min(4, plan.tenants - i);
      tenants.push(...await Promise.all(Array.from({ length: n }, () => setupTenant(base, env.ADMIN_API_TOKEN!, receiverUrl))));
    }
    const byMerchant = new Map(tenants.map((t) => [t.merchantId, t]));
    const authOf = (t: Tenant) => ({ authorization: `Bearer ${t.token}` });
    const jsonOf = (t: Tenant) => ({ ...authOf(t), 'content-type': 'application/json', accept: 'application/json' });
    const t0 = tenants[0]!;
    const run = randomBytes(3).toString('hex');

    const scenario = async (name: ServiceScenario, probe: () => Promise<{ status: number; text: string }>, spec: Parameters<typeof measure>[2]) => {
      plan.log(`  service ${name}`);
      const p = await probe().catch((e: Error) => ({ status: 0, text: e.message }));
      if (p.status < 200 || p.status >= 300) {
        results[name] = { unavailable: `probe answered ${p.status}: ${p.text.slice(0, 200)}` };
        plan.log(`    unavailable: ${(results[name] as { unavailable: string }).unavailable}`);
        return;
      }
      const runs = await measure(plan, child.pid, spec);
      results[name] = runs;
      const max = Math.max(...Object.values(runs).map((x) => x.rps));
      if (max > 0) openLoops.push({ name, max, spec });
    };
    // The open loops run after every closed-loop scenario, all 50% rates before any 80% one: an
    // 80% rate can overload the service (a queue of seconds, a heap grown to hold it), and that
    // must not fall on the next scenario's figures.
    const openLoops: { name: ServiceScenario; max: number; spec: Parameters<typeof measure>[2] }[] = [];
    const runOpenLoops = async () => {
      results.peak_rss_closed_mb = child.peakRssMb();
      for (const percent of OPEN_LOOP_PERCENTS) {
        for (const { name, max, spec } of openLoops) {
          const rate = Math.max(1, Math.round((max * percent) / 100));
          plan.log(`  open loop ${name} at ${percent}% of its own maximum (${max} req/s): ${rate} req/s`);
          const runs = ((results.open_loop ??= {})[name] ??= {});
          await checkpoint();
          runs[`p${percent}`] = { ...await openLoop(spec, rate, plan.durationS), max_rps: max, percent };
          await new Promise((r) => setTimeout(r, 2000));
        }
      }
    };

    const nextTenant = cycle(tenants);
    const billBody = (t: Tenant) => JSON.stringify({ amount: '100.00', shop_id: t.shopId });
    await scenario('bill_create', () => call(base, 'POST', '/api/v1/bill/create', t0.token, JSON.parse(billBody(t0))), {
      url: `${base}/api/v1/bill/create`, method: 'POST', headers: jsonOf(t0), body: billBody(t0),
      setup: () => { const t = nextTenant(); return { path: '/api/v1/bill/create', body: billBody(t), headers: jsonOf(t) }; },
    });

    // bill/status over bills the service made itself (else seeded ones), each asked by its owner.
    let statusBills = await withClient(url, async (c) =>
      (await c.query<{ id: string; merchant_id: string }>(`SELECT id, merchant_id FROM bills LIMIT 20000`)).rows);
    if (statusBills.length === 0) statusBills = await seedBills(url, tenants, 'T', 20_000);
    const nextStatus = cycle(statusBills);
    const sb0 = statusBills[0]!;
    await scenario('bill_status', () => call(base, 'GET', `/api/v1/bill/status?id=${sb0.id}`, byMerchant.get(sb0.merchant_id)!.token), {
      url: `${base}/api/v1/bill/status?id=${sb0.id}`, headers: authOf(t0),
      setup: () => { const b = nextStatus(); return { path: `/api/v1/bill/status?id=${b.id}`, headers: authOf(byMerchant.get(b.merchant_id)!) }; },
    });

    // One fresh NORMAL bill per payment: 4,000/s is above the bare transaction ceiling here.
    const payBills = await seedBills(url, tenants, 'P', 4000 * (plan.warmupS + plan.durationS * (plan.connections.length + 2)) + 1);
    let pi = 0;
    const payBody = JSON.stringify({ method: 'BANK_CARD', card_number: '4242424242424242', card_expiry: '12/30', card_cvc: '123' });
    const payHeaders = { 'content-type': 'application/json', accept: 'application/json' };
    await scenario('payment', async () => {
      const r = await fetch(`${base}/pay/${payBills[pi++]!.id}`, { method: 'POST', headers: payHeaders, body: payBody });
      return { status: r.status, text: await r.text() };
    }, { url: `${base}/pay/x`, method: 'POST', headers: payHeaders, body: payBody, setup: () => ({ path: `/pay/${payBills[pi++ % payBills.length]!.id}` }) });

    let n = 0;
    const payoutBody = (t: Tenant) => JSON.stringify({ amount: '1.00', payout_account_id: t.payoutAccountId, order_id: `bench-${run}-${n++}` });
    await scenario('payout', () => call(base, 'POST', '/api/v1/payout/personal/create', t0.token, JSON.parse(payoutBody(t0))), {
      url: `${base}/api/v1/payout/personal/create`, method: 'POST', headers: jsonOf(t0), body: payoutBody(t0),
      setup: () => { const t = nextTenant(); return { path: '/api/v1/payout/personal/create', body: payoutBody(t), headers: jsonOf(t) }; },
    });

    await scenario('merchant_balance', () => call(base, 'GET', '/api/v1/merchant/balance', t0.token), {
      url: `${base}/api/v1/merchant/balance`, headers: authOf(t0),
      setup: () => ({ path: '/api/v1/merchant/balance', headers: authOf(nextTenant()) }),
    });
    await runOpenLoops();
  } finally {
    results.peak_rss_mb = child.peakRssMb();
    await child.stop();
  }
  return results;
}
