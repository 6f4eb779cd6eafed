/**
 * The one way the service speaks two languages: which language a person gets, and how a
 * dictionary's text is looked up and filled in. Each face keeps only its words (a dictionary per
 * language with the same keys); the payment page, the sandbox pages, the cabinet, the fiscal
 * words and money formats all speak these languages.
 */
export type Lang = 'ru' | 'en';

/** The language a person gets when nothing they sent names one. */
export const DEFAULT_LANG: Lang = 'en';

export const isLang = (v: unknown): v is Lang => v === 'ru' || v === 'en';

/**
 * The language of a request: `chosen` when it names one (a `?lang=`, a form field, a cookie, a
 * bill's locale: the caller passes the first it has), else the first of ru/en in Accept-Language
 * by q-value (a range at q=0 is refused, ties go to the earlier one), else English.
 */
export function negotiateLang(acceptLanguage: string | undefined, chosen?: unknown): Lang {
  if (isLang(chosen)) return chosen;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
      return { tag: tag ?? '', q: q ? Number(q[1]) : 1, i };
    })
    .filter((x) => x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of ranked) {
    if (tag === 'ru' || tag.startsWith('ru-')) return 'ru';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return DEFAULT_LANG;
}

export type Vars = Record<string, string | number>;

/** A text with its `{name}` placeholders filled in (a placeholder without a value stays as written). */
export function fill(text: string, vars?: Vars): string {
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** A face's words: per language, its texts by key. */
export type Dictionary = Record<Lang, Readonly<Record<string, string>>>;

/** Looks a key up in the person's language and fills it in. */
export type T = (key: string, vars?: Vars) => string;

/** The lookup of `dict` in `lang`: a key missing there falls back to English, then to the key itself. */
export function translator(dict: Dictionary, lang: Lang): T {
  const own = dict[lang];
  const fallback = dict[DEFAULT_LANG];
  return (key, vars) => fill(own[key] ?? fallback[key] ?? key, vars);
}
