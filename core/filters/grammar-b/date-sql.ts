// Date operators (spec 3 §2.4) as SQL over an instant expression (DateTime64) or, for
// anniversaries, over a calendar day (Date32). Calendar arithmetic runs in ClickHouse in the
// project timezone (`addDays` keeps the local wall time across a DST change; a day starts at
// local midnight), so whole days, roundings and offsets follow the project's clock.
import type { DateRange, Period, RelativeRange, Values } from './ast';
import type { SqlContext } from './params';

const ADD: Readonly<Record<Period, string>> = { min: 'addMinutes', hour: 'addHours', day: 'addDays', week: 'addWeeks', month: 'addMonths', year: 'addYears' };

/** Start of the local day of an instant. */
const dayStart = (x: string, c: SqlContext): string => `toDateTime64(toDate32(${x}, ${c.tz}), 3, ${c.tz})`;
/** Last millisecond of the local day of an instant. */
const dayEnd = (x: string, c: SqlContext): string => `(toDateTime64(toDate32(${x}, ${c.tz}) + 1, 3, ${c.tz}) - toIntervalMillisecond(1))`;

function bounds(inst: string, lower: string | null, upper: string | null, r: { lowerExclude: boolean; upperExclude: boolean }): string {
  if (lower === null && upper === null) return '1';
  const parts: string[] = [];
  if (lower !== null) parts.push(`${inst} ${r.lowerExclude ? '>' : '>='} ${lower}`);
  if (upper !== null) parts.push(`${inst} ${r.upperExclude ? '<' : '<='} ${upper}`);
  return parts.join(' AND ');
}

export function dateRangeSql(inst: string, r: DateRange, c: SqlContext): string {
  const at = (text: string | null, rounding: boolean, end: boolean): string | null => {
    if (text === null) return null;
    const x = `parseDateTime64BestEffort(${c.binder.bind('String', text)}, 3, ${c.tz})`;
    return rounding ? (end ? dayEnd(x, c) : dayStart(x, c)) : x;
  };
  return bounds(inst, at(r.lower, r.lowerRounding, false), at(r.upper, r.upperRounding, true), r);
}

export function relativeRangeSql(inst: string, r: RelativeRange, c: SqlContext): string {
  const at = (offset: number | null, period: Period, rounding: boolean, end: boolean): string | null => {
    if (offset === null) return null;
    const x = `${ADD[period]}(${c.now}, ${c.binder.bind('Int32', offset)})`;
    return rounding ? (end ? dayEnd(x, c) : dayStart(x, c)) : x;
  };
  return bounds(inst, at(r.lowerOffset, r.lowerPeriod, r.lowerRounding, false), at(r.upperOffset, r.upperPeriod, r.upperRounding, true), r);
}

/** The local day of an instant equals the given day. */
export function matchesDaySql(inst: string, date: string, c: SqlContext): string {
  return `toDate32(${inst}, ${c.tz}) = toDate32(${c.binder.bind('String', date)})`;
}

/** Minute of the local day, 0–1439. */
const minuteOfDay = (x: string, c: SqlContext): string => `(toHour(${x}, ${c.tz}) * 60 + toMinute(${x}, ${c.tz}))`;

export function timeversarySql(inst: string, v: Values, c: SqlContext): string {
  const m = minuteOfDay(inst, c);
  if (v.shape === 'timeversary-absolute') {
    const [lo, hi] = [c.binder.bind('Int32', v.lower), c.binder.bind('Int32', v.upper)];
    return v.lower <= v.upper ? `(${m} >= ${lo} AND ${m} <= ${hi})` : `(${m} >= ${lo} OR ${m} <= ${hi})`;
  }
  if (v.shape !== 'timeversary-relative') throw new TypeError(`timeversary with ${v.shape}`);
  const width = v.upperMinutes - v.lowerMinutes;
  if (width <= 0) return '0';
  if (width >= 1440) return '1';
  // Minutes since the window opened, modulo a day: the window may wrap over midnight.
  const opens = `(${minuteOfDay(c.now, c)} + ${c.binder.bind('Int32', v.lowerMinutes)})`;
  return `positiveModulo(${m} - ${opens}, 1440) < ${c.binder.bind('Int32', width)}`;
}

export function dayversarySql(inst: string, v: Values, c: SqlContext): string {
  if (v.shape !== 'dayversary') throw new TypeError(`dayversary with ${v.shape}`);
  const k = `((toDayOfWeek(${inst}, 0, ${c.tz}) - 1) * 24 + toHour(${inst}, ${c.tz}))`;
  const [lo, hi] = [c.binder.bind('Int32', v.lower), c.binder.bind('Int32', v.upper)];
  return v.lower <= v.upper ? `(${k} >= ${lo} AND ${k} <= ${hi})` : `(${k} >= ${lo} OR ${k} <= ${hi})`;
}

/**
 * Anniversaries of a calendar day `day` (Date32). The anniversary in year y is the same
 * month and day, and 29 February falls on 28 February in years without one (docs/grammar-b.md).
 * Relative windows [today+lower, today+upper) shorter than a year touch at most two years.
 */
export function anniversarySql(day: string, v: Values, c: SqlContext): string {
  if (v.shape === 'anniversary-absolute') {
    const key = `(toMonth(${day}) * 100 + toDayOfMonth(${day}))`;
    const [lo, hi] = [c.binder.bind('Int32', v.lower), c.binder.bind('Int32', v.upper)];
    return v.lower <= v.upper ? `(${key} >= ${lo} AND ${key} <= ${hi})` : `(${key} >= ${lo} OR ${key} <= ${hi})`;
  }
  if (v.shape !== 'anniversary-relative') throw new TypeError(`anniversary with ${v.shape}`);
  const width = v.upperDays - v.lowerDays;
  if (width <= 0) return '0';
  if (width >= 366) return '1';
  const today = `toDate32(${c.now}, ${c.tz})`;
  const from = `(${today} + ${c.binder.bind('Int32', v.lowerDays)})`;
  const to = `(${today} + ${c.binder.bind('Int32', v.upperDays)})`;
  const inYear = (y: string): string =>
    `makeDate32(${y}, toMonth(${day}), least(toDayOfMonth(${day}), toDayOfMonth(toLastDayOfMonth(makeDate32(${y}, toMonth(${day}), 1)))))`;
  const within = (y: string): string => `(${inYear(y)} >= ${from} AND ${inYear(y)} < ${to})`;
  return `(${within(`toYear(${from})`)} OR ${within(`toYear(${from}) + 1`)})`;
}
