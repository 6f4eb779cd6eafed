import { describe, expect, it } from 'vitest';
import { csvAmount, formatAmount, formatMoney } from '../../src/lib/money-format.js';

/** One money format per language on every face (issue 30 item 4): ru `1 234,50 ₽`, en `RUB 1,234.50`. */
const plain = (s: string) => s.replace(/\u00a0/g, ' ');

describe('formatMoney', () => {
  it('writes Russian as 1 234,50 ₽ and English as RUB 1,234.50', () => {
    expect(plain(formatMoney('1234.5', 'ru', 'RUB'))).toBe('1 234,50 ₽');
    expect(plain(formatMoney('1234.5', 'en', 'RUB'))).toBe('RUB 1,234.50');
  });

  it('writes the other currencies of the spec the same way: their sign in Russian, their code in English', () => {
    expect(plain(formatMoney('99999999.99', 'ru', 'USD'))).toBe('99 999 999,99 $');
    expect(plain(formatMoney('1000', 'en', 'EUR'))).toBe('EUR 1,000.00');
    expect(plain(formatMoney('12', 'ru', 'USDT'))).toBe('12,00 USDT');
  });

  it('never shows 8 decimals: a balance is cut to kopecks towards zero', () => {
    expect(plain(formatMoney('1500.12999999', 'en', 'RUB'))).toBe('RUB 1,500.12');
    expect(plain(formatMoney('-0.00000001', 'ru', 'RUB'))).toBe('0,00 ₽');
    expect(plain(formatMoney('-1234.56000000', 'en', 'RUB'))).toBe('-RUB 1,234.56');
    expect(plain(formatMoney('-1234.56', 'ru', 'RUB'))).toBe('-1 234,56 ₽');
  });

  it('keeps digits no float can hold', () => {
    expect(formatAmount('999999999999.99999999', 'en')).toBe('999,999,999,999.99');
  });

  it('CSV cells are plain decimals with two places and the language\'s decimal mark', () => {
    expect(csvAmount('1234.56780000', 'en')).toBe('1234.56');
    expect(csvAmount('-100', 'ru')).toBe('-100,00');
  });
});
