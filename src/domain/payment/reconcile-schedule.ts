import type { Config } from '../../config.js';

/**
 * When to ask a provider about an operation in PROCESS after `attempts` questions: the first
 * delay doubling up to the max; the first question never comes before a creation call could
 * have timed out (so reconciliation does not ask about a call still running).
 */
export function nextCheckDelayMs(config: Pick<Config, 'reconcileFirstCheckMs' | 'reconcileMaxDelayMs' | 'connectorTimeoutMs'>, attempts: number): number {
  const d = Math.min(config.reconcileFirstCheckMs * 2 ** Math.min(attempts, 30), config.reconcileMaxDelayMs);
  return attempts === 0 ? Math.max(d, config.connectorTimeoutMs + 1000) : d;
}
