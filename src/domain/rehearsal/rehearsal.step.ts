/** One step of a rehearsal's report (docs/adr/0104-connector-rehearsals.md). */
export type StepStatus = 'passed' | 'failed' | 'skipped';
export interface RehearsalStep { name: string; status: StepStatus; detail: string; raw: unknown }
export type RehearsalStatus = 'running' | 'passed' | 'failed';

/** The steps, in the order they run. */
export const STEP_NAMES = ['transport', 'credentials', 'payment', 'notification', 'receipt', 'two_stage', 'refund', 'sbp', 'saved_card', 'payout'] as const;

const SECRET_KEY = /password|secret|token|authorization|rebill|providerid/i;

/**
 * A provider's answer as the report keeps it: secret-named fields and every secret value of the
 * connector replaced by ********, card numbers cut to first 6 and last 4.
 */
export function masked(raw: unknown, secrets: readonly string[]): unknown {
  const walk = (v: unknown, key = ''): unknown => {
    if (v === null || v === undefined) return v ?? null;
    if (typeof v === 'object' && typeof (v as { toFixed?: unknown }).toFixed === 'function' && !(typeof v === 'number')) return String(v);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (typeof v === 'object') return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x, k)]));
    if (typeof v !== 'string') return v;
    if (SECRET_KEY.test(key)) return '********';
    let s = v;
    for (const secret of secrets) if (secret.length >= 4) s = s.split(secret).join('********');
    return s.replace(/\b(\d{6})\d{3,9}(\d{4})\b/g, '$1******$2');
  };
  return walk(raw);
}
