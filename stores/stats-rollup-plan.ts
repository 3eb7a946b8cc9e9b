// What a statistics read from the rollup rests on (docs/grammar-a.md "Statistics"), apart from
// its statements (stores/message-stats.ts): which filters the rollup answers (rollupPlan), which
// hours are rolled, live or cut by a createdAt bound, which days are summed and usable, and when
// kept sources may be stale.
//
import type { ClickHouse } from '../infra/clickhouse';
import { fromClickHouseTime } from './clickhouse-time';
import { topLevelConjuncts } from './scoped-query';
import { daySource, hourStatesSql, STATS_ROLLUP_DEFAULTS, summedDaysSql } from './stats-rollup';

// sms_stats_hourly holds, per organization and hour of created_at, the newest state of the
// hour's messages summed by the dimensions below; pipelines/stats-rollup.ts writes it
// (StatsRollup). A stats query whose every condition the rollup can answer reads whole rolled
// hours from it and every other hour from sms_messages FINAL, in one statement whose two parts
// split the hours between them; any other query reads FINAL alone (MessageStats.smsRows).

/** Columns of sms_messages the rollup keeps as dimensions (the same names in sms_stats_hourly). */
const ROLLUP_DIMENSIONS: ReadonlySet<string> = new Set(['project_id', 'direction', 'country', 'status']);

/** Words the Grammar A compiler writes into a condition that are not columns. */
const CONDITION_WORDS: ReadonlySet<string> = new Set([
  'AND', 'OR', 'NOT', 'IN', 'IS', 'NULL', 'isNull', 'isNotNull', 'position', 'positionCaseInsensitiveUTF8', 'startsWith', 'endsWith',
  'lowerUTF8', 'arrayExists', 'arrayMap', '_v',
]);

const TIME_PARAM = String.raw`\{[A-Za-z0-9_]+:DateTime64\(\d, 'UTC'\)\}`;
/** `created_at >= {p0:DateTime64(6, 'UTC')}` and the like: true on a set of instants that is an interval. */
const TIME_BOUND = new RegExp(String.raw`^created_at (>=|>|<=|<) (${TIME_PARAM})$`);
/** The range family of Grammar A (`createdAt_range`, `_between`, `_betweeneq`). */
const TIME_PAIR = new RegExp(String.raw`^\(created_at (>=|>) (${TIME_PARAM}) AND created_at (<=|<) (${TIME_PARAM})\)$`);

/** The last instant of an hour (a day) that created_at (DateTime64(3)) can hold, after its start. */
export const HOUR_LAST_MS = 3_599_999;
export const DAY_LAST_MS = 86_399_999;

export interface RollupPlan {
  /** Conditions on dimensions only: the same on every message of a rollup row. */
  readonly dimensions: readonly string[];
  /** Bounds on created_at, each `[operator, placeholder]`: an hour is whole when both its ends pass every one. */
  readonly bounds: readonly (readonly [string, string])[];
}

/**
 * Whether the rollup answers a stats filter: each top-level condition is on dimensions only
 * (project, direction, country, status) or is a bound on createdAt (gt, gte, lt, lte, range,
 * between, betweeneq). Anything else falls back to sms_messages FINAL (null): conditions on
 * to, normalizedTo, from, clientId, id, text, deliveredText, charsCount, messagesCount,
 * encoding, unicode, allowUnicode, charged, priceUser, pricePerSms, currency, statusCode,
 * chargedAt, scheduledAt, sentAt, deliveredAt, and createdAt with eq, ne, in, nin or isnull
 * (true on instants that need not fill whole hours), and any `_or` that mixes one of these in.
 */
export function rollupPlan(where: string): RollupPlan | null {
  const dimensions: string[] = [];
  const bounds: [string, string][] = [];
  for (const condition of topLevelConjuncts(where)) {
    const names = condition.replace(/\{[^}]*\}/g, ' ').replace(/'[^']*'/g, ' ').match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [];
    if (names.every((name) => CONDITION_WORDS.has(name) || ROLLUP_DIMENSIONS.has(name))) { dimensions.push(condition); continue; }
    const bound = TIME_BOUND.exec(condition);
    if (bound) { bounds.push([bound[1]!, bound[2]!]); continue; }
    const pair = TIME_PAIR.exec(condition);
    if (pair) { bounds.push([pair[1]!, pair[2]!], [pair[3]!, pair[4]!]); continue; }
    return null;
  }
  return { dimensions, bounds };
}

