// Delivery statistics of GET /sms/stats and GET /lookup/stats (docs/grammar-a.md, "Statistics"):
// the compiled stats query (core/filters/grammar-a/stats.ts) within a token's scope, one row
// per group. Each record counts once, with its newest state: the table is read FINAL, and the
// conditions on stable columns (written when the record is created, the same in every state
// row) run as PREWHERE before FINAL, exactly as `_group` of GET /sms (stores/scoped-query.ts).
// SMS statistics are read from the rollup where it can answer (stores/stats-rollup-plan.ts says
// which hours, days and filters): the statements of such a read (rollupStatements) and the reader.
import { LRUCache } from 'lru-cache';
import { AppError } from '../core/errors';
import type { CompiledStats, StatsKey } from '../core/filters/grammar-a/stats';
import { costs, LOOKUP_STATUSES, LOOKUP_SUBSCRIBER_STATUSES, SMS_FINAL_STATUSES, SMS_STATUS_COUNTERS } from '../core/filters/grammar-a/stats';
import { fromMicros } from '../core/money';
import type { LookupStatsRow, SmsStatsRow, StatsKeys, StatsReader, Visibility } from '../core/sms';
import type { ClickHouse } from '../infra/clickhouse';
import { COARSE_BUCKETS, FINE_BUCKETS, fineBucketSql, HistogramMismatch, medianFromPlaces, medianPlacesSql, oneHotSql, placesOfRow, storedMedianMs } from './delivery-histogram';
import { toClickHouseTime } from './clickhouse-time';
import { ceilingSettings, exceededCeiling, type QueryCeilings } from './query-ceilings';
import { splitWhere } from './scoped-query';
import { DAY_LEVELS, DELIVERED_IN_RANGE, DELIVERED_OUT_OF_RANGE, DELIVERY_MS_U32, ROW_BUCKET } from './stats-rollup';
import {
  boundInstants, clickHouseMs, cutDays, cuttingBounds, DAY_LAST_MS, HOUR_LAST_MS, liveEnvelope, rollupPlan, rollupSources, rollupSourcesStatement, STALE_MARGIN_MS, staleSince, usableDays, wholeSpan, wholeSpanOutside,
  type LiveHour, type ReadSources, type RolledHour, type RollupPlan, type SummedDay,
} from './stats-rollup-plan';

type Raw = Record<string, string | number | null>;

const TABLES = { sms: 'sms_messages', lookup: 'lookups' } as const;

/** The ceiling of one stats statement (stores/query-ceilings.ts; tests lower it). */
const STATS_CEILINGS: QueryCeilings = { maxExecutionSeconds: 10, maxMemoryBytes: 1024 ** 3 };
const STATS_SETTINGS = ceilingSettings(STATS_CEILINGS);

/** The SELECT of a stats query within one scope (also used by bench/stats.ts). */
export function statsStatement(ch: ClickHouse, v: Visibility, compiled: CompiledStats, settings: string = STATS_SETTINGS): { query: string; query_params: Record<string, unknown> } {
  const table = TABLES[compiled.subject];
  const split = splitWhere(table, compiled.where);
  const grouped = compiled.keys.length > 0;
  const query = `SELECT ${compiled.select} FROM ${ch.table(table)} FINAL PREWHERE ${split.prewhere} WHERE ${split.where}`
    + (grouped ? ` GROUP BY ${compiled.groupBy} ORDER BY ${compiled.orderBy} ASC` : '')
    + ` LIMIT {__limit:UInt32} OFFSET {__offset:UInt32} SETTINGS ${settings}`;
  return { query, query_params: { ...compiled.params, __org: v.orgId, __project: v.projectId, __limit: compiled.limit, __offset: compiled.offset } };
}

/** A time bucket as ClickHouse writes it ('YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss[.fff]', UTC) in ISO 8601. */
export function isoPeriod(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}:\d{2}))?/.exec(value);
  if (!m) throw new Error(`stats: unexpected time bucket ${value}`);
  return `${m[1]}T${m[2] ?? '00:00:00'}.000Z`;
}

