import { describe, expect, it } from 'vitest';
import { newBillId, newId, randomId } from '../../src/lib/ids.js';

// Ids come from a pool of CSPRNG bytes refilled 4 KiB at a time: across refills they must stay
// unique, of the right length and alphabet, and uniform over it.
describe('random ids', () => {
  it('are base62 of the asked length, across many pool refills, and never repeat', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50_000; i++) {
      const id = i % 2 ? newBillId() : newId();
      expect(id).toMatch(i % 2 ? /^[0-9A-Za-z]{10}$/ : /^[0-9A-Za-z]{16}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(50_000);
  });

  it('use every character about equally often (rejection sampling keeps base62 uniform)', () => {
    const counts = new Map<string, number>();
    const n = 62 * 4000;
    for (const c of randomId(n)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 4000 expected per character; a bias of b % 62 without rejection would put 0-9 and A-Z
    // at ~4129 and the rest at ~3871 (8 extra byte values out of 256 for the first 8 only).
    for (const [, k] of counts) expect(Math.abs(k - 4000)).toBeLessThan(400);
  });
});