/** SQL: true when every instant of the span (an hour or a day) starting at `start` passes the plan's createdAt bounds (they are intervals: both ends suffice). */
export function wholeSpan(plan: RollupPlan, start: string, lastMs: number): string {
  if (plan.bounds.length === 0) return '1';
  const last = `(${start} + toIntervalMillisecond(${lastMs}))`;
  return plan.bounds.map(([op, p]) => `(${start} ${op} ${p} AND ${last} ${op} ${p})`).join(' AND ');
}

/** An hour of an organization whose current rollup generation no row has arrived after. */
export interface RolledHour {
  /** toRelativeHourNum of the hour (hours since 1970, UTC). */
  readonly h: number | string;
  /** The hour's start ('YYYY-MM-DD hh:00:00.000'). */
  readonly hour: string;
  readonly g: number | string;
  /** The newest touch its generation saw (read by rollupSourcesStatement). */
  readonly seen?: string;
}

/** The rolled hours of `orgId` a reader may use: the current generation of each, if nothing arrived for the hour since. */
export function rolledHoursStatement(ch: ClickHouse, orgId: string): { query: string; query_params: Record<string, unknown> } {
  return { query: `SELECT toRelativeHourNum(s.hour) AS h, toString(s.hour) AS hour, s.g AS g FROM (${hourStatesSql(ch, true)}) AS s WHERE s.current = 1 ORDER BY h`, query_params: { __org: orgId } };
}

/**
 * Everything a rollup read rests on, in one statement (one round trip): rows of kind 'h' (a
 * rolled, current hour: h, hour, g, and in `seen` the newest touch its generation saw), 'l' (a
 * touched hour that is not: h, hour: read FINAL) and 'd' (a summed day: h = the day number, g, source, levels).
 */
export function rollupSourcesStatement(ch: ClickHouse, orgId: string): { query: string; query_params: Record<string, unknown> } {
  return {
    query: `SELECT if(s.current = 1, 'h', 'l') AS kind, toRelativeHourNum(s.hour) AS h, toString(s.hour) AS hour, s.g AS g, '' AS source, toString(s.seen) AS seen, 0 AS levels FROM (${hourStatesSql(ch, true)}) AS s
      UNION ALL SELECT 'd' AS kind, d AS h, '' AS hour, g, source, '' AS seen, levels FROM (${summedDaysSql(ch, true)})
      UNION ALL SELECT 'n' AS kind, 0 AS h, '' AS hour, 0 AS g, '' AS source, toString(now64(3, 'UTC')) AS seen, 0 AS levels`,
    query_params: { __org: orgId },
  };
}

/** An hour that has rows and no current rollup generation: its messages are read FINAL. */
export interface LiveHour {
  /** toRelativeHourNum of the hour. */
  readonly h: number;
  /** The hour's start ('YYYY-MM-DD hh:00:00.000'). */
  readonly hour: string;
}

/** What a rollupSourcesStatement read: the rolled hours (with the touch each generation saw) and the live ones, ascending, the summed days, and the server's time of the read. */
export interface ReadSources {
  readonly rolled: RolledHour[];
  readonly live: LiveHour[];
  readonly summed: { d: number; g: number | string; source: string; levels: number }[];
  /** The server's clock when the sources were read ('YYYY-MM-DD hh:mm:ss.fff', UTC). */
  readonly readAt?: string;
}

