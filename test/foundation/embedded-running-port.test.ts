import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runningPort } from '../../src/db/embedded.js';

/**
 * Every command of a checkout finds the embedded PostgreSQL of its running `npm start`, on
 * whichever port that took (a fallback one when 54320 was busy): the port is read from the
 * server's postmaster.pid, where PostgreSQL writes it on the fourth line.
 */
const dir = mkdtempSync(join(tmpdir(), 'pg-pid-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runningPort', () => {
  it("reads the running server's port from postmaster.pid", () => {
    writeFileSync(join(dir, 'postmaster.pid'), '12345\n/data/pg\n1795880000\n54321\n/data/pg\n127.0.0.1\n  5432001     65538\nready   \n');
    expect(runningPort(dir)).toBe(54321);
  });

  it('is null when no server runs there, or the file is not one PostgreSQL wrote', () => {
    expect(runningPort(join(dir, 'none'))).toBeNull();
    writeFileSync(join(dir, 'postmaster.pid'), '12345\n');
    expect(runningPort(dir)).toBeNull();
  });
});
