import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem, release } from 'node:os';
import { adminQuery } from './pg.js';

export interface MachineInfo { cpu_model: string; cores: number; memory_gb: number; kernel: string; node: string; postgres: string; pgbench: string | null;
  /** 1-minute load average when the run started: above the core count, other work shared the machine. */
  load_avg_at_start: number }

export async function machineInfo(): Promise<MachineInfo> {
  const pgv = await adminQuery<{ v: string }>("SELECT current_setting('server_version') AS v").then((r) => r.rows[0]!.v).catch(() => 'unknown');
  let pgbench: string | null = null;
  try { pgbench = execFileSync('pgbench', ['--version'], { encoding: 'utf8' }).trim(); } catch { /* not installed */ }
  return {
    cpu_model: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_gb: Math.round(totalmem() / 2 ** 30 * 10) / 10,
    kernel: release(),
    node: process.version,
    postgres: pgv,
    pgbench,
    load_avg_at_start: Math.round(loadavg()[0]! * 100) / 100,
  };
}
