#!/usr/bin/env node
// Rewrites every citation of the former journal docs/decisions.md to the record in docs/adr/ that
// holds the decision now. Applied migrations are left alone: the migrator stores each file's checksum
// and refuses to start when an applied migration's file changed, so their comments keep citing the
// journal's section names, which docs/decisions.md maps to records. Idempotent: run it again after merging a branch that added citations of
// the old form (`node scripts/decisions-to-adr.mjs`); it prints any citation it cannot map.
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const adr = (n) => {
  const f = execFileSync('git', ['ls-files', 'docs/adr'], { encoding: 'utf8' }).split('\n').find((p) => p.startsWith(`docs/adr/${n}-`));
  if (!f) throw new Error(`no record ${n}`);
  return f;
};

// Section names of the journal (normalised: whitespace collapsed, "(issue ..)"/"(session ..)" dropped).
const BY_NAME = {
  "A provider's answer after a final state": '0021',
  'Partitions and retention': '0047',
  'Public clients': '0001',
  'Test mode': '0029',
  'Domain core': '0002',
  'Deployment profiles and the wall between live and test': '0030',
  'Mail has its own outbox': '0038',
  'Fiscal receipts': '0026',
  'The latest payment of a bill': '0011',
  'The latest payment of a bill: the bill records it': '0011',
  'Payer fields after a decline': '0015',
  'Test objects in the operator console': '0040',
  'Payment ids name their month': '0012',
  'CSV cells neutralized': '0050',
  'The outbox cap lends idle slots': '0043',
  'A T-Bank decline waits for its reason': '0025',
  'People: operators, roles, audit': '0031',
  'People': '0031',
  'Build and run': '0045',
  'Build, stop, processes and the first hour': '0044',
  'API in the wild': '0006',
  'One bundled file per long-running entry': '0044',
  'One bundle per long-running entry; young generation capped': '0044',
  'Test run time': '0055',
  'V8 `--liftoff-only`': '0053',
  'Growth bench seeding': '0054',
  'Imports point one way': '0051',
  'Cabinet lists, audit trail and provider notifications through services': '0051',
  'Merchant cabinet': '0033',
  'Operator console': '0033',
};
// Citations without a section name: file -> [text that identifies the line, record].
const BARE = {
  'src/page/index.ts': [['Fail URL instead of the form again', '0015']],
  'src/domain/payment/payment.service.ts': [['a receipt needs an e-mail or a phone', '0026'], ['formulas in', '0010'], ["hands a payer who keeps being declined back to the shop", '0015']],
  'src/admin/routes/adjustments.ts': [["carrying the ledger's key", '0039']],
  'src/admin/routes/chargebacks.ts': [['The ledger cannot hold a debt', '0019']],
  'src/domain/providers/sandbox.ts': [['JSON-mode shortcut', '0028']],
  'src/domain/merchant/test-twin.ts': [['Test mode (PROVIDERS.md', '0029']],
  'test/page/decline-on-form.test.ts': [["shop's Fail URL", '0015']],
  'test/payout/operator-flow.test.ts': [['in the audit trail, written with it', '0032']],
  'docs/clients.md': [['They cannot both be served', '0008']],
  'docs/performance.md': [['leaves the race', '0011']],
};
const PER_FILE_NAME = { 'prisma/migrations/20261123040000_verify_sbp_banks/migration.sql': { 'Public clients': '0008' } };

let found = '';
try {
  found = execFileSync('git', ['grep', '-l', '-e', 'decisions.md', '--', '*.ts', '*.md', '*.sql', '*.eta', '*.mjs', '*.prisma'], { encoding: 'utf8' });
} catch (e) {
  if (e.status !== 1) throw e; // 1: nothing cites the journal any more
}
const files = found
  .split('\n').filter((f) => f && f !== 'docs/decisions.md' && !f.startsWith('docs/adr/') && !f.startsWith('prisma/migrations/') && f !== 'scripts/decisions-to-adr.mjs');
const norm = (s) => s.replace(/\s*(?:\*|\/\/\/?|--|#)?\s*\n\s*(?:\*|\/\/\/?|--|#)?\s*/g, ' ').replace(/\s+/g, ' ')
  .replace(/\s*\((?:issues? \d+[^)]*|session \d+[^)]*|session\s*\d+)\)/g, '').trim();
const left = [];
for (const f of files) {
  let t = readFileSync(f, 'utf8');
  const before = t;
  // docs/decisions.md "Name" (and "Name" and "Other"), the name possibly split over comment lines;
  // also `docs/decisions.md`, "Name" and the split form `docs/\n * decisions.md "Name"`.
  const cite = /`?docs\/(?:\s*(?:\*|\/\/\/?|--|#)?\s*\n\s*(?:\*|\/\/\/?|--|#)?\s*)?decisions\.md`?,?\s*(?:(?:\*|\/\/\/?|--|#)\s*)?"([^"]+)"(?:(?: and |, )"([^"]+)")?/g;
  t = t.replace(cite, (m, a, b) => {
    const names = [a, b].filter(Boolean).map(norm);
    const nums = [...new Set(names.map((n) => PER_FILE_NAME[f]?.[n] ?? BY_NAME[n]))];
    if (nums.some((n) => !n)) { left.push(`${f}: ${m}`); return m; }
    return nums.map(adr).join(', ');
  });
  // "Name" in docs/decisions.md
  t = t.replace(/"([^"]+)" in docs\/decisions\.md/g, (m, a) => {
    const n = BY_NAME[norm(a)];
    if (!n) { left.push(`${f}: ${m}`); return m; }
    return adr(n);
  });
  if (BARE[f]) {
    const lines = t.split('\n');
    for (const [hint, n] of BARE[f]) {
      const i = lines.findIndex((l, k) => (l.includes(hint) || (lines[k + 1] ?? '').includes(hint) || (lines[k - 1] ?? '').includes(hint)) && /decisions\.md/.test(l));
      if (i < 0) continue; // already rewritten (a line still citing the journal is reported below)
      lines[i] = lines[i].replace(/docs\/decisions\.md(?:, (?:session|issue) \d+)?/, adr(n));
    }
    t = lines.join('\n');
  }
  // The layout line that lists the docs folder.
  t = t.replace('architecture.md, decisions.md, reliability.md', 'architecture.md, adr/, reliability.md');
  if (t !== before) writeFileSync(f, t);
  for (const [k, l] of t.split('\n').entries()) if (/decisions\.md/.test(l)) left.push(`${f}:${k + 1}: ${l.trim()}`);
}
if (left.length) { console.error(`not rewritten:\n${left.join('\n')}`); process.exitCode = 1; }
