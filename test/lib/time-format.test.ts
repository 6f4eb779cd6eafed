import { describe, expect, it } from 'vitest';
import { formatDateTime, formatDateTimeIntl } from '../../src/lib/time.js';

// formatDateTime caches each zone's offset per quarter hour instead of asking Intl every time;
// it must write exactly what Intl writes, across daylight-saving transitions and odd offsets.
const ZONES = ['Europe/Moscow', 'UTC', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/St_Johns', 'Pacific/Chatham', 'Asia/Kolkata'];

describe('formatDateTime', () => {
  it('writes what Intl writes for 20,000 instants from 1971 to 2040 in zones with DST and quarter-hour offsets', () => {
    let seed = 42;
    const rnd = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
    const from = Date.UTC(1971, 0, 1);
    const to = Date.UTC(2040, 0, 1);
    for (let i = 0; i < 20_000; i++) {
      const d = new Date(from + Math.floor(rnd() * (to - from)));
      const tz = ZONES[i % ZONES.length]!;
      expect(formatDateTime(d, tz), `${d.toISOString()} ${tz}`).toBe(formatDateTimeIntl(d, tz));
    }
  });

  it('is exact on both sides of transitions, to the millisecond', () => {
    const edges: Array<[string, number]> = [
      ['America/New_York', Date.UTC(2026, 2, 8, 7, 0, 0)], // 02:00 EST -> 03:00 EDT
      ['America/New_York', Date.UTC(2026, 10, 1, 6, 0, 0)], // 02:00 EDT -> 01:00 EST
      ['Europe/London', Date.UTC(2026, 2, 29, 1, 0, 0)],
      ['Australia/Lord_Howe', Date.UTC(2026, 3, 4, 15, 0, 0)], // a half-hour shift
      ['Europe/Moscow', Date.UTC(2011, 2, 26, 23, 0, 0)], // the last Moscow transition to +04
      ['Europe/Moscow', Date.UTC(2014, 9, 25, 22, 0, 0)], // back to +03
    ];
    for (const [tz, t] of edges) {
      for (const delta of [-3_600_001, -1, 0, 1, 999, 1000, 3_600_000]) {
        const d = new Date(t + delta);
        expect(formatDateTime(d, tz), `${d.toISOString()} ${tz}`).toBe(formatDateTimeIntl(d, tz));
      }
    }
  });

  it('writes Moscow time for the service zone', () => {
    expect(formatDateTime(new Date('2026-11-26T12:34:56.789Z'), 'Europe/Moscow')).toBe('2026-11-26 15:34:56');
  });
});
