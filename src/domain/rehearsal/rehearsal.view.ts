import { REHEARSAL_PROVIDERS } from './rehearsal.providers.js';
import type { RehearsalRecord } from './rehearsal.service.js';

/**
 * A rehearsal as the operator API and the console show it (`steps` only in the whole report).
 * `findings`: each question the providers' documents leave open for this kind, as the run
 * answered it, or `open` (docs/adr/0135).
 */
export function rehearsalView(r: RehearsalRecord, withSteps: boolean) {
  const count = (s: string) => r.steps.filter((x) => x.status === s).length;
  const questions = REHEARSAL_PROVIDERS[r.kind]?.questions ?? [];
  const found = r.findings as Record<string, unknown>;
  return {
    id: r.id, connector: r.connector, kind: r.kind, status: r.status, shop_id: r.shopId, public_url: r.publicUrl,
    passed: count('passed'), failed: count('failed'), skipped: count('skipped'),
    started_at: r.startedAt.toISOString(), finished_at: r.finishedAt ? r.finishedAt.toISOString() : null,
    findings: Object.fromEntries(questions.map((q) => [q, found[q] ?? 'open'])) as Record<string, string | boolean>,
    ...(withSteps ? { steps: r.steps } : {}),
  };
}
