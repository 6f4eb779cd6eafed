import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A pg_auto_failover formation of the test's own on 127.0.0.1 (Debian's
 * postgresql-15-auto-failover and pg-auto-failover-cli): a monitor and two PostgreSQL nodes with
 * synchronous replication, each `pg_autoctl ... --run` a child process group of this process.
 * pg_autoctl refuses to run as root, so as root it runs as the `postgres` user.
 */
export interface Node { name: string; port: number; pgdata: string; proc: ChildProcess | null }

export interface Formation {
  /** libpq form for the service: both nodes, read-write target. */
  serviceUrl: string;
  nodes: Node[];
  /** The URL of one node's `payments` database. */
  nodeUrl(n: Node): string;
  /** The node that is out of recovery (promoted), asking each node itself. */
  primary(): Promise<Node | null>;
  /** Whether a node takes writes: out of recovery and not read-only (libpq's read-write). */
  acceptsWrites(n: Node): Promise<boolean>;
  /** SIGKILL a node's keeper and its PostgreSQL: the machine is lost. */
  killNode(n: Node): Promise<void>;
  /** Starts a lost node's keeper again: it rejoins as a standby. */
  restartNode(n: Node): void;
  /** States as the monitor reports them. */
  states(): Promise<Array<{ name: string; reported: string; assigned: string }>>;
  stop(): Promise<void>;
}

const BIN_DIR = '/usr/lib/postgresql/15/bin';

export function autoctlBinary(): string | null {
  for (const p of ['/usr/bin/pg_autoctl', join(BIN_DIR, 'pg_autoctl')]) if (existsSync(p)) return p;
  return null;
}

const asRoot = () => process.getuid?.() === 0;

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  })));
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export interface FormationOptions {
  dbname?: string;
  log?: (s: string) => void;
  /**
   * The monitor's pgautofailover.primary_demote_timeout (default 30 s): how long a promoted
   * standby stays read-only waiting for the old primary to demote itself.
   */
  primaryDemoteTimeoutS?: number;
}

/**
 * A formation started in three steps, each bounded by the `ms` it is given, so a test can run each
 * in a hook of its own (docs/adr/0139-slow-starts-wait-in-hooks.md): the monitor, the first node
 * (primary), the second node (a standby in sync: its base backup is the slowest part). `formation`
 * can be stopped whatever step was reached.
 */
export interface FormationSteps {
  formation: Formation;
  monitor(ms: number): Promise<void>;
  primary(ms: number): Promise<void>;
  standby(ms: number): Promise<void>;
}

/** The whole formation in one call, each step with a generous bound (a script, a debugger). */
export async function startFormation(opts: FormationOptions = {}): Promise<Formation> {
  const steps = await formationSteps(opts);
  await steps.monitor(120_000);
  await steps.primary(120_000);
  await steps.standby(180_000);
  return steps.formation;
}

