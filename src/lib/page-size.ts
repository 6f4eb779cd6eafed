/** A browser list's `per_page` from its query: 1..100; anything else is the list's default. */
export function pageSize(raw: string | undefined, fallback: number): number {
  const n = raw && /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  return n >= 1 && n <= 100 ? n : fallback;
}
