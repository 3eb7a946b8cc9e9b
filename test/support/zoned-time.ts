// Wall-clock arithmetic in an IANA timezone with Intl only, for the Grammar B reference
// evaluator: deliberately independent of ClickHouse's timezone functions that the compiler
// uses, so the property test compares two implementations.
export interface Local { y: number; m: number; d: number; h: number; mi: number; s: number; ms: number; dow: number }

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS: Readonly<Record<string, number>> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', weekday: 'short' });
    formatters.set(tz, f);
  }
  return f;
}

export function local(ms: number, tz: string): Local {
  const parts: Record<string, string> = {};
  for (const p of formatter(tz).formatToParts(new Date(ms))) parts[p.type] = p.value;
  return {
    y: Number(parts['year']), m: Number(parts['month']), d: Number(parts['day']), h: Number(parts['hour']), mi: Number(parts['minute']),
    s: Number(parts['second']), ms: ((ms % 1000) + 1000) % 1000, dow: WEEKDAYS[parts['weekday'] ?? ''] ?? 0,
  };
}

/** Offset of the zone at an instant, in ms (local − UTC). */
function offsetAt(ms: number, tz: string): number {
  const l = local(ms, tz);
  return Date.UTC(l.y, l.m - 1, l.d, l.h, l.mi, l.s, l.ms) - ms;
}

/** The instant of a local wall time; a time inside a spring-forward gap moves forward by the gap. */
export function instant(y: number, m: number, d: number, h = 0, mi = 0, s = 0, ms = 0, tz = 'UTC'): number {
  const wall = Date.UTC(y, m - 1, d, h, mi, s, ms);
  const first = wall - offsetAt(wall, tz);
  const second = wall - offsetAt(first, tz);
  if (offsetAt(second, tz) === wall - second) return second;
  return wall - offsetAt(wall - 86_400_000, tz);
}

export const daysIn = (y: number, m: number): number => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** Calendar day arithmetic on (y, m, d). */
export function addDaysTo(y: number, m: number, d: number, days: number): { y: number; m: number; d: number } {
  const t = new Date(Date.UTC(y, m - 1, d + days));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

export function startOfLocalDay(ms: number, tz: string): number {
  const l = local(ms, tz);
  return instant(l.y, l.m, l.d, 0, 0, 0, 0, tz);
}

export function endOfLocalDay(ms: number, tz: string): number {
  const l = local(ms, tz);
  const next = addDaysTo(l.y, l.m, l.d, 1);
  return instant(next.y, next.m, next.d, 0, 0, 0, 0, tz) - 1;
}

/** now + n periods: minutes and hours as elapsed time, days and longer on the local calendar. */
export function addPeriod(ms: number, n: number, period: string, tz: string): number {
  if (period === 'min') return ms + n * 60_000;
  if (period === 'hour') return ms + n * 3_600_000;
  const l = local(ms, tz);
  if (period === 'day' || period === 'week') {
    const t = addDaysTo(l.y, l.m, l.d, period === 'week' ? 7 * n : n);
    return instant(t.y, t.m, t.d, l.h, l.mi, l.s, l.ms, tz);
  }
  const months = period === 'month' ? n : 12 * n;
  const index = l.y * 12 + (l.m - 1) + months;
  const y = Math.floor(index / 12);
  const m = index - y * 12 + 1;
  return instant(y, m, Math.min(l.d, daysIn(y, m)), l.h, l.mi, l.s, l.ms, tz);
}

/** ISO date (local midnight), datetime without offset (local), or with Z / an offset (absolute). */
export function parseIsoIn(text: string, tz: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text);
  if (!m) throw new Error(`not ISO: ${text}`);
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Number(m[7].padEnd(3, '0').slice(0, 3)) : 0;
  const offset = m[8];
  if (offset === undefined) return instant(y, mo, d, h, mi, s, ms, tz);
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  if (offset === 'Z') return utc;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  return utc - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
}
