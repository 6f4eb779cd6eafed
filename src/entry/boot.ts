import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ConfigError, loadConfig, readDotEnv, type Config } from '../config.js';
import { choosePort, EmbeddedStartError, startEmbeddedPostgres, type EmbeddedHandle } from '../db/embedded.js';

const DEFAULT_EMBEDDED_PG_PORT = 54320;
import { migrate } from '../db/migrate.js';
import { connectClient } from '../db/connect.js';
import { enterProfile, ProfileRefusedError } from '../domain/deployment/deployment.service.js';
import { profileWarnings } from '../domain/deployment/profile-warnings.js';

export interface Booted {
  config: Config;
  databaseUrl: string;
  embedded: EmbeddedHandle | null;
  /** What the start logs as warnings (settings an operator chose that production would not default to). */
  warnings: string[];
}

/** Secrets of the embedded/dev profile: generated once, kept in ./.data/secrets.json. */
function devSecrets(dataDir: string): { ADMIN_API_TOKEN: string; TOKEN_ENCRYPTION_KEY: string } {
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const s = { ADMIN_API_TOKEN: randomBytes(24).toString('base64url'), TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  writeFileSync(file, JSON.stringify(s, null, 2), { mode: 0o600 });
  return s;
}

/**
 * Reads the config; with no DATABASE_URL starts embedded PostgreSQL under DATA_DIR (./.data);
 * applies pending migrations. A missing setting exits with one line naming it.
 * `databaseUrl`: a cluster worker's, handed down by the primary that started the database.
 */
export async function boot(opts: { migrate?: boolean; databaseUrl?: string; enterProfile?: boolean } = {}): Promise<Booted> {
  const env = { ...readDotEnv(), ...process.env };
  let embedded: EmbeddedHandle | null = null;
  let config: Config;
  try {
    if (!env.DATABASE_URL) {
      const dataDir = env.DATA_DIR || './.data';
      mkdirSync(dataDir, { recursive: true });
      config = loadConfig(env, devSecrets(dataDir));
    } else {
      config = loadConfig(env);
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`config error: ${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  let databaseUrl = opts.databaseUrl ?? config.databaseUrl;
  const notices: string[] = [];
  if (!databaseUrl) {
    // Another checkout's service may hold the usual port: a free one is chosen then (said in a
    // warning), unless EMBEDDED_PG_PORT names one; whatever stops the start is said in one line.
    const preferred = Number(env.EMBEDDED_PG_PORT || DEFAULT_EMBEDDED_PG_PORT);
    try {
      const port = await choosePort(preferred, !!env.EMBEDDED_PG_PORT);
      if (port !== preferred) notices.push(`embedded PostgreSQL: port ${preferred} is taken (another checkout's service?); listening on ${port} this time`);
      embedded = await startEmbeddedPostgres({ dir: join(config.dataDir, 'pg'), port });
    } catch (e) {
      if (!(e instanceof EmbeddedStartError)) throw e;
      process.stderr.write(`embedded PostgreSQL cannot start: ${e.message}\n`);
      process.exit(78);
    }
    const admin = new pg.Client({ connectionString: embedded.adminUrl });
    // A server error between statements fails the next one; unheard, it would end the process.
    admin.on('error', () => {});
    await admin.connect();
    const has = await admin.query("SELECT 1 FROM pg_database WHERE datname = 'payments'");
    if (has.rowCount === 0) await admin.query('CREATE DATABASE payments');
    await admin.end();
    databaseUrl = embedded.url('payments');
  }
  if (opts.migrate ?? true) await migrate(databaseUrl);
  const warnings: string[] = [...notices];
  // The profile is the database's too (its triggers read it): recorded by the processes that
  // migrate (the primary, npm run worker), after the checks that keep live money safe.
  if (opts.enterProfile ?? opts.migrate ?? true) {
    // A host list (pg_auto_failover) is the project's own to resolve (src/db/connect.ts).
    const c = connectClient(databaseUrl);
    await c.connect();
    try {
      await enterProfile(c, config);
      warnings.push(...await profileWarnings(c, config));
    } catch (e) {
      if (!(e instanceof ProfileRefusedError)) throw e;
      process.stderr.write(`${e.lines.join('\n')}\n`);
      await c.end();
      await embedded?.stop();
      process.exit(78);
    } finally {
      await c.end().catch(() => {});
    }
  }
  return { config, databaseUrl, embedded, warnings };
}