export async function formationSteps(opts: FormationOptions = {}): Promise<FormationSteps> {
  const bin = autoctlBinary();
  if (!bin) throw new Error('the failover test needs pg_auto_failover: apt-get install -y postgresql-15-auto-failover pg-auto-failover-cli (.ci/run installs them)');
  const dbname = opts.dbname ?? 'payments';
  const dir = mkdtempSync(join(tmpdir(), 'paf-'));
  for (const d of ['config', 'data', 'run']) mkdirSync(join(dir, d));
  if (asRoot()) {
    const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim());
    for (const d of [dir, join(dir, 'config'), join(dir, 'data'), join(dir, 'run')]) chownSync(d, uid, gid);
  }
  chmodSync(dir, 0o755);
  const env = {
    PATH: `${BIN_DIR}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data'),
    XDG_RUNTIME_DIR: join(dir, 'run'), HOME: dir, LANG: 'C.UTF-8',
  };
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const command = (args: string[]) => (asRoot()
    ? { cmd: 'runuser', args: ['-u', 'postgres', '--', 'env', ...envArgs, bin, ...args] }
    : { cmd: bin, args });
  const run = (args: string[]) => {
    const c = command(args);
    return spawnSync(c.cmd, c.args, { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  };
  const procs: ChildProcess[] = [];
  const logTail: string[] = [];
  const background = (args: string[]) => {
    const c = command(args);
    const child = spawn(c.cmd, c.args, { env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => { logTail.push(d.toString()); if (logTail.length > 200) logTail.shift(); opts.log?.(d.toString()); };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    procs.push(child);
    return child;
  };
  const [monPort, p1, p2] = await freePorts(3) as [number, number, number];
  const monitorData = join(dir, 'monitor');
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monPort}/pg_auto_failover?sslmode=disable`;
  const waitFor = async (what: string, ok: () => Promise<boolean>, ms: number) => {
    const until = Date.now() + ms;
    while (!(await ok().catch(() => false))) {
      if (Date.now() > until) throw new Error(`pg_auto_failover: ${what} timed out\n${logTail.join('').slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const query = async (url: string, sql: string) => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    c.on('error', () => {});
    await c.connect();
    try { return (await c.query(sql)).rows; } finally { await c.end().catch(() => {}); }
  };
  const startMonitor = async (ms: number) => {
    background(['create', 'monitor', '--pgdata', monitorData, '--pgport', String(monPort), '--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--run']);
    await waitFor('monitor', async () => (await query(monitorUrl, 'SELECT 1 AS x')).length === 1, ms);
    if (opts.primaryDemoteTimeoutS !== undefined) {
      // The monitor's superuser is the OS user it runs as.
      const su = asRoot() ? 'postgres' : userInfo().username;
      const suUrl = `postgres://${su}@127.0.0.1:${monPort}/pg_auto_failover?sslmode=disable`;
      await query(suUrl, `ALTER SYSTEM SET pgautofailover.primary_demote_timeout = '${opts.primaryDemoteTimeoutS}s'`);
      await query(suUrl, 'SELECT pg_reload_conf()');
    }
  };

  const nodes: Node[] = [
    { name: 'node_1', port: p1, pgdata: join(dir, 'node1'), proc: null },
    { name: 'node_2', port: p2, pgdata: join(dir, 'node2'), proc: null },
  ];
  const nodeUrl = (n: Node) => `postgresql://postgres@127.0.0.1:${n.port}/${dbname}`;
  const states = async () => {
    const rows = await query(monitorUrl, `SELECT nodename AS name, reportedstate::text AS reported, goalstate::text AS assigned FROM pgautofailover.node ORDER BY nodeid`);
    return rows as Array<{ name: string; reported: string; assigned: string }>;
  };
  const startNode = (n: Node) => {
    n.proc = background(['create', 'postgres', '--pgdata', n.pgdata, '--pgport', String(n.port), '--hostname', '127.0.0.1',
      '--name', n.name, '--dbname', dbname, '--monitor', monitorUrl, '--auth', 'trust', '--no-ssl', '--run']);
  };
  const startPrimary = async (ms: number) => {
    startNode(nodes[0]!);
    await waitFor('first node primary', async () => (await states()).some((s) => s.name === 'node_1' && ['single', 'primary'].includes(s.reported)), ms);
    // The standby's base backup starts with a checkpoint, which pg_autoctl does not ask to be fast:
    // spread over checkpoint_completion_target of checkpoint_timeout, it held the standby for
    // minutes on this idle primary. Written at once instead (the standby inherits the setting).
    const admin = `postgresql://postgres@127.0.0.1:${nodes[0]!.port}/postgres`;
    await query(admin, 'ALTER SYSTEM SET checkpoint_completion_target = 0');
    await query(admin, 'SELECT pg_reload_conf()');
  };
  const startStandby = async (ms: number) => {
    startNode(nodes[1]!);
    await waitFor('standby in sync', async () => {
      const s = await states();
      return s.some((x) => x.name === 'node_1' && x.reported === 'primary' && x.assigned === 'primary')
        && s.some((x) => x.name === 'node_2' && x.reported === 'secondary' && x.assigned === 'secondary');
    }, ms);
  };

  const primary = async () => {
    for (const n of nodes) {
      try {
        const r = await query(nodeUrl(n), 'SELECT pg_is_in_recovery() AS ro');
        if (r[0] && r[0].ro === false) return n;
      } catch { /* down */ }
    }
    return null;
  };
  const killNode = async (n: Node) => {
    const pidFile = join(n.pgdata, 'postmaster.pid');
    const pmPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
    // The keeper, the postmaster and every backend at once, as when the machine dies (backends
    // of a postmaster killed alone keep serving their connections until they notice).
    if (n.proc?.pid) { try { process.kill(-n.proc.pid, 'SIGKILL'); } catch { /* gone */ } }
    if (pmPid) {
      spawnSync('pkill', ['-9', '-P', String(pmPid)]);
      try { process.kill(pmPid, 'SIGKILL'); } catch { /* gone */ }
      spawnSync('pkill', ['-9', '-P', String(pmPid)]);
    }
    spawnSync('pkill', ['-9', '-f', `postgres -D ${n.pgdata}`]);
    n.proc = null;
  };
  void run; // kept for diagnostics from a debugger: run(['show', 'state', '--pgdata', monitorData])
  const formation: Formation = {
    serviceUrl: `postgresql://postgres@127.0.0.1:${p1},127.0.0.1:${p2}/${dbname}?target_session_attrs=read-write`,
    nodes,
    nodeUrl,
    primary,
    async acceptsWrites(n: Node) {
      try {
        const r = await query(nodeUrl(n), `SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::bool AS ro`);
        return r[0]?.ro === false;
      } catch { return false; }
    },
    killNode,
    restartNode(n: Node) { n.proc = background(['run', '--pgdata', n.pgdata]); },
    states,
    async stop() {
      for (const p of procs) {
        if (p.pid && p.exitCode === null) { try { process.kill(-p.pid, 'SIGTERM'); } catch { /* gone */ } }
      }
      // Up to 2 s for a clean stop, then whatever is left is killed.
      await waitFor('every process stopped', async () => procs.every((p) => !p.pid || p.exitCode !== null || p.signalCode !== null), 2000).catch(() => undefined);
      for (const p of procs) {
        if (p.pid && p.exitCode === null) { try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ } }
      }
      for (const d of [monitorData, ...nodes.map((n) => n.pgdata)]) spawnSync('pkill', ['-9', '-f', `postgres -D ${d}`]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return { formation, monitor: startMonitor, primary: startPrimary, standby: startStandby };
}
