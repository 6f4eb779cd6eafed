// Preloaded into the service under `npm run bench:cost` (node --import): counts the statements
// the process sends to PostgreSQL, by prepared-statement name or the start of the SQL text, and
// writes them to $QUERY_COUNT_FILE on SIGUSR2. Counts are what load cannot blur; no timing here.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

// The service's own pg (its tree's node_modules), not the bench's copy.
const pg = createRequire(`${process.cwd()}/`)('pg');
const counts = new Map();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, values, cb) {
  const text = typeof config === 'string' ? config : (config?.text ?? '');
  const key = typeof config === 'object' && config?.name ? `[${config.name}]` : text.replace(/\s+/g, ' ').trim().slice(0, 90);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return query.call(this, config, values, cb);
};
process.on('SIGUSR2', () => {
  if (process.env.QUERY_COUNT_FILE) writeFileSync(process.env.QUERY_COUNT_FILE, JSON.stringify(Object.fromEntries(counts)));
});
