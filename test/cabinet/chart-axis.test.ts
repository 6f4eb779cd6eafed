import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { turnoverSvg } from '../../src/cabinet/chart.js';

/** The turnover chart's axis speaks the reader's language: Russian readers never see "1.3k". */
const axis = (svg: string) => [...svg.matchAll(/class="axis">([^<]*)</g)].map((m) => m[1]!.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))));

describe('the turnover chart axis', () => {
  const points = [{ day: '2026-11-01', total: new Decimal('1300') }, { day: '2026-11-02', total: new Decimal('5200') }];
  it('in Russian uses the Russian compact notation ("тыс.", a decimal comma)', () => {
    const labels = axis(turnoverSvg(points, 'Оборот', 'RUB', 'ru'));
    expect(labels.some((l) => /^\d+(,\d)?\sтыс\.$/u.test(l))).toBe(true);
    expect(labels.join(' ')).not.toMatch(/\d\.\d|k\b/);
  });
  it('in English uses the English compact notation', () => {
    const labels = axis(turnoverSvg(points, 'Turnover', 'RUB', 'en'));
    expect(labels.some((l) => /^\d+(\.\d)?K$/.test(l))).toBe(true);
  });
});
