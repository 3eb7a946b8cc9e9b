// Delivery statistics of GET /sms/stats and GET /lookup/stats (docs/grammar-a.md, "Statistics"):
// the compiled stats query (core/filters/grammar-a/stats.ts) within a token's scope, one row
// per group. Each record counts once, with its newest state: the table is read FINAL, and the
// conditions on stable columns (written when the record is created, the same in every state
// row) run as PREWHERE before FINAL, exactly as `_group` of GET /sms (stores/scoped-query.ts).
import { AppError } from '../core/errors';
import type { CompiledStats, StatsKey } from '../core/filters/grammar-a/stats';
import { costs, LOOKUP_STATUSES, LOOKUP_SUBSCRIBER_STATUSES, SMS_FINAL_STATUSES, SMS_STATUS_COUNTERS } from '../core/filters/grammar-a/stats';
import { fromMicros } from '../core/money';
import type { LookupStatsRow, SmsStatsRow, StatsKeys, StatsReader, Visibility } from '../core/sms';
import type { ClickHouse } from '../infra/clickhouse';
import { ceilingSettings, exceededCeiling, type QueryCeilings } from './query-ceilings';
import { splitWhere, topLevelConjuncts } from './scoped-query';

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

// ---- The rollup of closed hours (migration 0015, docs/grammar-a.md "Statistics") ----
//
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

/** The last instant of an hour that created_at (DateTime64(3)) can hold, after its start. */
const HOUR_LAST_MS = 3_599_999;

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

/** SQL: true when every instant of the hour starting at `hour` passes the plan's createdAt bounds (they are intervals: both ends suffice). */
function wholeHour(plan: RollupPlan, hour: string): string {
  if (plan.bounds.length === 0) return '1';
  const last = `(${hour} + toIntervalMillisecond(${HOUR_LAST_MS}))`;
  return plan.bounds.map(([op, p]) => `(${hour} ${op} ${p} AND ${last} ${op} ${p})`).join(' AND ');
}

/** An hour of an organization whose current rollup generation no row has arrived after. */
export interface RolledHour {
  /** toRelativeHourNum of the hour (hours since 1970, UTC). */
  readonly h: number | string;
  /** The hour's start ('YYYY-MM-DD hh:00:00.000'). */
  readonly hour: string;
  readonly g: number | string;
}

/** The rolled hours of `orgId` a reader may use: the current generation of each, if nothing arrived for the hour since. */
export function rolledHoursStatement(ch: ClickHouse, orgId: string): { query: string; query_params: Record<string, unknown> } {
  return {
    query: `SELECT toRelativeHourNum(m.hour) AS h, toString(m.hour) AS hour, m.g AS g
      FROM (SELECT hour, max(generation) AS g, argMax(touched_at, generation) AS seen FROM ${ch.table('sms_stats_hours')} WHERE org_id = {__org:String} GROUP BY hour) AS m
      INNER JOIN (SELECT hour, max(touched_at) AS touched FROM ${ch.table('sms_stats_touched')} WHERE org_id = {__org:String} GROUP BY hour) AS t ON t.hour = m.hour
      WHERE t.touched <= m.seen ORDER BY h`,
    query_params: { __org: orgId },
  };
}

/** At most this many intervals of not-rolled hours bound the FINAL part by created_at (its minmax index); the exact split is the hour set. */
const LIVE_INTERVALS = 16;

/**
 * A superset of the hours the FINAL part reads, as at most LIVE_INTERVALS intervals of
 * created_at plus the hour of each createdAt bound (a rolled hour that a bound cuts is read
 * FINAL), so that the minmax index on created_at skips the rolled granules. The exact split is
 * the hour set in the statement.
 */
