// A real outbox worker process for the multi-process tests: the same startOutboxWorker as
// `npm run worker`, with short lease/timeout/retry settings from the environment.
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { createDb } from '../../src/db/client.js';
import { MerchantService } from '../../src/domain/merchant/merchant.service.js';
import { startOutboxWorker } from '../../src/workers/outbox.js';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' } as Record<string, string>);
const db = createDb(config.databaseUrl!, { max: 4 });
const log = pino({ level: 'silent' });
const env = process.env;
const w = startOutboxWorker({ config, db, log, services: { merchants: new MerchantService(config, db) } }, {
  workerId: env.WORKER_ID,
  leaseMs: Number(env.LEASE_MS ?? 60_000),
  timeoutMs: Number(env.TIMEOUT_MS ?? 10_000),
  pollMs: 25,
  concurrency: Number(env.CONCURRENCY ?? 16),
  retryDelaysMs: env.RETRY_DELAYS_MS ? env.RETRY_DELAYS_MS.split(',').map(Number) : undefined,
});
process.stdout.write('ready\n');
const stop = async () => {
  await w.stop();
  await db.close();
  process.stdout.write('stopped\n');
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
