import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startPollLoop as startLoop, type PollLoop, type PollLoopOptions } from '../../src/workers/poll-loop.js';
import { createTestDatabase } from '../helpers/app.js';
import { invariantViolations } from '../../src/db/database-error.js';
import { waitFor } from '../helpers/wait.js';

// The loop driven over a real queue table: claims are UPDATE ... FOR UPDATE SKIP LOCKED with a
// lease, as every worker's are.
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 10 });
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});
// A test that fails before its own stop() leaves no loop running into the next one.
const running: PollLoop[] = [];
const startPollLoop = <T>(o: PollLoopOptions<T>): PollLoop => { const l = startLoop(o); running.push(l); return l; };
afterEach(async () => { await Promise.all(running.splice(0).map((l) => l.stop())); });
beforeEach(async () => {
  await pool.query(`DROP TABLE IF EXISTS jobs; CREATE TABLE jobs (id int PRIMARY KEY, lease_until timestamptz, done_at timestamptz)`);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const addJobs = (n: number, from = 1) => pool.query(`INSERT INTO jobs (id) SELECT g FROM generate_series($1::int, $2::int) g`, [from, from + n - 1]);
const claimJobs = async (limit: number): Promise<number[]> => (await pool.query<{ id: number }>(
  `UPDATE jobs SET lease_until = now() + interval '1 minute'
    WHERE id IN (SELECT id FROM jobs WHERE done_at IS NULL AND (lease_until IS NULL OR lease_until < now())
                  ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING id`, [limit])).rows.map((r) => r.id);
const finishJob = async (id: number, ms = 0) => {
  // The work itself in the database (pg_sleep): what is in flight holds a real connection.
  if (ms > 0) await pool.query('SELECT pg_sleep($1::float8 / 1000)', [ms]);
  await pool.query(`UPDATE jobs SET done_at = clock_timestamp(), lease_until = NULL WHERE id = $1`, [id]);
};
const counts = async () => (await pool.query<{ done: number; leased: number }>(
  `SELECT count(done_at)::int AS done, count(*) FILTER (WHERE done_at IS NULL AND lease_until IS NOT NULL)::int AS leased FROM jobs`)).rows[0]!;

function logSink() {
  const lines: { level: 'error' | 'warn'; obj: Record<string, unknown>; msg: string }[] = [];
  return {
    lines,
    log: {
      error: (obj: Record<string, unknown>, msg: string) => { lines.push({ level: 'error', obj, msg }); },
      warn: (obj: Record<string, unknown>, msg: string) => { lines.push({ level: 'warn', obj, msg }); },
    } as unknown as PollLoopOptions<number>['log'],
  };
}

describe('the poll loop', () => {
  it('idle: one claim per poll interval (jittered within +-20%), nothing processed', async () => {
    const { log, lines } = logSink();
    const claims: number[] = [];
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 100, concurrency: 4,
      claim: async (n) => { claims.push(Date.now()); return claimJobs(n); },
      process: async () => { throw new Error('nothing is due'); },
    });
    await sleep(1050); // time is the subject: the claims an idle loop makes in a window of ~1 s
    await loop.stop();
    // 1 at start, then one per 80..120 ms.
    expect(claims.length).toBeGreaterThanOrEqual(9);
    expect(claims.length).toBeLessThanOrEqual(14);
    const gaps = claims.slice(1).map((t, i) => t - claims[i]!);
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(75);
    expect(lines).toEqual([]);
  });

  it('a job refused by a broken database invariant logs one alert line (alert: true, its constraint) and counts it; the loop goes on', async () => {
    const { log, lines } = logSink();
    const before = (await invariantViolations.get()).values.find((v) => v.labels.constraint === 'payouts_amounts_check')?.value ?? 0;
    await addJobs(2);
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 10_000, claim: claimJobs,
      process: async (id) => {
        if (id === 1) {
          await pool.query(`DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = 'check_violation', CONSTRAINT = 'payouts_amounts_check'; END $$`);
        }
        await finishJob(id);
      },
    });
    await waitFor(async () => (await counts()).done >= 1, 'the job done', 3000, 10);
    await loop.stop();
    expect(lines).toEqual([{ level: 'error', msg: expect.stringContaining('payouts_amounts_check'),
      obj: expect.objectContaining({ alert: true, constraint: 'payouts_amounts_check', money: true, where: 'jobs' }) }]);
    const after = (await invariantViolations.get()).values.find((v) => v.labels.constraint === 'payouts_amounts_check')?.value ?? 0;
    expect(after).toBe(before + 1);
  });

  it('wake() ends the nap at once: a job added during a 10 s nap is done in well under a second', async () => {
    const { log } = logSink();
    let claims = 0;
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 10_000, claim: async (n) => { const ids = await claimJobs(n); claims++; return ids; }, process: (id) => finishJob(id),
    });
    // An empty claim is followed at once by the nap (no await between them).
    await waitFor(() => claims >= 1, 'the first (empty) claim, then the 10 s nap', 5000, 5);
    await addJobs(1);
    const t0 = Date.now();
    loop.wake();
    await waitFor(async () => (await counts()).done >= 1, 'the job added during the nap done', 3000, 10);
    expect(Date.now() - t0).toBeLessThan(1000);
    await loop.stop();
  });

  it('a freed slot wakes the loop: 24 jobs of 100 ms with 4 slots and a 10 s poll interval drain in ~0.6 s, never more than 4 in flight', async () => {
    await addJobs(24);
    const { log } = logSink();
    let inFlight = 0;
    let most = 0;
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 10_000, concurrency: 4, claim: claimJobs,
      process: async (id) => { most = Math.max(most, ++inFlight); try { await finishJob(id, 100); } finally { inFlight--; } },
    });
    const t0 = Date.now();
    await waitFor(async () => (await counts()).done >= 24, 'all 24 jobs done', 8000, 10);
    const took = Date.now() - t0;
    await loop.stop();
    expect((await counts()).done).toBe(24);
    expect(took).toBeLessThan(3000);
    expect(most).toBe(4);
  });

  it('by default a failed claim is tried again 1 s, 2 s, then every 4 s: a worker finds a database back (a failover\'s new primary) within 4 s', async () => {
    const { log, lines } = logSink();
    const loop = startPollLoop<number>({
      name: 'away', log, pollMs: 20,
      claim: async () => { throw Object.assign(new Error('no PostgreSQL server accepting writes'), { code: '57P03' }); },
      process: async () => {},
    });
    await waitFor(() => lines.length >= 4, 'four failed tries', 15_000, 20);
    await loop.stop();
    expect(lines.slice(0, 4).map((l) => l.obj.retryInMs)).toEqual([1000, 2000, 4000, 4000]);
  });

  it('a database error backs off (one logged line per try, waits doubling to the max), then work resumes', async () => {
    await pool.query('DROP TABLE jobs');
    const { log, lines } = logSink();
    const tries: number[] = [];
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 20, backoffMs: { first: 50, max: 200 },
      claim: async (n) => { tries.push(Date.now()); return claimJobs(n); },
      process: (id) => finishJob(id),
    });
    // Tries at 0, 50, 150, 350, 550, ...: six of them, each failed and logged.
    await waitFor(() => tries.length >= 6 && lines.length >= 6, 'six failed tries, each logged', 10_000, 5);
    // A try may be in flight at this instant (its query sent, not yet failed): its line comes when
    // it fails, well before the next try (the waits are 200 ms by now).
    await waitFor(() => lines.length >= tries.length, 'the line of each try so far', 1000, 5);
    const failed = tries.length;
    const gaps = tries.slice(1).map((t, i) => t - tries[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
    expect(gaps[2]).toBeGreaterThanOrEqual(190);
    // Never a busy loop (a 20 ms poll would try every 20 ms), and the waits stop doubling at the max.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(45);
    expect(Math.max(...gaps)).toBeLessThan(300);
    expect(lines.length).toBe(failed);
    expect(lines.every((l) => l.level === 'error' && l.msg === 'jobs: claim failed' && typeof l.obj.retryInMs === 'number')).toBe(true);
    expect((lines[0]!.obj.err as { code?: string }).code).toBe('42P01'); // relation "jobs" does not exist
    // The database is back: the loop goes on by itself.
    await pool.query(`CREATE TABLE jobs (id int PRIMARY KEY, lease_until timestamptz, done_at timestamptz)`);
    await addJobs(3);
    await waitFor(async () => (await counts()).done >= 3, '3 jobs done', 3000, 10);
    expect((await counts()).done).toBe(3);
    await loop.stop();
    expect(lines.length).toBeLessThanOrEqual(failed + 1);
  });

  it('an item that gives its slot back lets the loop start another while it still runs; stop() still waits for it', async () => {
    await addJobs(3);
    const { log, lines } = logSink();
    const started: number[] = [];
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 20, concurrency: 1,
      // Job 1 gives its slot back at once and runs on for 600 ms; the others hold theirs.
      process: async (id, giveBackSlot) => { started.push(id); if (id === 1) giveBackSlot(); await finishJob(id, id === 1 ? 600 : 50); },
      claim: claimJobs,
    });
    // Jobs 2 and 3 take 50 ms each, job 1 600 ms.
    await waitFor(async () => (await counts()).done >= 2, 'two jobs done', 5000, 10);
    // One slot, yet job 2 started (and finished) while job 1 runs; job 3 waited for job 2's slot.
    expect(started).toEqual([1, 2, 3]);
    expect((await counts()).done).toBe(2);
    expect(loop.inFlight).toBe(1);
    await loop.stop();
    expect(await counts()).toEqual({ done: 3, leased: 0 });
    expect(lines).toEqual([]);
  });

  it('stop() during work: no new claim, the work in flight finishes, nothing logged', async () => {
    await addJobs(10);
    const { log, lines } = logSink();
    let claimsAfterStop = 0;
    let stopping = false;
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 20, concurrency: 2,
      claim: async (n) => { if (stopping) claimsAfterStop++; return claimJobs(n); },
      process: (id) => finishJob(id, 300),
    });
    await waitFor(() => loop.inFlight === 2, 'two jobs in flight', 5000, 5);
    stopping = true;
    const t0 = Date.now();
    await loop.stop();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(loop.inFlight).toBe(0);
    expect(claimsAfterStop).toBe(0);
    expect(await counts()).toEqual({ done: 2, leased: 0 });
    expect(lines).toEqual([]);
  });

  it('stop() while a claim is running gives back what it claimed (release), and runs onStop once after the work', async () => {
    await addJobs(5);
    const { log, lines } = logSink();
    let claimStarted!: () => void;
    const started = new Promise<void>((r) => { claimStarted = r; });
    const released: number[][] = [];
    let onStops = 0;
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 20, concurrency: 4,
      // A slow claim: stop() arrives while it runs.
      claim: async (n) => { claimStarted(); await pool.query('SELECT pg_sleep(0.2)'); return claimJobs(n); },
      process: (id) => finishJob(id),
      release: async (ids) => { released.push(ids); await pool.query('UPDATE jobs SET lease_until = NULL WHERE id = ANY($1::int[])', [ids]); },
      onStop: async () => { onStops++; },
    });
    await started;
    await Promise.all([loop.stop(), loop.stop()]);
    expect(released.map((ids) => [...ids].sort())).toEqual([[1, 2, 3, 4]]);
    expect(await counts()).toEqual({ done: 0, leased: 0 });
    expect(onStops).toBe(1);
    expect(lines).toEqual([]);
  });

  it('stop() waits for the work in flight at most stopTimeoutMs; the lease stays (the work may still land), one warning, no error', async () => {
    await addJobs(1);
    const { log, lines } = logSink();
    let failedLate = false;
    const loop = startPollLoop<number>({
      name: 'jobs', log, pollMs: 20, stopTimeoutMs: 200,
      process: async (id) => { await finishJob(id, 1500); failedLate = true; throw new Error('failed after the bound'); },
      claim: claimJobs,
    });
    await waitFor(() => loop.inFlight === 1, 'the job in flight', 5000, 5);
    const t0 = Date.now();
    await loop.stop();
    expect(Date.now() - t0).toBeLessThan(500);
    expect(await counts()).toEqual({ done: 0, leased: 1 });
    // The work lands after the bound and fails: that failure, once the loop has heard it, logs nothing.
    await waitFor(() => failedLate, 'the job failing after the bound', 5000, 10);
    await new Promise((r) => setImmediate(r));
    expect((await counts()).done).toBe(1);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([['warn', 'jobs: stopped with work still in flight']]);
  });
});
