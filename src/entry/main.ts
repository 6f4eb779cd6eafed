import './runtime-flags.js';
import cluster from 'node:cluster';
import { boot, type Booted } from './boot.js';
import { buildApp } from '../app.js';
import type { Config } from '../config.js';
import { createDb } from '../db/client.js';
import { seedDemo } from './seed.js';
import { createLogger } from '../logger.js';
import { onStopSignal, serve } from './server.js';
import { createServices } from '../services.js';
import { startWorkers, stopWorkers } from '../workers/index.js';

// npm start: migrate, serve the API, pages, cabinet and operator API, and run the workers
// (unless RUN_WORKERS=false). With WEB_CONCURRENCY=N > 1 this process is the cluster primary:
// it starts the database, migrates, seeds and runs the workers once, and N forked processes
// serve HTTP on the shared port (docs/adr/0045-process-lifecycle-and-first-hour.md).

/** How the primary hands its database (possibly the embedded one it started) to its API processes. */
const PRIMARY_DATABASE_URL = 'PAYMENT_SERVICE_PRIMARY_DATABASE_URL';

type Demo = Awaited<ReturnType<typeof seedDemo>>;

if (cluster.isWorker) {
  await apiProcess();
} else {
  const b = await boot();
  if (b.config.webConcurrency > 1) await primary(b);
  else await single(b);
}

async function single(b: Booted): Promise<void> {
  const db = createDb(b.databaseUrl);
  const app = await buildApp({ config: b.config, db });
  logProfile(app.log, b);
  const demo = b.embedded ? await seedDemo(app.services, db, b.config.publicBaseUrl) : null;
  const workers = b.config.runWorkers ? startWorkers({ config: b.config, db, services: app.services, log: app.log }) : [];
  // Stop order: HTTP (drain), workers (release leases), pool, then the embedded PostgreSQL.
  await serve(app, async () => {
    await stopWorkers(workers);
    await db.close();
    await b.embedded?.stop();
  });
  if (demo) printBanner(b.config, demo, 1);
}

/** A cluster worker: HTTP only, on the primary's database; the primary migrated it. */
async function apiProcess(): Promise<void> {
  const b = await boot({ migrate: false, databaseUrl: process.env[PRIMARY_DATABASE_URL] });
  const db = createDb(b.databaseUrl);
  const app = await buildApp({ config: b.config, db });
  await serve(app, () => db.close());
}

async function primary(b: Booted): Promise<void> {
  const n = b.config.webConcurrency;
  const log = createLogger(b.config);
  const db = createDb(b.databaseUrl, { max: 10 });
  const services = createServices(b.config, db, { log });
  logProfile(log, b);
  const demo = b.embedded ? await seedDemo(services, db, b.config.publicBaseUrl) : null;
  const workers = b.config.runWorkers ? startWorkers({ config: b.config, db, services, log }) : [];
  let stopping = false;
  let up = 0;
  const stop = async () => {
    stopping = true;
    // A Ctrl-C has reached the API processes too (one process group); SIGTERM (docker stop,
    // systemd) reaches only this one. Either way each drains, and they are waited for first.
    await Promise.all(Object.values(cluster.workers ?? {}).map((w) => new Promise<void>((resolve) => {
      if (!w || w.isDead()) return resolve();
      w.once('exit', () => resolve());
      w.process.kill('SIGTERM');
    })));
    await stopWorkers(workers);
    await db.close();
    await b.embedded?.stop();
  };
  onStopSignal(log, stop);
  const fork = () => cluster.fork({ [PRIMARY_DATABASE_URL]: b.databaseUrl });
  const listening = new Promise<void>((resolve) => {
    cluster.on('listening', () => { if (++up === n) resolve(); });
  });
  cluster.on('exit', (w, code, signal) => {
    if (stopping) return;
    if (up < n) {
      // It could not start (its error is above): starting it again would fail the same way.
      log.fatal({ pid: w.process.pid, code, signal }, 'an API process exited at start');
      void stop().finally(() => process.exit(1));
      return;
    }
    log.error({ pid: w.process.pid, code, signal }, 'an API process died: starting another');
    setTimeout(() => { if (!stopping) fork(); }, 1000);
  });
  for (let i = 0; i < n; i++) fork();
  await listening;
  log.info({ processes: n, workers: workers.map((w) => w.name) }, `${n} API processes listening at ${b.config.publicBaseUrl}`);
  if (demo) printBanner(b.config, demo, n);
}

/** Which profile runs, said at every start, and what an operator set that production would not default to. */
function logProfile(log: { info(o: object, m: string): void; warn(o: object, m: string): void }, b: Booted): void {
  log.info({ profile: b.config.profile }, b.config.profile === 'production'
    ? 'PAYMENTS_PROFILE=production: live money moves only through live-mode connectors; the sandbox serves test mode only'
    : 'PAYMENTS_PROFILE=sandbox: a test instrument; every route defaults to the built-in sandbox and no real money moves through it');
  for (const w of b.warnings) log.warn({ profile: b.config.profile }, w);
}

/** What a newcomer does next, printed once the sandbox profile listens. */
function printBanner(config: Config, demo: Demo, processes: number): void {
  const base = config.publicBaseUrl;
  const line = '-'.repeat(78);
  process.stdout.write([
    line,
    `Payment service, ${config.profile} profile${config.profile === 'sandbox' ? ' (a test instrument: no real money moves)' : ''}: embedded PostgreSQL (data in ${config.dataDir}),`,
    `listening at ${base}${processes > 1 ? ` (${processes} API processes)` : ''}. Stop with Ctrl-C.`,
    '',
    'Create a bill as the demo merchant:',
    `  curl -H "Authorization: Bearer ${demo.apiToken}" \\`,
    `       -d amount=100 -d shop_id=${demo.shopId} ${base}/api/v1/bill/create`,
    'open its link_page_url and pay with the test card 4242 4242 4242 4242',
    '(any future expiry, any CVC; 4000 0000 0000 0002 is declined).',
    '',
    `  cabinet:      ${base}/cabinet   sign in as ${demo.email} / ${demo.password}`,
    `  console:      ${base}/operator   (operators; the first one: npm run admin -- operators:create --email you@example.com --role admin)`,
    ...(config.profile === 'sandbox' ? [`  mailbox:      ${base}/operator/mailbox   (every mail the service sends: invitations, reset links; no mail leaves this machine)`] : []),
    `  test token:   ${demo.testApiToken}   (test mode: test objects and balances, always the sandbox)`,
    `  API docs:     ${base}/docs`,
    `  admin token:  ${config.adminApiToken}   (operator API /admin/v1, npm run admin -- --help)`,
    line,
    '',
  ].join('\n'));
}
