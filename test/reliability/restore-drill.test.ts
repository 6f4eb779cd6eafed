import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * docs/operations.md "Backup and point-in-time restore": the drill script builds a cluster with
 * WAL archiving, books money through the operator CLI, takes a base backup, books more, marks a
 * restore point, makes a mistake, restores to the point in a new cluster and checks the balance
 * and the ledger there.
 */
describe('restore drill', () => {
  it('a base backup plus archived WAL restores the database to a restore point: the mistake is gone, the ledger verifies', () => {
    const r = spawnSync('bash', ['scripts/restore-drill.sh'], { encoding: 'utf8', timeout: 540_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    expect(r.status, out).toBe(0);
    expect(out).toContain('restore drill: passed: restored to the restore point (RUB available 1250.00000000, the mistake gone), ledger verified');
  }, 600_000);
});
