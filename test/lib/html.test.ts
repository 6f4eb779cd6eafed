import { describe, expect, it } from 'vitest';
import { escapeHtml, templates } from '../../src/lib/html.js';

describe('escapeHtml: the one HTML escaper', () => {
  it('turns the five characters that can end a text node or a quoted attribute into numeric references', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&#60;a href=&#34;x&#34; title=&#39;y&#39;&#62;&#38;&#60;/a&#62;');
  });

  it('leaves every other character as it is, Cyrillic and the equals sign of a query string included', () => {
    expect(escapeHtml('/sandbox/3ds/p1?lang=ru Оплата № 5 — 100 ₽')).toBe('/sandbox/3ds/p1?lang=ru Оплата № 5 — 100 ₽');
  });

  it('prints null and undefined as nothing and other values as their text', () => {
    expect([escapeHtml(null), escapeHtml(undefined), escapeHtml(0), escapeHtml(false)]).toEqual(['', '', '0', 'false']);
  });

  it('is what the templates print with <%= %>, while <%~ %> prints HTML the code escaped already', () => {
    const eta = templates('/nonexistent');
    const out = eta.renderString('<p title="<%= it.v %>"><%= it.v %></p><%~ it.html %>', { v: `Coffee & "Co" <'s>`, html: '<b>ok</b>' });
    expect(out).toBe(`<p title="${escapeHtml(`Coffee & "Co" <'s>`)}">${escapeHtml(`Coffee & "Co" <'s>`)}</p><b>ok</b>`);
    expect(out).toContain('Coffee &#38; &#34;Co&#34; &#60;&#39;s&#62;');
  });
});
