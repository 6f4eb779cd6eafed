import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/client.js';
import { buildApp } from '../../src/app.js';
import { createServices } from '../../src/services.js';
import type { ConnectorPlugin } from '../../src/domain/providers/plugin.js';
import type { ConflictLog } from '../../src/domain/providers/conflict.js';
import { enterProfile } from '../../src/domain/deployment/deployment.service.js';
import { withDatabase } from './pg-server.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const TEST_KEY = Buffer.alloc(32, 7).toString('base64');

/** A fresh database cloned from the migrated template; dropped by `drop()`. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const adminUrl = inject('adminUrl');
  const name = `pay_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${inject('templateDb')}"`);
  await admin.end();
  return {
    url: withDatabase(inject('appServerUrl'), name),
    name,
    async drop() {
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.end();
    },
  };
}

/**
 * An EMPTY database (no migration applied), for tests that migrate step by step: e.g. up to a
 * migration, fill rows as the code before it wrote them, then migrate to the end.
 */
export async function createEmptyDatabase(suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const tmp = await createTestDatabase();
  const u = new URL(tmp.url);
  const name = `${u.pathname.slice(1)}_${suffix}`;
  const adminUrl = new URL(tmp.url);
  adminUrl.pathname = '/postgres';
  const run = async (sql: string) => {
    const a = new pg.Client({ connectionString: adminUrl.toString() });
    await a.connect();
    try { await a.query(sql); } finally { await a.end(); }
  };
  await run(`CREATE DATABASE "${name}"`);
  await tmp.drop();
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

export function testConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    ADMIN_API_TOKEN: ADMIN_TOKEN,
    TOKEN_ENCRYPTION_KEY: TEST_KEY,
    PUBLIC_BASE_URL: 'http://pay.test',
    PAYMENTS_PROFILE: 'sandbox',
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    SANDBOX_PROCESSING_DELAY_MS: '0',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  config: Config;
  dbUrl: string;
  close(): Promise<void>;
}

/** buildApp() on a database of this test file's own. Call `close()` in afterAll. */
export async function setupTestApp(
  env: Record<string, string> = {},
  opts: {
    logStream?: { write(line: string): void };
    /** The connector kinds (default CONNECTORS): a test adds a kind here. */
    connectors?: readonly ConnectorPlugin[];
    /** Runs before the app is ready: a test adds a hook that sees every route (e.g. what a handler returned, before its schema). */
    beforeReady?: (app: FastifyInstance) => void;
    /** Where this app's services log a provider's contradiction of a final status (default: silent). */
    conflictLog?: ConflictLog;
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = testConfig(database.url, env);
  const db = createDb(database.url, { max: 30 });
  // As a start does: the database records the profile its triggers enforce.
  await enterProfile(db.pool, config);
  const services = opts.connectors || opts.conflictLog ? { services: createServices(config, db, { connectors: opts.connectors, log: opts.conflictLog }) } : {};
  const app = await buildApp({ config, db, ...services, ...(opts.logStream ? { logStream: opts.logStream } : { logger: false }) });
  opts.beforeReady?.(app);
  await app.ready();
  return {
    app, db, config, dbUrl: database.url,
    async close() {
      await app.close();
      await db.close();
      await database.drop();
    },
  };
}
