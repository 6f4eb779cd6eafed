import { boot } from './boot.js';
import { joinRunningEmbedded } from '../db/embedded-join.js';

// npm run db:migrate: applies pending migrations and exits.
await joinRunningEmbedded();
const b = await boot({ migrate: false });
const { migrate } = await import('../db/migrate.js');
const applied = await migrate(b.databaseUrl);
process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
if (b.embedded) await b.embedded.stop();
