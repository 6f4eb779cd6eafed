import type { RehearsalRecord } from './rehearsal.service.js';

/** A rehearsal as the operator API and the console show it (`steps` only in the whole report). */
export function rehearsalView(r: RehearsalRecord, withSteps: boolean) {
  const count = (s: string) => r.steps.filter((x) => x.status === s).length;
  return {
    id: r.id, connector: r.connector, kind: r.kind, status: r.status, shop_id: r.shopId, public_url: r.publicUrl,
    passed: count('passed'), failed: count('failed'), skipped: count('skipped'),
    started_at: r.startedAt.toISOString(), finished_at: r.finishedAt ? r.finishedAt.toISOString() : null,
    ...(withSteps ? { steps: r.steps } : {}),
  };
}
