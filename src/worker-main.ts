import './runtime-flags.js';
import pino from 'pino';
import { boot } from './boot.js';
import { createDb } from './db/client.js';
import { createServices } from './services.js';
import { loggerOptions } from './logger.js';
import { startWorkers, stopWorkers } from './workers.js';

// npm run worker: only the background workers (any number of these may run at once).
const b = await boot();
const db = createDb(b.databaseUrl, { max: 10 });
const log = pino(loggerOptions(b.config.logLevel, [b.config.adminApiToken, b.config.tokenEncryptionKey.toString('base64')]));
const workers = startWorkers({ config: b.config, db, services: createServices(b.config, db), log });
log.info({ workers: workers.map((w) => w.name) }, 'workers started');
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await stopWorkers(workers);
  await db.close();
  if (b.embedded) await b.embedded.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
