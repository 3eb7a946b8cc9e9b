// The `values` of each operator (spec 3 §2.4) and the length limits of §8. Every problem is
// a 400 naming `<path>.values` (or one of its items) and the rule.
import type { BaseOperator, DateRange, Period, RelativeRange, Values } from './ast';
import { CONTAINS_MAX, CONTAINS_MIN, MAX_VALUES, TEXT_MAX, TEXT_MIN } from './limits';
import { child, invalid, item, quote } from './problems';

type Json = Record<string, unknown>;

const PERIODS: readonly Period[] = ['min', 'hour', 'day', 'week', 'month', 'year'];
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:?\d{2})?$/;

function object(raw: unknown, path: string, operator: string, fields: readonly string[]): Json {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(path, `${operator} takes an object { ${fields.join(', ')} }`);
  const extra = Object.keys(raw).find((k) => !fields.includes(k));
  if (extra !== undefined) throw invalid(child(path, extra), `${operator} takes only ${fields.join(', ')}`);
  return raw as Json;
}

function bool(o: Json, name: string, path: string): boolean {
  const v = o[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalid(child(path, name), 'must be a boolean (default false)');
  return v;
}

function nullableNumber(o: Json, name: string, path: string, integer = false): number | null {
  const v = o[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v))) throw invalid(child(path, name), `must be ${integer ? 'an integer' : 'a number'} or null`);
  return v;
}

function validDay(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return y >= 1900 && y <= 2299 && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** YYYY-MM-DD, a real calendar day in 1900–2299 (the range of Date32). */
export function isIsoDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  return m !== null && validDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

function isIsoDateTime(text: string): boolean {
  const m = ISO_DATETIME.exec(text);
  if (m === null || !validDay(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59) return false;
  const offset = m[8];
  return offset === undefined || offset === 'Z' || (Number(offset.slice(1, 3)) <= 14 && Number(offset.slice(-2)) <= 59);
}

function listOf(raw: unknown, path: string, operator: string, kind: 'string' | 'number'): { all: boolean; values: unknown[] } {
  if (!Array.isArray(raw)) throw invalid(path, `${operator} takes an array of ${kind}s, optionally led by "&&" (all) or "||" (any)`);
  let all = false;
  let rest: unknown[] = raw;
  if (raw[0] === '&&' || raw[0] === '||') {
    all = raw[0] === '&&';
    rest = raw.slice(1);
  }
  if (rest.length === 0) throw invalid(path, `${operator} needs at least one ${kind}`);
  if (rest.length > MAX_VALUES) throw invalid(path, `${operator} takes at most ${MAX_VALUES} values`);
  return { all, values: rest };
}

function strings(base: BaseOperator, raw: unknown, path: string, operator: string): Values {
  const { all, values } = listOf(raw, path, operator, 'string');
  const [min, max] = base === 'contains' ? [CONTAINS_MIN, CONTAINS_MAX] : [TEXT_MIN, TEXT_MAX];
  const offset = Array.isArray(raw) && raw.length > values.length ? 1 : 0;
  values.forEach((v, i) => {
    const at = item(path, i + offset);
    if (typeof v !== 'string') throw invalid(at, `${operator} values must be strings`);
    const length = [...v].length;
    if (length < min || length > max) throw invalid(at, `${operator} values must be ${min} to ${max} characters (spec 3 §8), got ${length}`);
  });
  return { shape: 'strings', all, values: values as string[] };
}

function numbers(raw: unknown, path: string, operator: string): Values {
  const { all, values } = listOf(raw, path, operator, 'number');
  const offset = Array.isArray(raw) && raw.length > values.length ? 1 : 0;
  values.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(item(path, i + offset), `${operator} values must be finite numbers`);
  });
  return { shape: 'numbers', all, values: values as number[] };
}

function dateBound(o: Json, name: string, path: string): string | null {
  const v = o[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !(isIsoDate(v) || isIsoDateTime(v))) throw invalid(child(path, name), `must be an ISO date (YYYY-MM-DD) or datetime, or null; got ${quote(v)}`);
  return v;
}