function liveEnvelope(rolled: readonly RolledHour[], plan: RollupPlan, bind: (value: string) => string): string {
  const hours = rolled.map((r) => ({ h: Number(r.h), start: r.hour }));
  // Runs of consecutive rolled hours; the gaps between them (and before the first, after the last) are read FINAL.
  const runs: { first: string; lastH: number; endH: number }[] = [];
  for (const { h, start } of hours) {
    const run = runs[runs.length - 1];
    if (run && run.endH === h) run.endH = h + 1;
    else runs.push({ first: start, lastH: h, endH: h + 1 });
  }
  // Merge the shortest runs into the gaps beside them until few intervals remain (their hours are still excluded exactly).
  while (runs.length > LIVE_INTERVALS) {
    let shortest = 1;
    for (let i = 1; i < runs.length - 1; i++) if (runs[i]!.endH - runs[i]!.lastH < runs[shortest]!.endH - runs[shortest]!.lastH) shortest = i;
    runs.splice(shortest, 1);
  }
  const endOf = (run: { endH: number }): string => new Date(run.endH * 3_600_000).toISOString().replace('T', ' ').replace('Z', '');
  const parts = [`created_at < ${bind(runs[0]!.first)}`];
  for (let i = 1; i < runs.length; i++) parts.push(`(created_at >= ${bind(endOf(runs[i - 1]!))} AND created_at < ${bind(runs[i]!.first)})`);
  parts.push(`created_at >= ${bind(endOf(runs[runs.length - 1]!))}`);
  for (const [, p] of plan.bounds) parts.push(`(created_at >= toStartOfHour(${p}) AND created_at < toStartOfHour(${p}) + toIntervalHour(1))`);
  return `(${parts.join(' OR ')})`;
}

/**
 * One statement: the rollup's rows of the rolled hours wholly inside the createdAt bounds,
 * UNION ALL sms_messages FINAL of every other hour, each aggregated by the keys, then merged
 * (sums, and the delivery-time states into the exact median). Same columns as statsStatement,
 * plus `out_of_range`.
 */
export function rollupStatement(ch: ClickHouse, v: Visibility, compiled: CompiledStats, plan: RollupPlan, rolled: readonly RolledHour[], settings: string = STATS_SETTINGS): { query: string; query_params: Record<string, unknown> } {
  const params: Record<string, unknown> = {
    ...compiled.params, __org: v.orgId, __project: v.projectId, __limit: compiled.limit, __offset: compiled.offset,
    __rh: rolled.map((r) => Number(r.h)), __rg: rolled.map((r) => Number(r.g)), __final: [...SMS_FINAL_STATUSES], __delivered: 'delivered',
  };
  SMS_STATUS_COUNTERS.forEach((s) => { params[`__s_${s}`] = s; });
  let envelope = 0;
  const bindTime = (value: string): string => { const name = `__e${envelope++}`; params[name] = value; return `{${name}:DateTime64(3, 'UTC')}`; };
  const keys = compiled.keys.map((k, i) => `${k.expression} AS k${i}`);
  const keyNames = compiled.keys.map((_, i) => `k${i}`).join(', ');
  const groupBy = keyNames ? ` GROUP BY ${keyNames}` : '';
  const scope = 'org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)})';
  const rollupWhere = [scope, '(toRelativeHourNum(created_at), generation) IN arrayZip({__rh:Array(UInt32)}, {__rg:Array(UInt64)})', wholeHour(plan, 'created_at'), ...plan.dimensions].join(' AND ');
  const fromRollup = `SELECT ${[...keys,
    'sum(messages) AS x_messages', 'sum(segments) AS x_segments',
    ...SMS_STATUS_COUNTERS.map((s) => `sumIf(messages, status = {__s_${s}:String}) AS x_n_${s}`),
    'sumIf(messages, status NOT IN {__final:Array(String)}) AS x_pending', 'sum(cost_micros) AS x_cost_micros',
    'quantileExactInclusiveMergeState(0.5)(delivery_ms) AS x_delivery', 'sum(out_of_range) AS x_out_of_range',
  ].join(', ')} FROM ${ch.table('sms_stats_hourly')} WHERE ${rollupWhere}${groupBy}`;
  const split = splitWhere('sms_messages', compiled.where);
  const notRolled = `NOT (toRelativeHourNum(created_at) IN {__rh:Array(UInt32)} AND ${wholeHour(plan, 'toStartOfHour(created_at)')})`;
  const ms = "dateDiff('millisecond', created_at, assumeNotNull(delivered_at))";
  const delivered = 'status = {__delivered:String} AND isNotNull(delivered_at)';
  const fromLive = `SELECT ${[...keys,
    'count() AS x_messages', 'sum(messages_count) AS x_segments',
    ...SMS_STATUS_COUNTERS.map((s) => `countIf(status = {__s_${s}:String}) AS x_n_${s}`),
    'countIf(status NOT IN {__final:Array(String)}) AS x_pending', `sumIf(price_user_micros, ${costs('{__s_canceled:String}')}) AS x_cost_micros`,
    `quantileExactInclusiveStateIf(0.5)(toUInt32(if(${ms} BETWEEN 0 AND 4294967295, ${ms}, 0)), ${delivered} AND ${ms} BETWEEN 0 AND 4294967295) AS x_delivery`,
    `countIf(${delivered} AND NOT (${ms} BETWEEN 0 AND 4294967295)) AS x_out_of_range`,
  ].join(', ')} FROM ${ch.table('sms_messages')} FINAL PREWHERE ${split.prewhere} AND ${liveEnvelope(rolled, plan, bindTime)} AND ${notRolled} WHERE ${split.where}${groupBy}`;
  const outer = [
    ...compiled.keys.map((_, i) => `k${i}`),
    'sum(x_messages) AS messages', 'sum(x_segments) AS segments', ...SMS_STATUS_COUNTERS.map((s) => `sum(x_n_${s}) AS n_${s}`),
    'sum(x_pending) AS pending', 'sum(x_cost_micros) AS cost_micros', 'quantileExactInclusiveMerge(0.5)(x_delivery) AS p50_delivery_ms', 'sum(x_out_of_range) AS out_of_range',
  ];
  const query = `SELECT ${outer.join(', ')} FROM (${fromRollup} UNION ALL ${fromLive})`
    + (keyNames ? ` GROUP BY ${keyNames} ORDER BY ${keyNames} ASC` : '')
    + ` LIMIT {__limit:UInt32} OFFSET {__offset:UInt32} SETTINGS ${settings}`;
  return { query, query_params: params };
}