function keysOf(keys: readonly StatsKey[], raw: Raw): StatsKeys {
  const out: StatsKeys = {};
  keys.forEach((k, i) => {
    const value = raw[`k${i}`];
    out[k.name] = value === null || value === undefined ? null : k.kind === 'time' ? isoPeriod(String(value)) : String(value);
  });
  return out;
}

const n = (value: string | number | null | undefined): number => Number(value ?? 0);

/** How long a reader keeps an organization's sources: newer rolls and sums are used once it reads them again. */
const SOURCES_KEPT_MS = 30_000;
/** Organizations whose sources a reader keeps (the least recently read are forgotten). */
const SOURCES_KEPT_ORGS = 1_000;

/** A group's live sub-bucket counts in its median buckets, as the counts statement gives them (m_live_fine). */
type LiveFine = readonly (readonly [number | string, number | string, number | string])[] | undefined;

/** The sub-bucket histogram of `bucket`: the rolled parts' (`rolled`, from the second phase) plus the live part's, or undefined when neither holds one. */
export function withLiveFine(rolled: readonly number[] | undefined, live: LiveFine, bucket: number): readonly number[] | undefined {
  const mine = (live ?? []).filter(([b]) => Number(b) === bucket);
  if (mine.length === 0) return rolled;
  const sum = Array.from({ length: FINE_BUCKETS }, (_, i) => Number(rolled?.[i] ?? 0));
  for (const [, f, count] of mine) sum[Number(f)]! += Number(count);
  return sum;
}

