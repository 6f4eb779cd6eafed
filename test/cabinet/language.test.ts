import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { pickLang, translator } from '../../src/cabinet/i18n.js';

const req = (r: { query?: Record<string, unknown>; cookie?: string; acceptLanguage?: string }) =>
  ({ query: r.query ?? {}, cookies: r.cookie ? { cab_lang: r.cookie } : {}, headers: r.acceptLanguage ? { 'accept-language': r.acceptLanguage } : {} }) as unknown as FastifyRequest;

describe('the cabinet chooses its language as the payment page does (lib/i18n.ts)', () => {
  it('?lang= first (to be remembered), then the cookie, then Accept-Language', () => {
    expect(pickLang(req({ query: { lang: 'ru' }, cookie: 'en', acceptLanguage: 'en' }))).toEqual({ lang: 'ru', fromQuery: true });
    expect(pickLang(req({ cookie: 'ru', acceptLanguage: 'en' }))).toEqual({ lang: 'ru', fromQuery: false });
    expect(pickLang(req({ query: { lang: 'de' }, cookie: 'xx', acceptLanguage: 'ru-RU' }))).toEqual({ lang: 'ru', fromQuery: false });
  });

  it('ranks Accept-Language by q-value and never takes a language at q=0', () => {
    expect(pickLang(req({ acceptLanguage: 'en;q=0.1, ru;q=0.9' })).lang).toBe('ru');
    expect(pickLang(req({ acceptLanguage: 'ru;q=0, en;q=0.5' })).lang).toBe('en');
    expect(pickLang(req({})).lang).toBe('en');
  });

  it('looks its words up in the chosen language, with placeholders filled', () => {
    expect(translator('ru')('app.title')).toBe('Личный кабинет');
    expect(translator('en')('error.unsafe_url', { reason: 'points to a private address' })).toBe('The URL points to a private address.');
  });
});