export interface StatsRollupOptions {
  /** An hour is rolled once it ended this long ago (later changes make it roll again). */
  readonly settleMs: number;
  /**
   * ... and no row arrived for it during this long. An insert becomes visible within this time of
   * its arrival (the view's clock); a roll never misses a row that arrived before the touch it records.
   */
  readonly quietMs: number;
  /** Rows of a superseded generation are deleted this long after (a reader that chose it has finished: the stats ceiling is 10 s). */
  readonly graceMs: number;
  /** Hours of one organization rolled by one statement. */
  readonly hoursPerStatement: number;
  /** Hours rolled by one pass at most (the rest by the next). */
  readonly hoursPerPass: number;
}

export const STATS_ROLLUP_DEFAULTS: StatsRollupOptions = { settleMs: 3_600_000, quietMs: 300_000, graceMs: 600_000, hoursPerStatement: 24, hoursPerPass: 2_400 };

export interface RollupPass {
  /** Hours rolled (first time or again). */
  readonly hours: number;
  /** Hours still waiting (beyond hoursPerPass). */
  readonly waiting: number;
  readonly deletedGenerations: boolean;
}

/**
 * Writes the rollup (migration 0015): each pass rolls every hour of every organization that
 * ended `settleMs` ago, had no row arrive for `quietMs`, and is not rolled or had a row arrive
 * after its current generation. An hour's generation is the server time of the pass (ms), its
 * rows are written before the sms_stats_hours row that makes them current, so a pass that
 * stops half-way leaves only rows no reader uses; the next pass rolls the hour again.
 */
export class StatsRollup {
  constructor(private readonly ch: ClickHouse, private readonly options: StatsRollupOptions = STATS_ROLLUP_DEFAULTS) {}

  private async rows<R>(query: string, query_params: Record<string, unknown> = {}): Promise<R[]> {
    return (await this.ch.client.query({ query, query_params, format: 'JSONEachRow' })).json<R>();
  }

