// One attribute_condition or event_condition as SQL (spec 3 §2.4). The positive form is never
// NULL (nullable columns are guarded with isNotNull), so a `-not` form is NOT of it and
// matches contacts where the attribute is absent (rule 1).
import type { BaseOperator, Condition, Values } from './ast';
import { anniversarySql, dateRangeSql, dayversarySql, matchesDaySql, relativeRangeSql, timeversarySql } from './date-sql';
import type { CustomMaps, NativeField } from './fields';
import type { SqlContext } from './params';

export type Target =
  | { readonly kind: 'native'; readonly field: NativeField }
  | { readonly kind: 'custom'; readonly maps: CustomMaps; readonly key: string };

type Strings = Extract<Values, { shape: 'strings' }>;
type Numbers = Extract<Values, { shape: 'numbers' }>;

const guard = (field: NativeField, sql: string): string => (field.nullable ? `(isNotNull(${field.sql}) AND ${sql})` : `(${sql})`);
const has = (map: string, key: string): string => `mapContains(${map}, ${key})`;

/** Case-insensitive text predicates compare lowerUTF8 of both sides; matches-string is exact. */
function textPredicate(base: BaseOperator, x: string, v: string): string {
  switch (base) {
    case 'contains': return `position(lowerUTF8(${x}), lowerUTF8(${v})) > 0`;
    case 'startswith': return `startsWith(lowerUTF8(${x}), lowerUTF8(${v}))`;
    case 'endswith': return `endsWith(lowerUTF8(${x}), lowerUTF8(${v}))`;
    default: return `${x} = ${v}`;
  }
}

/**
 * Several values of contains / startswith / endswith: one Array(String) parameter walked by a
 * lambda, so the SQL text and the work of parsing and analysing it do not grow with the number
 * of values (1,000 values ORed as 1,000 predicates took seconds to plan, and their text passed
 * max_query_size). The values are lowered once per query (a constant), the column once per row.
 */
function anyOrAll(all: boolean, predicate: (value: string) => string, v: Strings, c: SqlContext): string {
  const lowered = `arrayMap(_v -> lowerUTF8(_v), ${c.binder.bind('Array(String)', v.values)})`;
  return `${all ? 'arrayAll' : 'arrayExists'}(_v -> ${predicate('_v')}, ${lowered})`;
}

/** The case-insensitive predicate over an already lowered value. */
function loweredPredicate(base: BaseOperator, x: string, lowered: string): string {
  switch (base) {
    case 'contains': return `position(lowerUTF8(${x}), ${lowered}) > 0`;
    case 'startswith': return `startsWith(lowerUTF8(${x}), ${lowered})`;
    default: return `endsWith(lowerUTF8(${x}), ${lowered})`;
  }
}

function onScalarText(base: BaseOperator, x: string, v: Strings, c: SqlContext): string {
  // One value: a plain comparison, which ClickHouse can use for index analysis.
  if (base === 'matches-string' && v.values.length === 1) return `${x} = ${c.binder.bind('String', v.values[0])}`;
  if (base === 'matches-string' && !v.all) return `has(${c.binder.bind('Array(String)', v.values)}, ${x})`;
  if (base === 'matches-string') return `arrayAll(_v -> ${x} = _v, ${c.binder.bind('Array(String)', v.values)})`;
  if (v.values.length === 1) return textPredicate(base, x, c.binder.bind('String', v.values[0]));
  return anyOrAll(v.all, (value) => loweredPredicate(base, x, value), v, c);
}

/** Rule 2: on a list, `||` (default) needs one value to match some element, `&&` every value. */
function onListText(base: BaseOperator, list: string, v: Strings, c: SqlContext): string {
  if (base === 'matches-string' && v.values.length === 1) return `has(${list}, ${c.binder.bind('String', v.values[0])})`;
  if (base === 'matches-string') return `${v.all ? 'hasAll' : 'hasAny'}(${list}, ${c.binder.bind('Array(String)', v.values)})`;
  if (v.values.length === 1) return `arrayExists(_x -> ${textPredicate(base, '_x', c.binder.bind('String', v.values[0]))}, ${list})`;
  return anyOrAll(v.all, (value) => `arrayExists(_x -> ${loweredPredicate(base, '_x', value)}, ${list})`, v, c);
}

function onNumber(x: string, v: Numbers, c: SqlContext): string {
  if (v.values.length === 1) return `toFloat64(${x}) = ${c.binder.bind('Float64', v.values[0])}`;
  if (!v.all) return `has(${c.binder.bind('Array(Float64)', v.values)}, toFloat64(${x}))`;
  return `arrayAll(_n -> toFloat64(${x}) = _n, ${c.binder.bind('Array(Float64)', v.values)})`;
}