function period(o: Json, name: string, path: string): Period {
  const v = o[name];
  if (v === undefined || v === null) return 'day';
  if (typeof v !== 'string' || !PERIODS.includes(v as Period)) throw invalid(child(path, name), `must be one of ${PERIODS.join(', ')} (default day)`);
  return v as Period;
}

function mmdd(o: Json, name: string, path: string): number {
  const v = o[name];
  const m = typeof v === 'string' ? /^(\d{2})(\d{2})$/.exec(v) : null;
  // Any day of a leap year, so 0229 is a valid bound.
  if (m === null || !validDay(2000, Number(m[1]), Number(m[2]))) throw invalid(child(path, name), `must be a month and day as MMDD, e.g. "1224"; got ${quote(v)}`);
  return Number(m[1]) * 100 + Number(m[2]);
}

function hhmm(o: Json, name: string, path: string): number {
  const v = o[name];
  const m = typeof v === 'string' ? /^(\d{2}):?(\d{2})$/.exec(v) : null;
  if (m === null || Number(m[1]) > 23 || Number(m[2]) > 59) throw invalid(child(path, name), `must be a time as HHMM, e.g. "0930"; got ${quote(v)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

function dhh(o: Json, name: string, path: string): number {
  const v = o[name];
  const m = typeof v === 'string' ? /^([1-7])(\d{2})$/.exec(v) : null;
  if (m === null || Number(m[2]) > 23) throw invalid(child(path, name), `must be DHH (weekday 1=Monday…7=Sunday, hour 00–23), e.g. "109"; got ${quote(v)}`);
  return (Number(m[1]) - 1) * 24 + Number(m[2]);
}

function integer(o: Json, name: string, path: string, fallback: number): number {
  const v = nullableNumber(o, name, path, true);
  if (v !== null && Math.abs(v) > 1_000_000) throw invalid(child(path, name), 'must be between -1000000 and 1000000');
  return v ?? fallback;
}

function mode(o: Json, path: string): 'relative' | 'absolute' {
  const v = o['mode'] ?? 'relative';
  if (v !== 'relative' && v !== 'absolute') throw invalid(child(path, 'mode'), 'must be "relative" (default) or "absolute"');
  return v;
}

const RANGE_FLAGS = ['lowerExcludeEquals', 'upperExcludeEquals'] as const;
const ROUNDING = ['lowerRounding', 'upperRounding'] as const;

function dateRange(raw: unknown, path: string, operator: string): DateRange {
  const o = object(raw, path, operator, ['lowerDate', 'upperDate', ...RANGE_FLAGS, ...ROUNDING]);
  return {
    shape: 'date-range', lower: dateBound(o, 'lowerDate', path), upper: dateBound(o, 'upperDate', path),
    lowerExclude: bool(o, 'lowerExcludeEquals', path), upperExclude: bool(o, 'upperExcludeEquals', path),
    lowerRounding: bool(o, 'lowerRounding', path), upperRounding: bool(o, 'upperRounding', path),
  };
}

function relativeRange(raw: unknown, path: string, operator: string): RelativeRange {
  const o = object(raw, path, operator, ['lowerOffset', 'upperOffset', 'lowerOffsetPeriod', 'upperOffsetPeriod', ...RANGE_FLAGS, ...ROUNDING]);
  const offset = (name: string): number | null => {
    const v = nullableNumber(o, name, path, true);
    if (v !== null && Math.abs(v) > 100_000) throw invalid(child(path, name), 'must be between -100000 and 100000');
    return v;
  };
  return {
    shape: 'relative-range', lowerOffset: offset('lowerOffset'), upperOffset: offset('upperOffset'),
    lowerPeriod: period(o, 'lowerOffsetPeriod', path), upperPeriod: period(o, 'upperOffsetPeriod', path),
    lowerExclude: bool(o, 'lowerExcludeEquals', path), upperExclude: bool(o, 'upperExcludeEquals', path),
    lowerRounding: bool(o, 'lowerRounding', path), upperRounding: bool(o, 'upperRounding', path),
  };
}

function required(o: Json, name: string, path: string, operator: string): number {
  const v = o[name];
  if (v === undefined || v === null) throw invalid(child(path, name), `${operator} requires latitude, longitude and distance (spec 3 §7)`);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(child(path, name), 'must be a number');
  return v;
}

function geo(raw: unknown, path: string, operator: string): Values {
  const o = object(raw, path, operator, ['latitude', 'longitude', 'distance']);
  const latitude = required(o, 'latitude', path, operator);
  const longitude = required(o, 'longitude', path, operator);
  const distanceKm = required(o, 'distance', path, operator);
  if (Math.abs(latitude) > 90) throw invalid(child(path, 'latitude'), 'must be between -90 and 90');
  if (Math.abs(longitude) > 180) throw invalid(child(path, 'longitude'), 'must be between -180 and 180');
  if (distanceKm < 0) throw invalid(child(path, 'distance'), 'must be zero or more kilometres');
  return { shape: 'geo', latitude, longitude, distanceKm };
}

/** `path` is the node's path; problems name `<path>.values…`. */
export function parseValues(base: BaseOperator, operator: string, raw: unknown, nodePath: string): Values {
  const path = child(nodePath, 'values');
  switch (base) {
    case 'match-all': case 'match-none': case 'in-segment':
      return { shape: 'none' };
    case 'exists':
      if (raw !== undefined && raw !== null && !(Array.isArray(raw) && raw.length === 0)) throw invalid(path, `${operator} takes an empty array`);
      return { shape: 'none' };
    case 'matches-bool':
      if (!Array.isArray(raw) || raw.length !== 1 || typeof raw[0] !== 'boolean') throw invalid(path, 'matches-bool takes [true] or [false]');
      return { shape: 'bool', value: raw[0] };
    case 'contains': case 'startswith': case 'endswith': case 'matches-string':
      return strings(base, raw, path, operator);
    case 'matches-number':
      return numbers(raw, path, operator);
    case 'range-number': {
      const o = object(raw, path, operator, ['lowerNumber', 'upperNumber', ...RANGE_FLAGS]);
      return {
        shape: 'number-range', lower: nullableNumber(o, 'lowerNumber', path), upper: nullableNumber(o, 'upperNumber', path),
        lowerExclude: bool(o, 'lowerExcludeEquals', path), upperExclude: bool(o, 'upperExcludeEquals', path),
      };
    }
    case 'matches-date': {
      const o = object(raw, path, operator, ['date']);
      if (typeof o['date'] !== 'string' || !isIsoDate(o['date'])) throw invalid(child(path, 'date'), `must be a date YYYY-MM-DD; got ${quote(o['date'])}`);
      return { shape: 'day', date: o['date'] };
    }
    case 'range-date':
      return dateRange(raw, path, operator);
    case 'range-date-relative':
      return relativeRange(raw, path, operator);
    case 'range-date-anniversary': {
      const o = object(raw, path, operator, ['mode', 'lowerOffsetDays', 'upperOffsetDays', 'lowerDate', 'upperDate']);
      if (mode(o, path) === 'absolute') return { shape: 'anniversary-absolute', lower: mmdd(o, 'lowerDate', path), upper: mmdd(o, 'upperDate', path) };
      return { shape: 'anniversary-relative', lowerDays: integer(o, 'lowerOffsetDays', path, 0), upperDays: integer(o, 'upperOffsetDays', path, 1) };
    }
    case 'range-date-dayversary': {
      const o = object(raw, path, operator, ['lowerDay', 'upperDay']);
      return { shape: 'dayversary', lower: dhh(o, 'lowerDay', path), upper: dhh(o, 'upperDay', path) };
    }
    case 'range-date-timeversary': {
      const o = object(raw, path, operator, ['mode', 'lowerOffsetMinutes', 'upperOffsetMinutes', 'lowerTime', 'upperTime']);
      if (mode(o, path) === 'absolute') return { shape: 'timeversary-absolute', lower: hhmm(o, 'lowerTime', path), upper: hhmm(o, 'upperTime', path) };
      return { shape: 'timeversary-relative', lowerMinutes: integer(o, 'lowerOffsetMinutes', path, 0), upperMinutes: integer(o, 'upperOffsetMinutes', path, 1) };
    }
    case 'geopoint-distance':
      return geo(raw, path, operator);
  }
}
