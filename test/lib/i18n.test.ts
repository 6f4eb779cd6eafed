import { describe, expect, it } from 'vitest';
import { fill, negotiateLang, translator, type Dictionary } from '../../src/lib/i18n.js';

describe('negotiateLang: the one choice of language', () => {
  it('takes the language the person chose (query, form field, cookie, the bill\'s locale) over the header', () => {
    expect(negotiateLang('en', 'ru')).toBe('ru');
    expect(negotiateLang('ru', 'en')).toBe('en');
  });

  it('ignores a chosen value that is no language of ours and falls back to the header', () => {
    expect(negotiateLang('ru-RU,ru;q=0.9', 'de')).toBe('ru');
    expect(negotiateLang('ru', ['en'])).toBe('ru');
  });

  it('ranks Accept-Language by q-value, ties by order, and refuses a range at q=0', () => {
    expect(negotiateLang('en;q=0.4, ru;q=0.8')).toBe('ru');
    expect(negotiateLang('de-DE, ru-RU, en')).toBe('ru');
    expect(negotiateLang('ru;q=0, en-GB;q=0.1')).toBe('en');
    expect(negotiateLang('ru;q=0')).toBe('en');
  });

  it('speaks English when nothing names ru or en', () => {
    expect([negotiateLang(undefined), negotiateLang(''), negotiateLang('de, fr;q=0.8')]).toEqual(['en', 'en', 'en']);
  });
});

describe('fill and translator: the one lookup', () => {
  const dict: Dictionary = { en: { hi: 'Hello, {name}', only_en: 'English only' }, ru: { hi: 'Привет, {name}' } };

  it('looks the key up in the person\'s language and fills its placeholders', () => {
    expect(translator(dict, 'ru')('hi', { name: 'Анна' })).toBe('Привет, Анна');
    expect(translator(dict, 'en')('hi', { name: 'Anna' })).toBe('Hello, Anna');
  });

  it('falls back to English, then to the key itself', () => {
    expect(translator(dict, 'ru')('only_en')).toBe('English only');
    expect(translator(dict, 'ru')('no.such.key')).toBe('no.such.key');
  });

  it('puts a value in as it is (no $-patterns, no second pass) and leaves a placeholder without a value', () => {
    expect(fill('{a} and {b}', { a: '$& {b}' })).toBe('$& {b} and {b}');
    expect(fill('{n} min', { n: 5 })).toBe('5 min');
  });
});