function numberRange(x: string, v: Extract<Values, { shape: 'number-range' }>, c: SqlContext): string {
  if (v.lower === null && v.upper === null) return '1';
  const parts: string[] = [];
  if (v.lower !== null) parts.push(`toFloat64(${x}) ${v.lowerExclude ? '>' : '>='} ${c.binder.bind('Float64', v.lower)}`);
  if (v.upper !== null) parts.push(`toFloat64(${x}) ${v.upperExclude ? '<' : '<='} ${c.binder.bind('Float64', v.upper)}`);
  return parts.join(' AND ');
}

/** Date operators over an instant (DateTime64); `day` is set for calendar-day columns (Date32). */
function onDate(cond: Condition, inst: string, day: string | null, c: SqlContext): string {
  const v = cond.values;
  switch (v.shape) {
    case 'day': return day === null ? matchesDaySql(inst, v.date, c) : `${day} = toDate32(${c.binder.bind('String', v.date)})`;
    case 'date-range': return dateRangeSql(inst, v, c);
    case 'relative-range': return relativeRangeSql(inst, v, c);
    case 'anniversary-absolute': case 'anniversary-relative':
      if (day === null) throw new TypeError('anniversary needs a calendar-day column');
      return anniversarySql(day, v, c);
    case 'dayversary': return dayversarySql(inst, v, c);
    default: return timeversarySql(inst, v, c);
  }
}

function presentNative(f: NativeField): string {
  if (f.type === 'geo') return 'isNotNull(geo_lat) AND isNotNull(geo_lon)';
  if (f.type === 'strings') return `notEmpty(${f.sql})`;
  return f.nullable ? `isNotNull(${f.sql})` : '1';
}

function nativePositive(cond: Condition, f: NativeField, c: SqlContext): string {
  const v = cond.values;
  if (cond.base === 'exists') return `(${presentNative(f)})`;
  if (v.shape === 'strings') return f.type === 'strings' ? `(${onListText(cond.base, f.sql, v, c)})` : guard(f, onScalarText(cond.base, f.sql, v, c));
  if (v.shape === 'numbers') return guard(f, onNumber(f.sql, v, c));
  if (v.shape === 'number-range') return guard(f, numberRange(f.sql, v, c));
  if (v.shape === 'bool') return guard(f, `${f.sql} = ${c.binder.bind('Bool', v.value)}`);
  if (v.shape === 'geo') {
    const distance = `greatCircleDistance(${c.binder.bind('Float64', v.longitude)}, ${c.binder.bind('Float64', v.latitude)}, assumeNotNull(geo_lon), assumeNotNull(geo_lat))`;
    return `(${presentNative(f)} AND ${distance} <= ${c.binder.bind('Float64', v.distanceKm * 1000)})`;
  }
  if (f.type === 'birthday') return guard(f, onDate(cond, `toDateTime64(${f.sql}, 3, ${c.tz})`, f.sql, c));
  return guard(f, onDate(cond, f.sql, null, c));
}

function customPositive(cond: Condition, m: CustomMaps, k: string, c: SqlContext): string {
  const v = cond.values;
  if (cond.base === 'exists') {
    return `(${has(m.string, k)} OR ${has(m.number, k)} OR ${has(m.bool, k)} OR ${has(m.date, k)} OR notEmpty(${m.array}[${k}]) OR ${has(m.json, k)})`;
  }
  if (v.shape === 'strings') return `((${has(m.string, k)} AND ${onScalarText(cond.base, `${m.string}[${k}]`, v, c)}) OR ${onListText(cond.base, `${m.array}[${k}]`, v, c)})`;
  if (v.shape === 'numbers') return `(${has(m.number, k)} AND ${onNumber(`${m.number}[${k}]`, v, c)})`;
  if (v.shape === 'number-range') return `(${has(m.number, k)} AND ${numberRange(`${m.number}[${k}]`, v, c)})`;
  if (v.shape === 'bool') return `(${has(m.bool, k)} AND ${m.bool}[${k}] = ${c.binder.bind('Bool', v.value)})`;
  return `(${has(m.date, k)} AND ${onDate(cond, `${m.date}[${k}]`, null, c)})`;
}

/** A range with both bounds null matches everything, and nothing when negated (§2.4). */
export function unbounded(v: Values): boolean {
  if (v.shape === 'number-range' || v.shape === 'date-range') return v.lower === null && v.upper === null;
  return v.shape === 'relative-range' && v.lowerOffset === null && v.upperOffset === null;
}

export function conditionSql(cond: Condition, target: Target, c: SqlContext): string {
  if (cond.base === 'match-all') return '1';
  if (cond.base === 'match-none') return '0';
  if (unbounded(cond.values)) return cond.negate ? '0' : '1';
  const positive = target.kind === 'native' ? nativePositive(cond, target.field, c) : customPositive(cond, target.maps, target.key, c);
  return cond.negate ? `NOT (${positive})` : positive;
}