export function rollupSources(rows: readonly { kind: string; h: number | string; hour: string; g: number | string; source: string; seen: string; levels: number | string }[]): ReadSources {
  const clock = rows.find((r) => r.kind === 'n');
  return {
    rolled: rows.filter((r) => r.kind === 'h').map((r) => ({ h: Number(r.h), hour: r.hour, g: r.g, seen: r.seen })).sort((a, b) => a.h - b.h),
    live: rows.filter((r) => r.kind === 'l').map((r) => ({ h: Number(r.h), hour: r.hour })).sort((a, b) => a.h - b.h),
    summed: rows.filter((r) => r.kind === 'd').map((r) => ({ d: Number(r.h), g: r.g, source: r.source, levels: Number(r.levels) })),
    ...(clock ? { readAt: clock.seen } : {}),
  };
}

/** Up to this many runs of live hours, the FINAL part's created_at intervals are exactly the hours it reads. */
const EXACT_RUNS = 256;
/** Beyond EXACT_RUNS, the intervals are merged into this many, and the rolled-hour set in the statement makes the split exact. */
const LIVE_INTERVALS = 16;

/**
 * The hours the FINAL part reads, as intervals of created_at: the live hours (touched, no current
 * rollup: every row of sms_messages marks its hour, so an hour neither live nor rolled has no
 * row), and the hour of each createdAt bound that cuts its hour (such a rolled hour is read FINAL), so
 * that the minmax index on created_at skips every other granule. `exact`: the intervals are
 * exactly those hours; otherwise they are merged into LIVE_INTERVALS, a superset, and the
 * statement excludes the rolled hours it covers by their hour numbers. Null: nothing to read.
 */
export function liveEnvelope(live: readonly LiveHour[], cutBounds: readonly string[], bind: (value: string) => string): { sql: string; exact: boolean } | null {
  const runs: { first: string; firstH: number; endH: number }[] = [];
  for (const { h, hour } of live) {
    const run = runs[runs.length - 1];
    if (run && run.endH === h) run.endH = h + 1;
    else runs.push({ first: hour, firstH: h, endH: h + 1 });
  }
  if (runs.length === 0 && cutBounds.length === 0) return null;
  const exact = runs.length <= EXACT_RUNS;
  // Merge each run with the next across the shortest gap until few intervals remain (the rolled hours of the gaps are then excluded by the hour set).
  while (!exact && runs.length > LIVE_INTERVALS) {
    let narrowest = 0;
    for (let i = 1; i < runs.length - 1; i++) if (runs[i + 1]!.firstH - runs[i]!.endH < runs[narrowest + 1]!.firstH - runs[narrowest]!.endH) narrowest = i;
    runs.splice(narrowest, 2, { first: runs[narrowest]!.first, firstH: runs[narrowest]!.firstH, endH: runs[narrowest + 1]!.endH });
  }
  const endOf = (run: { endH: number }): string => new Date(run.endH * 3_600_000).toISOString().replace('T', ' ').replace('Z', '');
  const parts = runs.map((run) => `(created_at >= ${bind(run.first)} AND created_at < ${bind(endOf(run))})`);
  for (const p of cutBounds) parts.push(`(created_at >= toStartOfHour(${p}) AND created_at < toStartOfHour(${p}) + toIntervalHour(1))`);
  return { sql: `(${parts.join(' OR ')})`, exact };
}

/** The plan's createdAt bounds as [operator, epoch ms], or null when a bound's instant cannot be read. */
export function boundInstants(plan: RollupPlan, params: Record<string, unknown>): [string, number][] | null {
  const bounds: [string, number][] = [];
  for (const [op, placeholder] of plan.bounds) {
    const micros = boundMicros(placeholder, params);
    if (micros === null) return null;
    bounds.push([op, Math.floor(micros / 1000)]);
  }
  return bounds;
}