  async pass(): Promise<RollupPass> {
    const { ch, options } = this;
    const [clock] = await this.rows<{ now: string; generation: string }>(`SELECT toString(now64(3, 'UTC')) AS now, toUnixTimestamp64Milli(now64(3, 'UTC')) AS generation`);
    if (!clock) throw new Error('stats rollup: no server time');
    const due = await this.rows<{ org_id: string; hour: string; touched: string }>(
      `SELECT t.org_id AS org_id, toString(t.hour) AS hour, toString(t.touched) AS touched
       FROM (SELECT org_id, hour, max(touched_at) AS touched FROM ${ch.table('sms_stats_touched')} GROUP BY org_id, hour) AS t
       LEFT JOIN (SELECT org_id, hour, argMax(touched_at, generation) AS seen, 1 AS rolled FROM ${ch.table('sms_stats_hours')} GROUP BY org_id, hour) AS m
         ON m.org_id = t.org_id AND m.hour = t.hour
       WHERE t.hour + toIntervalMillisecond(3600000 + {settle:UInt64}) <= {now:DateTime64(3, 'UTC')}
         AND t.touched + toIntervalMillisecond({quiet:UInt64}) <= {now:DateTime64(3, 'UTC')}
         AND (m.rolled = 0 OR t.touched > m.seen)
       ORDER BY org_id, hour`,
      { now: clock.now, settle: options.settleMs, quiet: options.quietMs },
    );
    const todo = due.slice(0, options.hoursPerPass);
    const byOrg = new Map<string, { hour: string; touched: string }[]>();
    for (const row of todo) byOrg.set(row.org_id, [...(byOrg.get(row.org_id) ?? []), row]);
    for (const [org, hours] of byOrg) {
      for (let i = 0; i < hours.length; i += options.hoursPerStatement) {
        const chunk = hours.slice(i, i + options.hoursPerStatement);
        await this.rollHours(org, chunk, clock.generation);
      }
    }
    const deletedGenerations = todo.length > 0 ? await this.deleteSuperseded(clock.now) : false;
    return { hours: todo.length, waiting: due.length - todo.length, deletedGenerations };
  }

  /** Rolls `hours` of `org` as generation `generation`: their rows, then the rows that make them current. */
  private async rollHours(org: string, hours: readonly { hour: string; touched: string }[], generation: string): Promise<void> {
    const { ch } = this;
    const ms = "dateDiff('millisecond', created_at, assumeNotNull(delivered_at))";
    const delivered = "status = 'delivered' AND isNotNull(delivered_at)";
    // The read lane: on the embedded engine a second session, so the history writer's inserts do not queue behind this scan.
    await (ch.readLane?.() ?? ch.client).command({
      query: `INSERT INTO ${ch.table('sms_stats_hourly')}
        SELECT org_id, toStartOfHour(created_at) AS hour, {generation:UInt64}, project_id, direction, country, status,
               count(), sum(messages_count), sumIf(price_user_micros, ${costs('{canceled:String}')}),
               quantileExactInclusiveStateIf(0.5)(toUInt32(if(${ms} BETWEEN 0 AND 4294967295, ${ms}, 0)), ${delivered} AND ${ms} BETWEEN 0 AND 4294967295),
               countIf(${delivered} AND NOT (${ms} BETWEEN 0 AND 4294967295))
        FROM ${ch.table('sms_messages')} FINAL
        PREWHERE org_id = {org:String} AND created_at >= {first:DateTime64(3, 'UTC')} AND created_at < {last:DateTime64(3, 'UTC')} + toIntervalHour(1)
          AND toStartOfHour(created_at) IN {hours:Array(DateTime('UTC'))}
        GROUP BY org_id, hour, project_id, direction, country, status`,
      // Hours as 'YYYY-MM-DD hh:00:00' (DateTime); `hours` are in order.
      query_params: { org, hours: hours.map((h) => h.hour.slice(0, 19)), first: hours[0]?.hour, last: hours[hours.length - 1]?.hour, generation, canceled: 'canceled' },
    });
    await ch.client.insert({
      table: ch.table('sms_stats_hours'),
      values: hours.map((h) => ({ org_id: org, hour: h.hour, generation, touched_at: h.touched })),
      format: 'JSONEachRow',
    });
  }

  /** Deletes rollup rows of generations superseded more than graceMs ago (and of passes that stopped before making theirs current). */
  private async deleteSuperseded(now: string): Promise<boolean> {
    const { ch } = this;
    const stale = `SELECT r.org_id, r.created_at, r.generation
      FROM (SELECT DISTINCT org_id, created_at, generation FROM ${ch.table('sms_stats_hourly')}) AS r
      INNER JOIN (SELECT org_id, hour, max(generation) AS g FROM ${ch.table('sms_stats_hours')}
                  WHERE generation + {grace:UInt64} <= toUnixTimestamp64Milli({now:DateTime64(3, 'UTC')}) GROUP BY org_id, hour) AS m
        ON m.org_id = r.org_id AND m.hour = r.created_at
      WHERE r.generation < m.g`;
    const params = { now, grace: this.options.graceMs };
    const [found] = await this.rows<{ n: string }>(`SELECT count() AS n FROM (${stale})`, params);
    if (Number(found?.n ?? 0) === 0) return false;
    await ch.client.command({ query: `ALTER TABLE ${ch.table('sms_stats_hourly')} DELETE WHERE (org_id, created_at, generation) IN (${stale})`, query_params: params });
    return true;
  }
}

