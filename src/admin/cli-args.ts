/**
 * The operator CLI's command line: arguments to flags and positionals, flags to a JSON body, and
 * the call a verb makes (src/admin/cli.ts holds the verbs).
 */
import { userInfo } from 'node:os';

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to /admin/v1. */
  path: string;
  body?: Record<string, Json>;
  query?: Record<string, string>;
  /** Exit 1 when this says the answer is a failure even with a 2xx (ledger drift). */
  failed?: (body: Record<string, unknown>) => boolean;
  /** Printed with a successful answer (a password the CLI generated: shown this once). */
  extra?: Record<string, Json>;
  /** A run that goes on after the answer: this path is read until it answers other than 202, and that answer is the result. */
  follow?: (body: Record<string, unknown>) => string;
  /** Printed instead of the JSON (the verb's own human form; `--json` keeps the JSON). */
  text?: (body: Record<string, unknown>) => string;
}

export class UsageError extends Error {}

export interface Parsed { positional: string[]; flags: Record<string, string | true> }

/** `--key value`, `--key=value`, `--flag` (true); anything else is positional. */
export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') { positional.push(...argv.slice(i + 1)); break; }
    if (!a.startsWith('--')) { positional.push(a); continue; }
    const eq = a.indexOf('=');
    if (eq > 0) { flags[a.slice(2, eq)] = a.slice(eq + 1); continue; }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) { flags[a.slice(2)] = next; i++; } else flags[a.slice(2)] = true;
  }
  return { positional, flags };
}

/** Command-line text to JSON: true/false, null; everything else stays a string (money!). */
export function cliValue(v: string | true): Json {
  if (v === true || v === 'true') return true;
  if (v === 'false') return false;
  if (v === 'null') return null;
  return v;
}

const snake = (k: string) => k.replace(/-/g, '_');

/** Flags to a JSON body: `--payout-daily-limit 5` -> payout_daily_limit; prefixes nest. */
export function flagsBody(flags: Parsed['flags'], nest: Record<string, string> = {}): Record<string, Json> {
  const body: Record<string, Json> = {};
  for (const [k, v] of Object.entries(flags)) {
    if (k === 'help') continue;
    const prefix = Object.keys(nest).find((p) => k.startsWith(`${p}-`));
    if (prefix) {
      const group = nest[prefix]!;
      const inner = (body[group] ??= {}) as Record<string, Json>;
      inner[snake(k.slice(prefix.length + 1))] = cliValue(v);
    } else {
      body[snake(k)] = cliValue(v);
    }
  }
  return body;
}

export function need(p: Parsed, n: number, usage: string): string[] {
  if (p.positional.length < n) throw new UsageError(`usage: npm run admin -- ${usage}`);
  return p.positional.slice(0, n).map((x) => encodeURIComponent(x));
}

export function requireFlags(p: Parsed, names: string[], usage: string): void {
  const missing = names.filter((n) => p.flags[n] === undefined);
  if (missing.length > 0) throw new UsageError(`missing --${missing.join(', --')}; usage: npm run admin -- ${usage}`);
}

/**
 * Who runs the CLI, for the audit trail (`cli:<user>`): the person behind sudo when there is
 * one (SUDO_USER), else the OS account; the environment's USER when the account has no name.
 */
export function cliUser(env: NodeJS.ProcessEnv = process.env): string {
  let os: string | undefined;
  try { os = userInfo().username; } catch { os = undefined; }
  const u = env.SUDO_USER || os || env.USER || env.LOGNAME || 'unknown';
  return u.replace(/[^\w.@-]/g, '_').slice(0, 64);
}
