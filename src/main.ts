import './runtime-flags.js';
import { boot } from './boot.js';
import { buildApp } from './app.js';
import { createDb } from './db/client.js';
import { serve } from './server.js';
import { seedDemo } from './db/seed.js';
import { startWorkers, stopWorkers } from './workers.js';

// npm start: migrate, serve API + pages + cabinet, and run the workers (unless RUN_WORKERS=false).
const b = await boot();
const db = createDb(b.databaseUrl);
const app = await buildApp({ config: b.config, db });
if (b.embedded) {
  const demo = await seedDemo(app.services, db);
  const line = '-'.repeat(72);
  process.stdout.write(
    `${line}\nEmbedded PostgreSQL (data in ${b.config.dataDir}), sandbox profile.\n` +
    `  API:          ${b.config.publicBaseUrl}/api/v1   docs: ${b.config.publicBaseUrl}/docs\n` +
    `  demo token:   ${demo.apiToken}\n  demo shop_id: ${demo.shopId}\n` +
    `  cabinet:      ${b.config.publicBaseUrl}/cabinet  (${demo.email} / ${demo.password})\n` +
    `  admin token:  ${b.config.adminApiToken}\n${line}\n`,
  );
}
const workers = b.config.runWorkers ? startWorkers({ config: b.config, db, services: app.services, log: app.log }) : [];
await serve(app, async () => {
  await stopWorkers(workers);
  await db.close();
  if (b.embedded) await b.embedded.stop();
});