/** A bound's instant (its placeholder's DateTime64 text, 'YYYY-MM-DD hh:mm:ss[.ffffff]', UTC) in microseconds since 1970, or null when it is not one. */
function boundMicros(placeholder: string, params: Record<string, unknown>): number | null {
  const value = params[/^\{([A-Za-z0-9_]+):/.exec(placeholder)?.[1] ?? ''];
  const m = typeof value === 'string' ? /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?$/.exec(value) : null;
  const ms = m ? Date.parse(`${m[1]}T${m[2]}Z`) : Number.NaN;
  return m && Number.isFinite(ms) ? ms * 1000 + Number((m[3] ?? '').padEnd(6, '0')) : null;
}

/**
 * The placeholders of the plan's createdAt bounds that cut the hour they fall in: some of its
 * instants (created_at holds milliseconds) pass and some do not, so the FINAL part reads it. A
 * bound on an hour's edge (`createdAt_gte` at its start) leaves the hour whole, for the rollup.
 */
export function cuttingBounds(plan: RollupPlan, params: Record<string, unknown>): string[] {
  return plan.bounds.filter(([op, placeholder]) => {
    const b = boundMicros(placeholder, params);
    if (b === null) return true;
    const first = Math.floor(b / 3_600_000_000) * 3_600_000_000;
    const last = first + HOUR_LAST_MS * 1000;
    const passes = (t: number): boolean => (op === '>=' ? t >= b : op === '>' ? t > b : op === '<=' ? t <= b : t < b);
    return passes(first) !== passes(last);
  }).map(([, placeholder]) => placeholder);
}

/** The days (toRelativeDayNum) a createdAt bound of the plan falls in, or null when a bound's instant cannot be read (every day may be cut). */
export function cutDays(bounds: readonly [string, number][] | null): Set<number> | null {
  return bounds === null ? null : new Set(bounds.map(([, ms]) => Math.floor(ms / 86_400_000)));
}

/**
 * Whether no instant of the span [start, start + lastMs] passes the bounds, with a millisecond to
 * spare (a bound's instant may have microseconds): such an hour or day is left out of the
 * statement's sets, which the statement's own conditions would drop anyway.
 */
export function wholeSpanOutside(bounds: readonly [string, number][] | null, start: number, lastMs: number): boolean {
  if (bounds === null) return false;
  const last = start + lastMs;
  return bounds.some(([op, ms]) => ((op === '>=' || op === '>') && last < ms - 1) || ((op === '<=' || op === '<') && start > ms + 1));
}

/** A day of an organization whose current day rows were summed from exactly its current rolled hours. */
export interface SummedDay {
  /** toRelativeDayNum of the day. */
  readonly d: number;
  readonly g: number | string;
  /** The levels its generation wrote (sms_stats_days.levels): rows over projects only at DAY_LEVELS. */
  readonly levels: number;
}

/** The days whose summed hours are the day's current rolled hours: their day rows equal the sum of those hours' rows. */
export function usableDays(rolled: readonly RolledHour[], summed: readonly { d: number | string; g: number | string; source: string; levels: number }[]): SummedDay[] {
  const hoursOfDay = new Map<number, { h: number; g: number | string }[]>();
  for (const r of rolled) {
    const d = Math.floor(Number(r.h) / 24);
    hoursOfDay.set(d, [...(hoursOfDay.get(d) ?? []), { h: Number(r.h), g: r.g }]);
  }
  return summed
    .filter((s) => { const hours = hoursOfDay.get(Number(s.d)); return hours !== undefined && daySource(hours) === s.source; })
    .map((s) => ({ d: Number(s.d), g: s.g, levels: s.levels }));
}

/**
 * A touch that the kept sources' read did not see became visible after it, so arrived (by the
 * view's clock) later than the read's time minus the rollup's quiet period (StatsRollupOptions.quietMs:
 * an insert becomes visible within it); twice that, for a margin. Older touches were visible to
 * the read, which counted them in choosing each hour's state: the staleness check skips them.
 */
export const STALE_MARGIN_MS = 2 * STATS_ROLLUP_DEFAULTS.quietMs;

/** A ClickHouse DateTime64(3) text in UTC in epoch ms (NaN when it is not one). */
export const clickHouseMs = (value: string): number => Date.parse(fromClickHouseTime(value));

/** The instant after which a touch may be new to kept sources read at `readAt` (server clock), `marginMs` before it; undefined when the read's time is unknown (every touch is checked). */
export function staleSince(readAt: string | undefined, marginMs: number): number | undefined {
  const at = readAt === undefined ? Number.NaN : clickHouseMs(readAt);
  return Number.isFinite(at) ? at - marginMs : undefined;
}
