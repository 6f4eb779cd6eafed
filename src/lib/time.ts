/** Datetimes on the wire: `Y-m-d H:i:s` in the service time zone (config.tz). */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The wall clock of `tz` at `d` through Intl (slow: ~2 µs; the reference formatDateTime is checked against). */
export function formatDateTimeIntl(d: Date, tz: string): string {
  const p: Record<string, string> = {};
  for (const part of formatter(tz).formatToParts(d)) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/**
 * UTC offsets (ms) by time zone and quarter hour. A zone's offset changes only at a transition,
 * and transitions fall on quarter hours of UTC (offsets are whole quarter hours since the
 * 1970s), so one Intl call per zone and quarter hour serves every instant in it.
 */
const QUARTER_HOUR = 900_000;
const offsets = new Map<string, Map<number, number>>();

function offsetMs(t: number, tz: string): number {
  const q = Math.floor(t / QUARTER_HOUR);
  let byQuarter = offsets.get(tz);
  if (!byQuarter) offsets.set(tz, (byQuarter = new Map()));
  let off = byQuarter.get(q);
  if (off === undefined) {
    const start = q * QUARTER_HOUR;
    off = Date.parse(`${formatDateTimeIntl(new Date(start), tz).replace(' ', 'T')}Z`) - start;
    if (byQuarter.size >= 4096) byQuarter.clear();
    byQuarter.set(q, off);
  }
  return off;
}

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

export function formatDateTime(d: Date, tz: string): string {
  const t = d.getTime();
  const w = new Date(t + offsetMs(t, tz));
  const y = w.getUTCFullYear();
  return `${y < 1000 ? String(y).padStart(4, '0') : y}-${two(w.getUTCMonth() + 1)}-${two(w.getUTCDate())} ${two(w.getUTCHours())}:${two(w.getUTCMinutes())}:${two(w.getUTCSeconds())}`;
}

/** Offset of `tz` from UTC at instant `d`, in minutes. */
function offsetMinutes(d: Date, tz: string): number {
  const local = formatDateTimeIntl(d, tz);
  const asUtc = Date.parse(local.replace(' ', 'T') + 'Z');
  return Math.round((asUtc - Math.floor(d.getTime() / 1000) * 1000) / 60000);
}

/** The instant of a wall-clock time in `tz` (handles DST by re-checking the offset). */
export function zonedToUtc(y: number, mo: number, d: number, h: number, mi: number, s: number, tz: string): Date {
  const guess = Date.UTC(y, mo - 1, d, h, mi, s);
  let off = offsetMinutes(new Date(guess), tz);
  let t = guess - off * 60000;
  const off2 = offsetMinutes(new Date(t), tz);
  if (off2 !== off) { off = off2; t = guess - off * 60000; }
  return new Date(t);
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Parses a search date: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS[.ffffff]]`, also with `T` and a
 * `Z` or `±HH[:MM]` suffix. Without a suffix it is a wall-clock time in `tz`; with one, that
 * exact instant (a client that documents its datetimes as UTC gets UTC). A date alone covers its
 * whole day: as a start it means 00:00:00, as an end the start of the next day (exclusive). An
 * explicit end time includes its whole second, or, with a fraction, its whole millisecond
 * (rows keep milliseconds). Returns null for anything else, including impossible dates.
 */
export function parseSearchDate(s: string, tz: string, edge: 'start' | 'end'): Date | null {
  const m = DATE_RE.exec(s.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const probe = new Date(Date.UTC(y, mo - 1, d));
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return null;
  const zone = m[8];
  let offsetMs: number | null = null;
  if (zone !== undefined) {
    if (zone.toUpperCase() === 'Z') offsetMs = 0;
    else {
      const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
      const [hh, mm] = [Number(z[2]), Number(z[3] ?? '0')];
      if (hh > 14 || mm > 59) return null;
      offsetMs = (z[1] === '-' ? -1 : 1) * (hh * 60 + mm) * 60000;
    }
  }
  if (m[4] === undefined) {
    const day = edge === 'start' ? probe : new Date(probe.getTime() + 86400000);
    if (offsetMs !== null) return new Date(day.getTime() - offsetMs);
    return zonedToUtc(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), 0, 0, 0, tz);
  }
  const [h, mi, sec] = [Number(m[4]), Number(m[5]), Number(m[6] ?? '0')];
  if (h > 23 || mi > 59 || sec > 59) return null;
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  const base = offsetMs !== null ? new Date(Date.UTC(y, mo - 1, d, h, mi, sec) - offsetMs) : zonedToUtc(y, mo, d, h, mi, sec, tz);
  const t = base.getTime() + ms;
  if (edge === 'start') return new Date(t);
  return new Date(t + (m[7] === undefined ? (m[6] === undefined ? 60000 : 1000) : 1));
}

/** Start of the day / month containing `d`, in `tz`. */
export function startOfDay(d: Date, tz: string): Date {
  const [y, mo, day] = formatDateTime(d, tz).slice(0, 10).split('-').map(Number) as [number, number, number];
  return zonedToUtc(y, mo, day, 0, 0, 0, tz);
}
export function startOfMonth(d: Date, tz: string): Date {
  const [y, mo] = formatDateTime(d, tz).slice(0, 7).split('-').map(Number) as [number, number];
  return zonedToUtc(y, mo, 1, 0, 0, 0, tz);
}

/** Whether `tz` is a time zone name the runtime knows (Europe/Moscow, UTC). */
export function isTimeZone(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(tz)) return false;
  try { new Intl.DateTimeFormat('en', { timeZone: tz }); return true; } catch { return false; }
}

/** The time zones a person picks from (the runtime's list, UTC first). */
export function timeZoneNames(): string[] {
  return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
}
