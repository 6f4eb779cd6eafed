import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, setupTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => { t = await setupTestApp(); });
afterAll(async () => { await t.close(); });

const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names of a PromQL expression: identifiers that are not a function (followed by a
 * parenthesis), a keyword, a label (inside {} or a by/without/on/ignoring list), a string, a
 * duration or a template ({{ $value }}).
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith('(') || PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Metric names /metrics declares (`# TYPE name kind`), with a histogram's series names. */
function exposed(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    out.add(m[1]!);
    if (m[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(`${m[1]}${s}`);
  }
  return out;
}

const rules = (parse(readFileSync('deploy/prometheus/alerts.yml', 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> })
  .groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync('deploy/grafana/payment-service.json', 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };

describe('alert rules and the dashboard name only metrics the service exposes', () => {
  it('every metric in deploy/prometheus/alerts.yml and deploy/grafana/ is on a real /metrics', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(r.statusCode).toBe(200);
    const names = exposed(r.body);
    const missing: string[] = [];
    for (const rule of rules) for (const n of metricNames(rule.expr)) if (!names.has(n)) missing.push(`${rule.alert}: ${n}`);
    for (const p of dashboard.panels) for (const q of p.targets) for (const n of metricNames(q.expr)) if (!names.has(n)) missing.push(`${p.title}: ${n}`);
    expect(missing).toEqual([]);
  });

  it('the rules cover what an operator must hear of, and each has a runbook section in docs/operations.md', () => {
    const used = new Set(rules.flatMap((x) => metricNames(x.expr)));
    for (const n of ['payments_attention_oldest_open_age_seconds', 'payments_provider_conflicts_total', 'outbox_dead_events', 'payments_reconcile_overdue_seconds',
      'connector_calls_total', 'outbox_oldest_pending_age_seconds', 'db_pool_waiting_requests', 'payouts_process_oldest_age_seconds', 'payments_receipt_failures_total']) expect(used, n).toContain(n);
    const ops = readFileSync('docs/operations.md', 'utf8');
    const anchors = new Set([...ops.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').trim().replace(/ /g, '-')));
    for (const rule of rules as Array<{ alert: string; annotations?: { runbook?: string } }>) {
      const anchor = rule.annotations?.runbook?.split('#')[1];
      expect(anchor && anchors.has(anchor), `${rule.alert}: ${rule.annotations?.runbook}`).toBe(true);
    }
  });

  it('the name reader skips functions, labels, keywords and durations', () => {
    expect(metricNames('sum by (connector) (rate(connector_calls_total{outcome=~"refused|unknown"}[5m])) / sum by (connector) (rate(connector_calls_total[5m])) > 0.2 and max(x_y) > 1'))
      .toEqual(['connector_calls_total', 'x_y']);
    expect(metricNames('histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))')).toEqual(['http_request_duration_seconds_bucket']);
  });
});