export class MessageStats implements StatsReader {
  private readonly settings: string;

  /** `rollup: false` reads sms_messages FINAL alone (the reference the rollup is tested and measured against). */
  constructor(private readonly ch: ClickHouse, private readonly ceilings: QueryCeilings = STATS_CEILINGS, private readonly options: { rollup: boolean } = { rollup: true }) {
    this.settings = ceilingSettings(ceilings);
  }

  private async rows(v: Visibility, compiled: CompiledStats): Promise<Raw[]> {
    // The read lane (infra/clickhouse.ts): a stats scan never queues GET /sms behind it.
    const client = this.ch.readLane?.() ?? this.ch.client;
    try {
      const result = await client.query({ ...statsStatement(this.ch, v, compiled, this.settings), format: 'JSONEachRow' });
      return await result.json<Raw>();
    } catch (err) {
      const limit = exceededCeiling(err, this.ceilings);
      if (limit === undefined) throw err;
      throw new AppError('QUERY_TOO_EXPENSIVE', `the statistics query went beyond ${limit}: narrow the filter (a shorter createdAt range, fewer groups) and retry`, { cause: err });
    }
  }

  /**
   * The rows of an SMS stats query: from the rollup of closed hours plus sms_messages FINAL for
   * every other hour when the filter allows it (rollupPlan), else from sms_messages FINAL alone.
   * Both give the same rows (test/integration/sms-stats-rollup.test.ts).
   */
  private async smsRows(v: Visibility, compiled: CompiledStats): Promise<Raw[]> {
    const plan = this.options.rollup ? rollupPlan(compiled.where) : null;
    if (plan === null) return this.rows(v, compiled);
    const client = this.ch.readLane?.() ?? this.ch.client;
    const rolled = await (await client.query({ ...rolledHoursStatement(this.ch, v.orgId), format: 'JSONEachRow' })).json<RolledHour>();
    if (rolled.length === 0) return this.rows(v, compiled);
    let raw: Raw[];
    try {
      raw = await (await client.query({ ...rollupStatement(this.ch, v, compiled, plan, rolled, this.settings), format: 'JSONEachRow' })).json<Raw>();
    } catch (err) {
      const limit = exceededCeiling(err, this.ceilings);
      if (limit === undefined) throw err;
      throw new AppError('QUERY_TOO_EXPENSIVE', `the statistics query went beyond ${limit}: narrow the filter (a shorter createdAt range, fewer groups) and retry`, { cause: err });
    }
    // A delivery time the rollup's UInt32 state cannot hold (before createdAt, or beyond 49 days): exact only from FINAL.
    if (raw.some((r) => n(r['out_of_range']) > 0)) return this.rows(v, compiled);
    return raw;
  }

  async sms(v: Visibility, compiled: CompiledStats, currency: string): Promise<SmsStatsRow[]> {
    if (compiled.subject !== 'sms') throw new Error('stats: an SMS query is needed');
    return (await this.smsRows(v, compiled)).map((raw) => {
      const counts = Object.fromEntries(SMS_STATUS_COUNTERS.map((s) => [s, n(raw[`n_${s}`])])) as Record<(typeof SMS_STATUS_COUNTERS)[number], number>;
      const messages = n(raw['messages']);
      const pending = n(raw['pending']);
      const final = messages - pending;
      const p50 = raw['p50_delivery_ms'];
      return {
        ...keysOf(compiled.keys, raw),
        messages,
        segments: n(raw['segments']),
        ...counts,
        pending,
        deliveryRate: final === 0 ? null : counts.delivered / final,
        cost: fromMicros(n(raw['cost_micros'])),
        currency,
        p50DeliverySeconds: counts.delivered === 0 || p50 === null || !Number.isFinite(Number(p50)) ? null : Number(p50) / 1000,
      };
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
