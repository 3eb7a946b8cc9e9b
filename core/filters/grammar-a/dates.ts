// Date values of spec 3 §4.1 rule 7, turned into the text of a DateTime64(6, 'UTC') query
// parameter ('YYYY-MM-DD hh:mm:ss.ffffff', UTC). Accepted:
//   - ISO 8601 with an offset: 2026-11-22T01:02:03+02:00, ...03.5Z, ...03-0530, ...03+02
//   - UTC without offset, up to microseconds: 2026-11-22T01:02:03.123456 (T or a space)
//   - relative: "<n> <period> ago", period second|minute|hour|day|month|year (+ plural s)
// A `+` that URL decoding turned into a space before the offset is put back.
// Anything else, impossible calendar values, or results outside DateTime64's range
// (years 1900 to 2299) give undefined; the caller reports the parameter.

const ABSOLUTE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const DECODED_PLUS = /^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?) (\d{2}(?::?\d{2})?)$/;
const RELATIVE = /^(\d{1,9})\s+(second|minute|hour|day|month|year)s?\s+ago$/i;

const MIN_YEAR = 1900;
const MAX_YEAR = 2299;

const UNIT_MS: Readonly<Record<string, number>> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** The DateTime64(6, 'UTC') parameter text for a date value, or undefined when invalid. */
export function parseDateValue(text: string, now: Date): string | undefined {
  const trimmed = text.trim();
  const relative = RELATIVE.exec(trimmed);
  if (relative) return relativeDate(Number(relative[1]), (relative[2] ?? '').toLowerCase(), now);
  return absoluteDate(trimmed.replace(DECODED_PLUS, '$1+$2'));
}

function absoluteDate(text: string): string | undefined {
  const m = ABSOLUTE.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const offsetMinutes = parseOffset(m[8]);
  if (offsetMinutes === undefined) return undefined;
  const micros = Number((m[7] ?? '').padEnd(6, '0'));
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, Math.floor(micros / 1000));
  return format(local.getTime() - offsetMinutes * 60_000, micros % 1000);
}

/** Minutes east of UTC; 0 when absent or Z; undefined when out of range. */
function parseOffset(text: string | undefined): number | undefined {
  if (text === undefined || text === 'Z') return 0;
  const sign = text.startsWith('-') ? -1 : 1;
  const digits = text.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

function relativeDate(n: number, unit: string, now: Date): string | undefined {
  const unitMs = UNIT_MS[unit];
  if (unitMs !== undefined) return format(now.getTime() - n * unitMs, 0);
  const months = unit === 'year' ? n * 12 : n;
  const total = now.getUTCFullYear() * 12 + now.getUTCMonth() - months;
  const year = Math.floor(total / 12);
  if (year < MIN_YEAR) return undefined;
  const month = total - year * 12 + 1;
  const d = new Date(now.getTime());
  d.setUTCFullYear(year, month - 1, Math.min(now.getUTCDate(), daysInMonth(year, month)));
  return format(d.getTime(), 0);
}

function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}

function format(epochMs: number, extraMicros: number): string | undefined {
  const d = new Date(epochMs);
  const year = d.getUTCFullYear();
  if (!Number.isFinite(epochMs) || year < MIN_YEAR || year > MAX_YEAR) return undefined;
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const fraction = p(d.getUTCMilliseconds() * 1000 + extraMicros, 6);
  return `${p(year, 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${fraction}`;
}
