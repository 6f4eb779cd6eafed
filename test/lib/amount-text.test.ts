import { describe, expect, it } from 'vitest';
import { readNumber, peopleAmountText, AMOUNT } from '../../src/lib/amount-text.js';
import { keepNumberText } from '../../src/lib/json-number-text.js';

describe('readNumber: the one amount format', () => {
  it('takes digits with an optional dot and at most 2 decimals, as text or a JSON number already in its shortest form', () => {
    for (const x of ['0', '10', '10.5', '10.50', '99999999.99', '000.10', 150.5, 99, 0.01]) expect(readNumber(x)?.toFixed(2), String(x)).toBeDefined();
    expect(readNumber('150.50')!.toFixed(2)).toBe('150.50');
  });

  it('refuses an exponent, a sign, a bare dot, spaces, a third decimal, other marks and absurd lengths', () => {
    for (const x of ['1e3', '1E2', '1e+3', ' 10', '10 ', '10.', '.5', '+10', '-5', '10.001', '1,5', '1 0', '0x10', 'NaN', 'Infinity', '', '9'.repeat(16), 1e21, -5, Number.NaN, true, null]) {
      expect(readNumber(x), JSON.stringify(x)).toBeNull();
    }
  });

  it('a signed format takes one leading minus; places follow the field', () => {
    expect(readNumber('-5.12345678', { places: 8, signed: true })!.toFixed()).toBe('-5.12345678');
    for (const x of ['--5', '+5', '-5.123456789', '- 5']) expect(readNumber(x, { places: 8, signed: true }), x).toBeNull();
    expect(readNumber('90.123456', { places: 6 })!.toFixed()).toBe('90.123456');
    expect(readNumber('10.5', { places: 0 })).toBeNull();
    expect(readNumber('-5', AMOUNT)).toBeNull();
  });
});

describe('peopleAmountText: people\'s marks to the wire text, nothing guessed', () => {
  it('groups of three, a decimal comma (ru) or dot, surrounding spaces', () => {
    expect(peopleAmountText(' 1 500,50 ', 'ru')).toBe('1500.50');
    expect(peopleAmountText('1\u00a0500,5', 'ru')).toBe('1500.5');
    expect(peopleAmountText('1,500.50', 'en')).toBe('1500.50');
    expect(peopleAmountText('1,500', 'en')).toBe('1500');
    expect(peopleAmountText('1.500,00', 'ru')).toBe('1500.00');
  });
  it('leaves signs, exponents and bad groups as typed, for the format to refuse', () => {
    for (const x of ['-1 500,00', '+10', '1e3', '1 0', '10.']) expect(readNumber(peopleAmountText(x, 'ru')), x).toBeNull();
  });
});

describe('keepNumberText: a JSON number keeps the digits the client sent', () => {
  it('a number not in its shortest form becomes its text; shortest ones stay numbers', () => {
    expect(JSON.parse(keepNumberText('{"a":1e3,"b":1E2,"c":100.000,"d":150.5,"e":99,"f":100.0,"g":-0,"h":12345678901234567890,"i":[1e-2,2]}'))).toEqual({
      a: '1e3', b: '1E2', c: '100.000', d: 150.5, e: 99, f: '100.0', g: '-0', h: '12345678901234567890', i: ['1e-2', 2],
    });
  });
  it('leaves strings (escapes included) and text without such numbers untouched; what is not JSON stays not JSON', () => {
    const s = '{"id":"1e3 \\" 100.000","n":5}';
    expect(keepNumberText(s)).toBe(s);
    expect(JSON.parse(keepNumberText('{"k":"a\\\\","v":1e3}'))).toEqual({ k: 'a\\', v: '1e3' });
    for (const bad of ['{"a":1e}', '{"a":01}', '{"a":1.}', '{"a":-}', '{"a":1e3e}']) expect(() => JSON.parse(keepNumberText(bad)), bad).toThrow();
  });
});
