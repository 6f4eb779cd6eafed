/**
 * What one delivery attempt means for its event, and when the next one is due.
 *
 * - any 2xx: delivered;
 * - 5xx, 408, 425, 429 and network errors (refused, reset, timeout, DNS): retried with
 *   exponential backoff and jitter for about 24 hours (RETRY_DELAYS_MS), then dead;
 * - any other answer (3xx, since redirects are not followed; other 4xx) and a URL refused by
 *   the guard at send time: the receiver said no. Retried a few times only
 *   (REFUSED_MAX_ATTEMPTS, a deploy glitch survives), then dead, redeliverable by the operator.
 */
export type AttemptOutcome =
  | { kind: 'delivered' }
  | { kind: 'retryable'; reason: string }
  | { kind: 'refused'; reason: string }
  | { kind: 'permanent'; reason: string };

/**
 * Delay after the n-th failed attempt (index n-1). 1 min doubling to 4 h, then every 4 h:
 * 14 attempts spread over about 24 h 15 min (before jitter).
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_840_000, 7_680_000,
  14_400_000, 14_400_000, 14_400_000, 14_400_000, 14_400_000,
];
/** Attempts in all for retryable failures: the last delay is followed by the last attempt. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Attempts in all when the receiver refuses (3xx, non-retryable 4xx, unsafe URL). */
export const REFUSED_MAX_ATTEMPTS = 3;
/** Jitter: each delay is scaled by a factor in [1 - JITTER, 1 + JITTER). */
export const JITTER = 0.2;

const RETRYABLE_STATUS = new Set([408, 425, 429]);

export function classifyStatus(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status >= 500 || RETRYABLE_STATUS.has(status)) return { kind: 'retryable', reason: `HTTP ${status}` };
  return { kind: 'refused', reason: `HTTP ${status}` };
}

export type EventDecision =
  | { status: 'DELIVERED' }
  | { status: 'PENDING'; nextAttemptAt: Date }
  | { status: 'DEAD' };

/**
 * The event's next state after its `attemptNo`-th attempt (1-based) ended with `outcome`.
 * `random` in [0, 1) and `delays` are injectable so schedules are testable.
 */
export function decide(
  outcome: AttemptOutcome, attemptNo: number, now: Date, random: () => number = Math.random,
  delays: readonly number[] = RETRY_DELAYS_MS,
): EventDecision {
  if (outcome.kind === 'delivered') return { status: 'DELIVERED' };
  if (outcome.kind === 'permanent') return { status: 'DEAD' };
  const max = outcome.kind === 'refused' ? Math.min(REFUSED_MAX_ATTEMPTS, delays.length + 1) : delays.length + 1;
  if (attemptNo >= max) return { status: 'DEAD' };
  const base = delays[Math.min(attemptNo, delays.length) - 1]!;
  const factor = 1 - JITTER + 2 * JITTER * random();
  return { status: 'PENDING', nextAttemptAt: new Date(now.getTime() + Math.round(base * factor)) };
}