/** The parameters a statement's placeholders name: the engine parses every parameter sent (thousands of hours cost milliseconds), used or not. */
function boundIn(query: string, params: Record<string, unknown>): Record<string, unknown> {
  const named = new Set(Array.from(query.matchAll(/\{([A-Za-z0-9_]+):/g), (m) => m[1]!));
  return Object.fromEntries(Object.entries(params).filter(([name]) => named.has(name)));
}

/** The parts of a rollup read, each with a histogram column of its own. */
const HIST_SOURCES = ['day', 'hour', 'live'] as const;
type HistSource = (typeof HIST_SOURCES)[number];
/** The parts whose sub-buckets the second phase reads (the live part's come with the counts). */
const ROLLED_SOURCES = ['day', 'hour'] as const;
type RolledSource = (typeof ROLLED_SOURCES)[number];
/** The live part's sub-bucket counts of each group, as (coarse bucket, sub-bucket, count). */
const LIVE_FINE_TYPE = 'Array(Tuple(UInt8, UInt8, UInt32))';

/** What a two-phase stats read rests on: the rolled hours and summed days it uses, pinned by generation, and the live hours. */
export interface RollupSources {
  readonly rolled: readonly RolledHour[];
  readonly live: readonly LiveHour[];
  readonly days: readonly SummedDay[];
  /**
   * Sources read earlier (kept by the reader; each rolled hour with the touch its generation
   * saw). The counts then carry `stale`: the rows of sms_stats_touched that make them out of
   * date (a touch of a rolled hour after what its generation saw, any touch of an hour neither
   * rolled nor live); any, or no row at all, and the read starts again from fresh sources.
   */
  readonly kept?: boolean;
  /** Epoch ms: every touch at or before it was visible to the kept read (staleSince), so the staleness check skips them; absent, it checks every touch. */
  readonly visibleBefore?: number;
  /**
   * The day part gives each group's stored median (storedMediansUsable) instead of its
   * histogram: the counts carry day_hists (the group's day rows with delivery times), day_lo
   * and day_hi (their stored places, migration 0022), and hist_day is empty.
   */
  readonly storedMedians?: boolean;
}

/**
 * Whether a query's groups are one day row each that holds delivery times: grouped by day and
 * country, a group's day rows differ only by status (delivered alone holds delivery times) and
 * direction (inbound messages are never delivered), in the rows summed over projects
 * (account-wide) as in those of one project. The counts check it (day_hists) all the same.
 */
export function wantsStoredMedians(compiled: CompiledStats): boolean {
  return compiled.keys.some((k) => k.token === 'daily') && compiled.keys.some((k) => k.token === 'country');
}

/** Whether every group of a storedMedians read has its median: from its one day row with delivery times (known places, no other part's values), or from the other parts alone. */
export function storedMediansUsable(rows: readonly Raw[]): boolean {
  return rows.every((r) => {
    const dayHists = n(r['day_hists']);
    if (dayHists === 0) return true;
    return dayHists === 1 && n(r['m_n']) === 0 && storedMedianMs(n(r['day_lo']), n(r['day_hi'])) !== null;
  });
}

/**
 * The statements of a stats query answered from the rollup: three parts split the messages
 * between them, each aggregated by the keys, then merged:
 *  - sms_stats_daily: the summed days wholly inside the createdAt bounds (none when grouped hourly);
 *  - sms_stats_hourly: the other rolled hours wholly inside the bounds;
 *  - sms_messages FINAL: every other hour.
 * `counts` answers every column but the median, with the coarse delivery-time histogram of each
 * group; `fine(buckets)` the sub-bucket histograms of the coarse buckets the medians fall in, by
 * keys and bucket (stores/delivery-histogram.ts), from the parts that hold values in them
 * (`counts` gives each part's histogram apart: hist_day, hist_hour, hist_live).
 */
export function rollupStatements(ch: ClickHouse, v: Visibility, compiled: CompiledStats, plan: RollupPlan, sources: RollupSources, settings: string = STATS_SETTINGS): {
  counts: { query: string; query_params: Record<string, unknown> };
  fine: (buckets: Readonly<Record<RolledSource, readonly number[]>>) => { query: string; query_params: Record<string, unknown> };
} {
  const { rolled, live: liveHours } = sources;
  // Account-wide, the day rows summed over projects (a quarter as many rows), unless a condition names the project; then
  // only days summed at that level (a rollup of an earlier version sums by project only: those days are read from their hours).
  const overProjects = v.projectId === null && !plan.dimensions.some((c) => /\bproject_id\b/.test(c));
  const allDays = overProjects ? sources.days.filter((d) => d.levels >= DAY_LEVELS) : sources.days;
  // The hour rows a query can take: of days without usable day rows, and of usable days a createdAt bound cuts (the others the day rows answer, or the bounds drop).
  const instants = boundInstants(plan, compiled.params);
  const cut = cutDays(instants);
  const days = allDays.filter((d) => !wholeSpanOutside(instants, d.d * 86_400_000, DAY_LAST_MS));
  const usable = new Set(days.map((d) => d.d));
  const hourly = rolled.filter((r) => {
    const d = Math.floor(Number(r.h) / 24);
    return (!usable.has(d) || cut === null || cut.has(d)) && !wholeSpanOutside(instants, Number(r.h) * 3_600_000, HOUR_LAST_MS);
  });
  const params: Record<string, unknown> = {
    ...compiled.params, __org: v.orgId, __project: v.projectId, __limit: compiled.limit, __offset: compiled.offset,
    __hh: hourly.map((r) => Number(r.h)), __hg: hourly.map((r) => Number(r.g)), __dd: days.map((d) => d.d), __dg: days.map((d) => Number(d.g)),
    __final: [...SMS_FINAL_STATUSES], __delivered: 'delivered',
  };
  SMS_STATUS_COUNTERS.forEach((s) => { params[`__s_${s}`] = s; });
  let bound = 0;
  const bindTime = (value: string): string => { const name = `__e${bound++}`; params[name] = value; return `{${name}:DateTime64(3, 'UTC')}`; };
  const keyNames = compiled.keys.map((_, i) => `k${i}`);
  const keys = compiled.keys.map((k, i) => `${k.expression} AS k${i}`);
  const by = (...more: string[]): string => ([...keyNames, ...more].length > 0 ? ` GROUP BY ${[...keyNames, ...more].join(', ')}` : '');
  const scope = 'org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)})';
  const dayTaken = (day: string): string => `(toRelativeDayNum(${day}) IN {__dd:Array(UInt32)} AND ${wholeSpan(plan, day, DAY_LAST_MS)})`;
  const dailyWhere = (dayScope: string): string => [dayScope, '(toRelativeDayNum(created_at), generation) IN arrayZip({__dd:Array(UInt32)}, {__dg:Array(UInt64)})', wholeSpan(plan, 'created_at', DAY_LAST_MS), ...plan.dimensions].join(' AND ');
  const hourlyWhere = [scope, 'toRelativeHourNum(created_at) IN {__hh:Array(UInt32)}', '(toRelativeHourNum(created_at), generation) IN arrayZip({__hh:Array(UInt32)}, {__hg:Array(UInt64)})', wholeSpan(plan, 'created_at', HOUR_LAST_MS),
    `NOT ${dayTaken('toStartOfDay(created_at)')}`, ...plan.dimensions].join(' AND ');
  const split = splitWhere('sms_messages', compiled.where);
  // Live hours no instant of which passes the bounds hold nothing the query counts.
  const liveInBounds = liveHours.filter((l) => !wholeSpanOutside(instants, l.h * 3_600_000, HOUR_LAST_MS));
  const envelope = liveEnvelope(liveInBounds, cuttingBounds(plan, compiled.params), bindTime);
  if (envelope && !envelope.exact) params['__rh'] = rolled.map((r) => Number(r.h));
  const notRolled = !envelope || envelope.exact ? '' : ` AND NOT (toRelativeHourNum(created_at) IN {__rh:Array(UInt32)} AND ${wholeSpan(plan, 'toStartOfHour(created_at)', HOUR_LAST_MS)})`;
  const live = envelope ? `${ch.table('sms_messages')} FINAL PREWHERE ${split.prewhere} AND ${envelope.sql}${notRolled} WHERE ${split.where}` : '';
  // The minmax index on created_at may skip granules under FINAL without reading the other versions of their rows (not exact mode): every
  // condition the index reads is on created_at, the same in every version of a message, so no newer version is left out of a row that matches.
  const finalSettings = `${settings}, use_skip_indexes_if_final = 1, use_skip_indexes_if_final_exact_mode = 0`;
  const delivered = 'status = {__delivered:String} AND isNotNull(delivered_at)';

  // Each part's histogram in a column of its own (the others empty), so that the second phase reads only the parts that hold values in the median's buckets.
  const histColumns = (source: HistSource, hist: string): string[] => HIST_SOURCES.map((s) => `${s === source ? hist : 'emptyArrayUInt64()'} AS x_hist_${s}`);
  const stored = sources.storedMedians === true;
  // Stored medians: the day part's groups carry their day rows' places instead of a histogram (the other parts: none).
  const storedColumns = (source: HistSource): string[] => (!stored ? [] : source === 'day'
    ? ['countIf(notEmpty(delivery_hist)) AS x_day_hists', 'anyIf(median_lo, notEmpty(delivery_hist)) AS x_day_lo', 'anyIf(median_hi, notEmpty(delivery_hist)) AS x_day_hi']
    : ['toUInt64(0) AS x_day_hists', 'toUInt16(0) AS x_day_lo', 'toUInt16(0) AS x_day_hi']);
  const rolledCounts = (table: string, where: string, source: HistSource): string => `SELECT ${[...keys,
    'sum(messages) AS x_messages', 'sum(segments) AS x_segments',
    ...SMS_STATUS_COUNTERS.map((s) => `sumIf(messages, status = {__s_${s}:String}) AS x_n_${s}`),
    'sumIf(messages, status NOT IN {__final:Array(String)}) AS x_pending', 'sum(cost_micros) AS x_cost_micros',
    ...histColumns(source, stored && source === 'day' ? 'emptyArrayUInt64()' : 'sumForEach(delivery_hist)'), 'sum(out_of_range) AS x_out_of_range', `CAST([] AS ${LIVE_FINE_TYPE}) AS x_live_fine`,
    ...storedColumns(source),
  ].join(', ')} FROM ${ch.table(table)} WHERE ${where}${by()}`;
  // The live part counts by keys, coarse and sub-bucket first, so that each group's histogram is built from one row per bucket,
  // and its sub-buckets come with the counts (no second read of sms_messages FINAL for the median: the same rows, one snapshot).
  const liveCounts = `SELECT ${[...keyNames,
    'sum(c) AS x_messages', 'sum(seg) AS x_segments', ...SMS_STATUS_COUNTERS.map((s) => `sum(n_${s}) AS x_n_${s}`),
    'sum(p) AS x_pending', 'sum(cost) AS x_cost_micros', ...histColumns('live', `sumForEach(${oneHotSql('b', 'd', COARSE_BUCKETS)})`), 'sum(oor) AS x_out_of_range',
    `CAST(groupArrayIf((b, f, toUInt32(d)), d > 0) AS ${LIVE_FINE_TYPE}) AS x_live_fine`, ...storedColumns('live'),
  ].join(', ')} FROM (SELECT ${[...keys, `${ROW_BUCKET(delivered)} AS b`, `if(${DELIVERED_IN_RANGE(delivered)}, ${fineBucketSql(DELIVERY_MS_U32)}, 0) AS f`,
    'count() AS c', 'sum(messages_count) AS seg', ...SMS_STATUS_COUNTERS.map((s) => `countIf(status = {__s_${s}:String}) AS n_${s}`),
    'countIf(status NOT IN {__final:Array(String)}) AS p', `sumIf(price_user_micros, ${costs('{__s_canceled:String}')}) AS cost`,
    `countIf(${DELIVERED_IN_RANGE(delivered)}) AS d`, `countIf(${DELIVERED_OUT_OF_RANGE(delivered)}) AS oor`,
  ].join(', ')} FROM ${live}${by('b', 'f')})${by()}`;
  const parts: { source: HistSource; sql: string }[] = [
    ...(days.length > 0 ? [{ source: 'day' as const, sql: overProjects ? rolledCounts('sms_stats_daily_org', dailyWhere('org_id = {__org:String}'), 'day') : rolledCounts('sms_stats_daily', dailyWhere(scope), 'day') }] : []),
    ...(hourly.length > 0 ? [{ source: 'hour' as const, sql: rolledCounts('sms_stats_hourly', hourlyWhere, 'hour') }] : []),
    ...(envelope ? [{ source: 'live' as const, sql: liveCounts }] : []),
  ];
  if (sources.kept) {
    // Only touches after `since` can be new to the kept read, so only the rolled hours whose generation saw a touch after it need their own bound.
    const since = sources.visibleBefore ?? null;
    const recent = since === null ? rolled : rolled.filter((r) => r.seen === undefined || !(clickHouseMs(r.seen) <= since));
    params['__lh'] = liveHours.map((l) => l.h);
    params['__sh'] = recent.map((r) => Number(r.h));
    params['__ss'] = recent.map((r) => r.seen);
    params['__st'] = toClickHouseTime(new Date(since ?? 0).toISOString());
  }
  // A touch row newer than what the hour's generation saw (hours not rolled: any), outside the live hours.
  const stale = !sources.kept ? [] : [`(SELECT count() FROM ${ch.table('sms_stats_touched')} WHERE org_id = {__org:String}
    AND touched_at > {__st:DateTime64(3, 'UTC')} AND toRelativeHourNum(hour) NOT IN {__lh:Array(UInt32)}
    AND touched_at > transform(toRelativeHourNum(hour), {__sh:Array(UInt32)}, {__ss:Array(DateTime64(3, 'UTC'))}, toDateTime64(0, 3, 'UTC'))) AS stale`];
  const totals = ['messages', 'segments', ...SMS_STATUS_COUNTERS.map((s) => `n_${s}`), 'pending', 'cost_micros', 'out_of_range'];
  const orderBy = keyNames.length > 0 ? ` ORDER BY ${keyNames.join(', ')} ASC` : '';
  const page = `${orderBy} LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`;
  // The groups with their totals and histograms: one part's rows are already grouped by the keys (no second aggregation); several parts are merged by the keys.
  const only = parts.length === 1 ? parts[0]! : undefined;
  const grouped = only
    ? `SELECT ${[...keyNames, ...totals.map((t) => `x_${t} AS ${t}`), ...stale, ...(stored ? ['x_day_hists AS day_hists', 'x_day_lo AS day_lo', 'x_day_hi AS day_hi'] : []), `CAST(x_hist_${only.source} AS Array(UInt32)) AS hist`, 'x_live_fine AS live_fine',
      ...HIST_SOURCES.map((s) => (s === only.source ? `hist AS hist_${s}` : `CAST([], 'Array(UInt32)') AS hist_${s}`))].join(', ')} FROM (${only.sql})${page}`
    : `SELECT ${[...keyNames, ...totals.map((t) => `sum(x_${t}) AS ${t}`), ...stale, ...(stored ? ['sum(x_day_hists) AS day_hists', 'max(x_day_lo) AS day_lo', 'max(x_day_hi) AS day_hi'] : []),
      ...HIST_SOURCES.map((s) => `CAST(sumForEach(x_hist_${s}) AS Array(UInt32)) AS hist_${s}`), 'groupArrayArray(x_live_fine) AS live_fine',
      `arrayMap((a, b, c) -> a + b + c, ${HIST_SOURCES.map((s) => `arrayResize(hist_${s}, ${COARSE_BUCKETS})`).join(', ')}) AS hist`,
    ].join(', ')} FROM (${parts.map((p) => p.sql).join(' UNION ALL ')})${by()}${page}`;
  // Where each group's median ranks lie (the sum of the parts' histograms), which rolled parts hold values there, and the live part's sub-buckets there: a few numbers per group, not the histograms.
  const placed = [...keyNames, ...totals, ...(stale.length > 0 ? ['stale'] : []), ...(stored ? ['day_hists', 'day_lo', 'day_hi'] : []),
    ...medianPlacesSql('hist', 'm_'), ...[0, 1].flatMap((k) => ROLLED_SOURCES.map((s) => `hist_${s}[m_b${k} + 1] > 0 AS m_${s}${k}`)),
    'arrayFilter(t -> tupleElement(t, 1) = m_b0 OR tupleElement(t, 1) = m_b1, live_fine) AS m_live_fine',
  ];
  const countsQuery = `SELECT ${placed.join(', ')} FROM (${grouped})${orderBy} SETTINGS ${finalSettings}`;
  const counts = { query: countsQuery, query_params: boundIn(countsQuery, params) };

  const fine = (buckets: Readonly<Record<RolledSource, readonly number[]>>): { query: string; query_params: Record<string, unknown> } => {
    const rolledFine = (table: string, where: string, source: HistSource): string =>
      `SELECT ${[...keys, 'bucket', 'sumForEach(fine) AS x_fine'].join(', ')} FROM ${ch.table(table)} WHERE ${where} AND bucket IN {__b_${source}:Array(UInt8)}${by('bucket')}`;
    const fineParts = [
      ...(days.length > 0 && buckets.day.length > 0 ? [rolledFine('sms_stats_daily_fine', dailyWhere(scope), 'day')] : []),
      ...(hourly.length > 0 && buckets.hour.length > 0 ? [rolledFine('sms_stats_hourly_fine', hourlyWhere, 'hour')] : []),
    ];
    // One part's rows are already grouped by keys and bucket.
    const merged = fineParts.length === 1 ? `SELECT ${[...keyNames, 'bucket', 'CAST(x_fine AS Array(UInt32)) AS fine'].join(', ')} FROM (${fineParts[0]!})`
      : `SELECT ${[...keyNames, 'bucket', 'CAST(sumForEach(x_fine) AS Array(UInt32)) AS fine'].join(', ')} FROM (${fineParts.join(' UNION ALL ')})${by('bucket')}`;
    const query = `${merged} SETTINGS ${finalSettings}`;
    return { query, query_params: boundIn(query, { ...params, __b_day: [...buckets.day], __b_hour: [...buckets.hour] }) };
  };
  return { counts, fine };
}

export class MessageStats implements StatsReader {
  private readonly settings: string;
  /**
   * SMS stats reads by how they were answered: from the rollup, from FINAL alone, rollup reads
   * started again (their two phases saw different rows), reads whose kept sources were stale, and
   * reads with stored medians started again with the histograms merged (a group was not one day row).
   */
  readonly reads = { rollup: 0, final: 0, retried: 0, stale: 0, merged: 0 };
  /** Each organization's rollup sources as last read, for SOURCES_KEPT_MS (newer rolls and sums are used once read again). */
  private readonly keptSources = new LRUCache<string, ReadSources>({ max: SOURCES_KEPT_ORGS, ttl: SOURCES_KEPT_MS });

  /**
   * `rollup: false` reads sms_messages FINAL alone (the reference the rollup is tested and measured against);
   * `staleMarginMs`: how long before a kept read's time a touch is taken as seen by it (STALE_MARGIN_MS; tests shorten it).
   */
  constructor(private readonly ch: ClickHouse, private readonly ceilings: QueryCeilings = STATS_CEILINGS, private readonly options: { rollup: boolean; staleMarginMs?: number } = { rollup: true }) {
    this.settings = ceilingSettings(ceilings);
  }

  private rows(v: Visibility, compiled: CompiledStats): Promise<Raw[]> {
    return this.statsQuery(statsStatement(this.ch, v, compiled, this.settings));
  }

  /** Runs a stats statement, a ceiling it went beyond as QUERY_TOO_EXPENSIVE. */
  private async statsQuery(statement: { query: string; query_params: Record<string, unknown> }): Promise<Raw[]> {
    // The read lane (infra/clickhouse.ts): a stats scan never queues GET /sms behind it.
    const client = this.ch.readLane?.() ?? this.ch.client;
    try {
      return await (await client.query({ ...statement, format: 'JSONEachRow' })).json<Raw>();
    } catch (err) {
      const limit = exceededCeiling(err, this.ceilings);
      if (limit === undefined) throw err;
      throw new AppError('QUERY_TOO_EXPENSIVE', `the statistics query went beyond ${limit}: narrow the filter (a shorter createdAt range, fewer groups) and retry`, { cause: err });
    }
  }

  /**
   * The rows of an SMS stats query: from the rollup (summed days, rolled hours) plus
   * sms_messages FINAL for every other hour when the filter allows it (rollupPlan), else from
   * sms_messages FINAL alone. Both give the same counts and a median within the histograms'
   * resolution (test/integration/sms-stats-rollup.test.ts, sms-stats-differential.test.ts).
   */
  private async smsRows(v: Visibility, compiled: CompiledStats): Promise<Raw[]> {
    const plan = this.options.rollup ? rollupPlan(compiled.where) : null;
    if (plan === null) return this.finalRows(v, compiled);
    // Kept sources may be stale (the counts say so), and the live part may change between the two phases (a DLR arriving: its
    // sub-buckets then miss a value); either starts the read again, from fresh sources. So does a group whose stored median
    // cannot answer (storedMediansUsable), with the histograms merged.
    let storedMedians = wantsStoredMedians(compiled);
    for (let attempt = 0; attempt < 4; attempt++) {
      const kept = attempt === 0 ? this.keptSources.get(v.orgId) : undefined;
      const read = kept ?? await this.readSources(v.orgId);
      const { rolled, live, summed } = read;
      if (rolled.length === 0) return this.finalRows(v, compiled);
      const days = compiled.keys.some((k) => k.token === 'hourly') ? [] : usableDays(rolled, summed);
      const visibleBefore = kept ? staleSince(read.readAt, this.options.staleMarginMs ?? STALE_MARGIN_MS) : undefined;
      const stored = storedMedians && days.length > 0;
      const statements = rollupStatements(this.ch, v, compiled, plan, { rolled, live, days, kept: kept !== undefined, storedMedians: stored, ...(visibleBefore === undefined ? {} : { visibleBefore }) }, this.settings);
      const raw = await this.statsQuery(statements.counts);
      if (kept && (raw.length === 0 || raw.some((r) => n(r['stale']) > 0))) {
        this.keptSources.delete(v.orgId);
        this.reads.stale += 1;
        continue;
      }
      // A delivery time the histograms cannot hold (before createdAt, or beyond 49 days): exact only from FINAL.
      if (raw.some((r) => n(r['out_of_range']) > 0)) return this.finalRows(v, compiled);
      if (stored && !storedMediansUsable(raw)) {
        storedMedians = false;
        this.reads.merged += 1;
        continue;
      }
      // Where each group's median ranks lie, and per rolled part the median buckets in which it holds values: the second phase reads only those.
      const placed = raw.map((r) => placesOfRow(r, 'm_'));
      const buckets = { day: new Set<number>(), hour: new Set<number>() };
      raw.forEach((r, i) => {
        placed[i]!.places.forEach(({ bucket }, k) => ROLLED_SOURCES.forEach((s) => { if (n(r[`m_${s}${k}`]) > 0) buckets[s].add(bucket); }));
      });
      // Each key as JSON (a string's quotes escaped), so that the joined text tells groups apart.
      const keyOf = (r: Raw): string => { let key = ''; for (let i = 0; i < compiled.keys.length; i++) key += `${JSON.stringify(r[`k${i}`] ?? null)},`; return key; };
      const fine = new Map<string, number[]>();
      if (ROLLED_SOURCES.some((s) => buckets[s].size > 0)) {
        const statement = statements.fine({ day: [...buckets.day], hour: [...buckets.hour] });
        for (const r of await this.statsQuery(statement)) fine.set(`${keyOf(r)}|${n(r['bucket'])}`, r['fine'] as unknown as number[]);
      }
      try {
        const medians = raw.map((r, i) => (stored && n(r['day_hists']) === 1 ? storedMedianMs(n(r['day_lo']), n(r['day_hi']))
          : medianFromPlaces(placed[i]!.counts, placed[i]!.places, (bucket) => withLiveFine(fine.get(`${keyOf(r)}|${bucket}`), r['m_live_fine'] as unknown as LiveFine, bucket))));
        raw.forEach((r, i) => { r['p50_delivery_ms'] = medians[i]!; });
        this.reads.rollup += 1;
        return raw;
      } catch (err) {
        if (!(err instanceof HistogramMismatch)) throw err;
        this.reads.retried += 1;
      }
    }
    return this.finalRows(v, compiled);
  }

  /** Reads the sources of an organization's rollup and keeps them for the next reads (SOURCES_KEPT_MS). */
  private async readSources(orgId: string): Promise<ReadSources> {
    const read = rollupSources((await this.statsQuery(rollupSourcesStatement(this.ch, orgId))) as unknown as Parameters<typeof rollupSources>[0]);
    this.keptSources.set(orgId, read);
    return read;
  }

  private finalRows(v: Visibility, compiled: CompiledStats): Promise<Raw[]> {
    this.reads.final += 1;
    return this.rows(v, compiled);
  }

  async sms(v: Visibility, compiled: CompiledStats, currency: string): Promise<SmsStatsRow[]> {
    if (compiled.subject !== 'sms') throw new Error('stats: an SMS query is needed');
    const counterColumns = SMS_STATUS_COUNTERS.map((s) => [s, `n_${s}`] as const);
    return (await this.smsRows(v, compiled)).map((raw) => {
      const row = keysOf(compiled.keys, raw) as Record<string, unknown>;
      const messages = n(raw['messages']);
      const pending = n(raw['pending']);
      const final = messages - pending;
      const p50 = raw['p50_delivery_ms'];
      row['messages'] = messages;
      row['segments'] = n(raw['segments']);
      for (const [status, column] of counterColumns) row[status] = n(raw[column]);
      const delivered = row['delivered'] as number;
      row['pending'] = pending;
      row['deliveryRate'] = final === 0 ? null : delivered / final;
      row['cost'] = fromMicros(n(raw['cost_micros']));
      row['currency'] = currency;
      row['p50DeliverySeconds'] = delivered === 0 || p50 === null || !Number.isFinite(Number(p50)) ? null : Number(p50) / 1000;
      return row as unknown as SmsStatsRow;
    });
  }

  async lookups(v: Visibility, compiled: CompiledStats, currency: string): Promise<LookupStatsRow[]> {
    if (compiled.subject !== 'lookup') throw new Error('stats: a lookup query is needed');
    return (await this.rows(v, compiled)).map((raw) => ({
      ...keysOf(compiled.keys, raw),
      lookups: n(raw['lookups']),
      ...(Object.fromEntries(LOOKUP_STATUSES.map((s) => [s, n(raw[`n_${s}`])])) as Record<(typeof LOOKUP_STATUSES)[number], number>),
      ...(Object.fromEntries(LOOKUP_SUBSCRIBER_STATUSES.map((s) => [s, n(raw[`sub_${s}`])])) as Record<(typeof LOOKUP_SUBSCRIBER_STATUSES)[number], number>),
      ported: n(raw['ported']),
      roaming: n(raw['roaming']),
      cost: fromMicros(n(raw['cost_micros'])),
      currency,
    }));
  }
}
