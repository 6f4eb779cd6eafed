import './runtime-flags.js';
import { boot } from './boot.js';
import { joinRunningEmbedded } from '../db/embedded-join.js';
import { createDb } from '../db/client.js';
import { createServices } from '../services.js';
import { createLogger } from '../logger.js';
import { onStopSignal } from './server.js';
import { startWorkers, stopWorkers } from '../workers/index.js';

// npm run worker: only the background workers (any number of these may run at once).
await joinRunningEmbedded();
const b = await boot();
const db = createDb(b.databaseUrl, { max: 10 });
const log = createLogger(b.config);
log.info({ profile: b.config.profile }, `PAYMENTS_PROFILE=${b.config.profile}`);
for (const w of b.warnings) log.warn({ profile: b.config.profile }, w);
const workers = startWorkers({ config: b.config, db, services: createServices(b.config, db, { log }), log });
log.info({ workers: workers.map((w) => w.name) }, 'workers started');
// Stop order: workers (finish or release what they hold), pool, then the embedded PostgreSQL.
onStopSignal(log, async () => {
  await stopWorkers(workers);
  await db.close();
  await b.embedded?.stop();
});
