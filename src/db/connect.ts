import pg from 'pg';

/** One PostgreSQL server of a connection URL's host list. */
export interface DbHost { host: string; port: number }

export interface DatabaseTarget {
  /** The URL to hand to node-postgres: the first host, without the parameters only we read. */
  url: string;
  /** Every host of the list, in order (libpq's `host1:port1,host2:port2` form). */
  hosts: DbHost[];
  /** `target_session_attrs=read-write` (libpq): connect only to a server that accepts writes. */
  readWrite: boolean;
  /** `pgbouncer=true` (Prisma's convention): PgBouncer in transaction pooling mode in front. */
  pgbouncer: boolean;
  /** The URL with one given host of the list. */
  urlFor(h: DbHost): string;
}

const URL_SHAPE = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/;

/**
 * Reads a PostgreSQL URL as libpq would, including what node-postgres does not know: a host
 * list (`postgresql://u@h1:5432,h2:5432/db?target_session_attrs=read-write`, the form
 * `pg_autoctl show uri` prints) and `pgbouncer=true`.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const m = URL_SHAPE.exec(url);
  if (!m) return { url, hosts: [], readWrite: false, pgbouncer: false, urlFor: () => url };
  const [, scheme, auth = '', hostPart = '', path = '', query = ''] = m;
  const params = new URLSearchParams(query.slice(1));
  const pgbouncerFlag = params.get('pgbouncer');
  const tsa = params.get('target_session_attrs');
  params.delete('pgbouncer');
  params.delete('target_session_attrs');
  const hosts = hostPart.split(',').filter(Boolean).map((h) => {
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(h);
    if (v6) return { host: v6[1]!, port: Number(v6[2] ?? 5432) };
    const i = h.lastIndexOf(':');
    return i < 0 ? { host: h, port: 5432 } : { host: h.slice(0, i), port: Number(h.slice(i + 1)) };
  });
  const first = hostPart.split(',')[0] ?? '';
  const rest = params.toString();
  const build = (host: string) => `${scheme}${auth}${host}${path}${rest ? `?${rest}` : ''}`;
  return {
    url: build(first),
    urlFor: (h) => build(h.host.includes(':') ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`),
    hosts,
    readWrite: tsa === 'read-write' || tsa === 'primary',
    pgbouncer: pgbouncerFlag === 'true' || pgbouncerFlag === '1',
  };
}

/**
 * The node-postgres Client class for a target: it drops statement names behind PgBouncer (the
 * next transaction may run on a server connection that never saw the statement; callers keep
 * naming hot statements, which plans them once per connection when PostgreSQL is direct), and
 * with a host list it connects to the first server that accepts writes, trying the one that
 * did last time first, so after a failover new connections find the promoted standby by
 * themselves.
 */
export function clientClassFor(target: DatabaseTarget): typeof pg.Client {
  const chooseHost = target.hosts.length > 1 || target.readWrite;
  if (!target.pgbouncer && !chooseHost) return pg.Client;
  let preferred = 0;
  class TargetClient extends pg.Client {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override query(config: any, values?: any, callback?: any): any {
      if (target.pgbouncer && config && typeof config === 'object' && typeof config.name === 'string') {
        const { name: _name, ...rest } = config;
        return super.query(rest, values, callback);
      }
      return super.query(config, values, callback);
    }

    // pg-pool calls connect(callback); direct users await connect().
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override connect(callback?: any): any {
      if (!chooseHost) return callback ? super.connect(callback) : super.connect();
      if (!callback) return this.pickWritableHost().then(() => super.connect());
      // The callback goes to node-postgres itself, which calls it in the same tick as the
      // server's ReadyForQuery: pg-pool attaches its 'error' listeners there. Called a promise
      // step later, a server error read in the same chunk (a backend terminated just as it was
      // ready, under a failover) found a client with no listener and killed the process.
      this.pickWritableHost().then(() => super.connect(callback), (e: Error) => callback(e));
      return undefined;
    }

    private async pickWritableHost(): Promise<void> {
      const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
      const errors: string[] = [];
      const n = target.hosts.length;
      for (let k = 0; k < n; k++) {
        const i = (preferred + k) % n;
        const h = target.hosts[i]!;
        const probe = new pg.Client({ connectionString: target.urlFor(h), connectionTimeoutMillis: 3000, query_timeout: 3000 });
        probe.on('error', () => {});
        try {
          await probe.connect();
          // As libpq's read-write check: a promoted standby that still refuses writes (pg_auto_failover
          // keeps one read-only until the old primary's demote timeout) is not chosen yet.
          const r = await probe.query<{ ro: boolean }>(`SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::bool AS ro`);
          if (r.rows[0]?.ro) { errors.push(`${h.host}:${h.port} is a standby or read-only`); continue; }
          preferred = i;
          self.host = h.host; self.port = h.port;
          self.connectionParameters.host = h.host; self.connectionParameters.port = h.port;
          return;
        } catch (e) {
          errors.push(`${h.host}:${h.port} ${(e as Error).message}`);
        } finally {
          // Never wait for end(): on a connection that failed half-way (a server restarting in a
          // failover) it can wait forever, and with it the pool slot this connect holds.
          probe.end().catch(() => {});
          setTimeout(() => (probe as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy(), 1000).unref();
        }
      }
      const err = new Error(`no PostgreSQL server accepting writes: ${errors.join('; ')}`) as Error & { code: string };
      // 57P03 cannot_connect_now: the same class of answer a starting or failing-over server gives.
      err.code = '57P03';
      throw err;
    }
  }
  return TargetClient;
}

/** A single connection (migrations, tools) to the target the URL names. */
export function connectClient(databaseUrl: string): pg.Client {
  const t = parseDatabaseUrl(databaseUrl);
  const C = clientClassFor(t);
  const c = new C({ connectionString: t.url });
  // A connection lost between two statements (a failover during a start's migration) fails the
  // next statement, which its caller awaits; unheard, the 'error' event would end the process.
  c.on('error', () => {});
  return c;
}
