/**
 * The statements the service really runs for one request, with their executed plans: a second
 * service process whose PostgreSQL sessions load auto_explain (PGOPTIONS, read by node-postgres
 * for every connection it opens, Prisma's adapter included), so every statement it executes is
 * logged with EXPLAIN (ANALYZE, BUFFERS) in JSON. A probe makes a few requests one after the
 * other and reads its database's plans from the server log. Buffers and plan shapes do not
 * depend on the machine's load, unlike latency.
 *
 * Needs a local PostgreSQL logging to a file this process can read (GROWTH_PG_LOG, default
 * Debian's /var/log/postgresql/postgresql-15-main.log) and a superuser role (session_preload_libraries).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { startService, type Child } from './proc.js';
import { summarizePlan, type PlanNode } from './plan-summary.js';

export const PG_LOG = process.env.GROWTH_PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';

const AUTO_EXPLAIN = [
  'session_preload_libraries=auto_explain', 'auto_explain.log_min_duration=0', 'auto_explain.log_analyze=on',
  'auto_explain.log_buffers=on', 'auto_explain.log_format=json', 'auto_explain.log_level=LOG',
].map((x) => `-c ${x}`).join(' ');

export interface StatementCost {
  /** The statement's first words, whitespace folded. */
  statement: string;
  executions_per_request: number;
  /** Shared buffers (hit + read) per execution: the median over the probe's requests. */
  buffers: number;
  nodes: string[];
  partitions: Record<string, number>;
  /** Median execution time, ms (noisy: it depends on the machine's load). */
  ms: number;
}

export interface RequestCost { requests: number; buffers_per_request: number; statements: StatementCost[] }

export async function startProbeService(env: Record<string, string>): Promise<Child> {
  return startService('probe-service', 'main', { ...env, PGOPTIONS: AUTO_EXPLAIN });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const fold = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** The plans logged for database `db` from byte `offset` of the log on. */
function plansSince(db: string, offset: number): Array<{ ms: number; text: string; plan: PlanNode }> {
  const size = statSync(PG_LOG).size;
  const buf = Buffer.alloc(Math.max(0, size - offset));
  const fd = openSync(PG_LOG, 'r');
  try { readSync(fd, buf, 0, buf.length, offset); } finally { closeSync(fd); }
  const out: Array<{ ms: number; text: string; plan: PlanNode }> = [];
  const head = new RegExp(`^\\S+ \\S+ \\S+ \\[\\d+\\] \\S*@${db} LOG:  duration: ([\\d.]+) ms  plan:$`);
  const lines = buf.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = head.exec(lines[i]!);
    if (!m) continue;
    const body: string[] = [];
    while (i + 1 < lines.length && lines[i + 1]!.startsWith('\t')) body.push(lines[++i]!.slice(1));
    try {
      const j = JSON.parse(body.join('\n')) as { 'Query Text': string; Plan: PlanNode };
      out.push({ ms: Number(m[1]), text: j['Query Text'], plan: j.Plan });
    } catch { /* a plan cut by the end of the read: the next probe's wait avoids it */ }
  }
  return out;
}

/** Runs `request` `times` times, one after the other, and gives the cost of one request by statement. */
export async function probe(db: string, times: number, request: (i: number) => Promise<void>): Promise<RequestCost> {
  const offset = statSync(PG_LOG).size;
  for (let i = 0; i < times; i++) await request(i);
  // The server writes the log asynchronously to us: wait until it stops growing.
  let last = -1;
  for (let k = 0; k < 50 && statSync(PG_LOG).size !== last; k++) { last = statSync(PG_LOG).size; await new Promise((r) => setTimeout(r, 200)); }
  const byText = new Map<string, Array<{ ms: number; plan: PlanNode }>>();
  for (const p of plansSince(db, offset)) {
    const key = fold(p.text);
    byText.set(key, [...(byText.get(key) ?? []), p]);
  }
  const statements: StatementCost[] = [...byText].map(([text, runs]) => {
    const sums = runs.map((r) => summarizePlan(r.plan));
    const mid = sums.find((s) => s.buffers === median(sums.map((x) => x.buffers)))!;
    return {
      statement: text.slice(0, 90), executions_per_request: Math.round((runs.length / times) * 100) / 100,
      buffers: mid.buffers, nodes: mid.nodes, partitions: mid.partitions, ms: median(runs.map((r) => r.ms)),
    };
  });
  return {
    requests: times,
    buffers_per_request: Math.round(statements.reduce((a, s) => a + s.buffers * s.executions_per_request, 0)),
    statements,
  };
}
