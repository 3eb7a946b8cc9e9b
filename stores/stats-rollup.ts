// The writer of the delivery statistics' rollup (migrations 0015 and 0018, docs/grammar-a.md
// "Statistics"): closed hours of sms_messages summed by the statistics' dimensions, with
// delivery-time histograms (stores/delivery-histogram.ts), and whole days summed from their
// rolled hours, by project and over projects, with each day row's median (migration 0022). stores/message-stats.ts reads it; pipelines/stats-rollup.ts runs the passes.
import { costs, DELIVERY_MS } from '../core/filters/grammar-a/stats';
import type { ClickHouse } from '../infra/clickhouse';
import { COARSE_BUCKETS, coarseBucketSql, FINE_BUCKETS, fineBucketSql, oneHotSql, withStoredMediansSql } from './delivery-histogram';

export interface StatsRollupOptions {
  /** An hour is rolled once it ended this long ago (later changes make it roll again); a day once it ended this long ago. */
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
  /** Days of one organization summed by one statement. */
  readonly daysPerStatement: number;
}

export const STATS_ROLLUP_DEFAULTS: StatsRollupOptions = { settleMs: 3_600_000, quietMs: 300_000, graceMs: 600_000, hoursPerStatement: 24, hoursPerPass: 2_400, daysPerStatement: 31 };

export interface RollupPass {
  /** Hours rolled (first time or again). */
  readonly hours: number;
  /** Hours still waiting (beyond hoursPerPass). */
  readonly waiting: number;
  /** Days summed (first time or again). */
  readonly days: number;
  readonly deletedGenerations: boolean;
}

/** A delivered message whose delivery time the histograms hold (0 .. 2^32-1 ms). */
const IN_RANGE = `${DELIVERY_MS} BETWEEN 0 AND 4294967295`;
export const DELIVERED_IN_RANGE = (delivered: string): string => `${delivered} AND ${IN_RANGE}`;
/** A delivered message whose delivery time the histograms cannot hold (before createdAt, or beyond 49 days): counted in out_of_range. */
export const DELIVERED_OUT_OF_RANGE = (delivered: string): string => `${delivered} AND NOT (${IN_RANGE})`;
/** The delivery time as UInt32 (0 where out of range: only read for rows DELIVERED_IN_RANGE). */
export const DELIVERY_MS_U32 = `toUInt32(if(${IN_RANGE}, ${DELIVERY_MS}, 0))`;
/** The coarse bucket of a row, or COARSE_BUCKETS (outside every histogram) for a row that is not a delivery the histograms hold. */
export const ROW_BUCKET = (delivered: string): string => `if(${DELIVERED_IN_RANGE(delivered)}, ${coarseBucketSql(DELIVERY_MS_U32)}, ${COARSE_BUCKETS})`;

const DIMENSIONS = 'project_id, direction, country, status';
/** The dimensions of the rows summed over projects (sms_stats_daily_org). */
const ORG_DIMENSIONS = 'direction, country, status';

/**
 * Per (organization, hour of created_at) with a row: its newest touch (`touched`), its current
 * roll (`g`, and the touch that roll saw, `seen`; `rolled` 0 when never rolled), and whether that
 * roll is current (`current`: rolled, and no row arrived since). `oneOrg`: only the organization
 * bound as {__org:String}. Read by the passes below and by the reader (stores/message-stats.ts).
 */
export function hourStatesSql(ch: ClickHouse, oneOrg: boolean): string {
  const where = oneOrg ? ' WHERE org_id = {__org:String}' : '';
  return `SELECT t.org_id AS org_id, t.hour AS hour, t.touched AS touched, m.g AS g, m.seen AS seen, m.rolled AS rolled, (m.rolled = 1 AND t.touched <= m.seen) AS current
    FROM (SELECT org_id, hour, max(touched_at) AS touched FROM ${ch.table('sms_stats_touched')}${where} GROUP BY org_id, hour) AS t
    LEFT JOIN (SELECT org_id, hour, max(generation) AS g, argMax(touched_at, generation) AS seen, 1 AS rolled FROM ${ch.table('sms_stats_hours')}${where} GROUP BY org_id, hour) AS m
      ON m.org_id = t.org_id AND m.hour = t.hour`;
}

/** The levels a pass sums a day at (sms_stats_days.levels, migration 0022): by project and over projects. */
export const DAY_LEVELS = 2;

/** Per (organization, day): the latest summed generation, the (hour, generation) list it summed (`source`) and the levels it wrote; `oneOrg` as in hourStatesSql. */
export function summedDaysSql(ch: ClickHouse, oneOrg: boolean): string {
  return `SELECT org_id, toRelativeDayNum(day) AS d, max(generation) AS g, argMax(source, generation) AS source, argMax(levels, generation) AS levels
    FROM ${ch.table('sms_stats_days')}${oneOrg ? ' WHERE org_id = {__org:String}' : ''} GROUP BY org_id, d`;
}

/** The canonical list of the (hour, generation) pairs a day is summed from: 'h:g,...' ascending by h. */
export function daySource(hours: readonly { readonly h: number; readonly g: number | string }[]): string {
  return [...hours].sort((a, b) => a.h - b.h).map((x) => `${x.h}:${x.g}`).join(',');
}

/**
 * Writes the rollup: each pass rolls every hour of every organization that ended `settleMs`
 * ago, had no row arrive for `quietMs`, and is not rolled or had a row arrive after its current
 * generation; then sums every day that ended `settleMs` ago whose touched hours are all rolled
 * and current, unless its current day rows were summed from exactly those hours. A generation is
 * the server time of the pass (ms); rows are written before the marker (sms_stats_hours,
 * sms_stats_days) that makes them current, so a pass that stops half-way leaves only rows no
 * reader uses, and the next pass rolls again.
 */
export class StatsRollup {
  constructor(private readonly ch: ClickHouse, private readonly options: StatsRollupOptions = STATS_ROLLUP_DEFAULTS) {}

  private async rows<R>(query: string, query_params: Record<string, unknown> = {}): Promise<R[]> {
    return (await this.ch.client.query({ query, query_params, format: 'JSONEachRow' })).json<R>();
  }

  /** The read lane: on the embedded engine a second session, so the history writer's inserts do not queue behind a roll. */
  private command(query: string, query_params: Record<string, unknown>): Promise<unknown> {
    return (this.ch.readLane?.() ?? this.ch.client).command({ query, query_params });
  }

  async pass(): Promise<RollupPass> {
    const { ch, options } = this;
    const [clock] = await this.rows<{ now: string; generation: string }>(`SELECT toString(now64(3, 'UTC')) AS now, toUnixTimestamp64Milli(now64(3, 'UTC')) AS generation`);
    if (!clock) throw new Error('stats rollup: no server time');
    const due = await this.rows<{ org_id: string; hour: string; touched: string }>(
      `SELECT s.org_id AS org_id, toString(s.hour) AS hour, toString(s.touched) AS touched FROM (${hourStatesSql(ch, false)}) AS s
       WHERE s.hour + toIntervalMillisecond(3600000 + {settle:UInt64}) <= {now:DateTime64(3, 'UTC')}
         AND s.touched + toIntervalMillisecond({quiet:UInt64}) <= {now:DateTime64(3, 'UTC')}
         AND (s.rolled = 0 OR s.touched > s.seen)
       ORDER BY org_id, hour`,
      { now: clock.now, settle: options.settleMs, quiet: options.quietMs },
    );
    const todo = due.slice(0, options.hoursPerPass);
    const byOrg = new Map<string, { hour: string; touched: string }[]>();
    for (const row of todo) byOrg.set(row.org_id, [...(byOrg.get(row.org_id) ?? []), row]);
    for (const [org, hours] of byOrg) {
      for (let i = 0; i < hours.length; i += options.hoursPerStatement) {
        await this.rollHours(org, hours.slice(i, i + options.hoursPerStatement), clock.generation);
      }
    }
    const days = await this.rollDays(clock);
    const deletedHours = todo.length > 0 ? await this.deleteSuperseded(['sms_stats_hourly', 'sms_stats_hourly_fine'], 'sms_stats_hours', 'hour', clock.now) : false;
    const deletedDays = days > 0 ? await this.deleteSuperseded(['sms_stats_daily', 'sms_stats_daily_org', 'sms_stats_daily_fine'], 'sms_stats_days', 'day', clock.now) : false;
    return { hours: todo.length, waiting: due.length - todo.length, days, deletedGenerations: deletedHours || deletedDays };
  }

  /** Rolls `hours` of `org` as generation `generation`: their sub-bucket rows, their rows, then the markers that make them current. */
  private async rollHours(org: string, hours: readonly { hour: string; touched: string }[], generation: string): Promise<void> {
    const { ch } = this;
    const delivered = "status = 'delivered' AND isNotNull(delivered_at)";
    const scope = `org_id = {org:String} AND created_at >= {first:DateTime64(3, 'UTC')} AND created_at < {last:DateTime64(3, 'UTC')} + toIntervalHour(1)
          AND toStartOfHour(created_at) IN {hours:Array(DateTime('UTC'))}`;
    // Hours as 'YYYY-MM-DD hh:00:00' (DateTime); `hours` are in order.
    const params = { org, hours: hours.map((h) => h.hour.slice(0, 19)), first: hours[0]?.hour, last: hours[hours.length - 1]?.hour, generation, canceled: 'canceled' };
    await this.command(
      `INSERT INTO ${ch.table('sms_stats_hourly_fine')} (org_id, created_at, generation, project_id, direction, country, status, bucket, fine)
       SELECT org_id, hour, {generation:UInt64}, ${DIMENSIONS}, b, sumForEach(${oneHotSql('f', 'c', FINE_BUCKETS)})
       FROM (SELECT org_id, toStartOfHour(created_at) AS hour, ${DIMENSIONS}, ${coarseBucketSql(DELIVERY_MS_U32)} AS b, ${fineBucketSql(DELIVERY_MS_U32)} AS f, count() AS c
             FROM ${ch.table('sms_messages')} FINAL PREWHERE ${scope} WHERE ${DELIVERED_IN_RANGE(delivered)}
             GROUP BY org_id, hour, ${DIMENSIONS}, b, f)
       GROUP BY org_id, hour, ${DIMENSIONS}, b`,
      params,
    );
    await this.command(
      `INSERT INTO ${ch.table('sms_stats_hourly')} (org_id, created_at, generation, project_id, direction, country, status, messages, segments, cost_micros, delivery_hist, out_of_range)
       SELECT org_id, hour, {generation:UInt64}, ${DIMENSIONS}, sum(c), sum(seg), sum(cost), if(sum(d) = 0, [], sumForEach(${oneHotSql('b', 'd', COARSE_BUCKETS)})), sum(oor)
       FROM (SELECT org_id, toStartOfHour(created_at) AS hour, ${DIMENSIONS}, ${ROW_BUCKET(delivered)} AS b,
                    count() AS c, sum(messages_count) AS seg, sumIf(price_user_micros, ${costs('{canceled:String}')}) AS cost,
                    countIf(${DELIVERED_IN_RANGE(delivered)}) AS d, countIf(${DELIVERED_OUT_OF_RANGE(delivered)}) AS oor
             FROM ${ch.table('sms_messages')} FINAL PREWHERE ${scope}
             GROUP BY org_id, hour, ${DIMENSIONS}, b)
       GROUP BY org_id, hour, ${DIMENSIONS}`,
      params,
    );
    await ch.client.insert({
      table: ch.table('sms_stats_hours'),
      values: hours.map((h) => ({ org_id: org, hour: h.hour, generation, touched_at: h.touched })),
      format: 'JSONEachRow',
    });
  }

  /** Sums the days that are due (see the class) from their current rolled hours; returns how many. */
  private async rollDays(clock: { now: string; generation: string }): Promise<number> {
    const { ch, options } = this;
    const hours = await this.rows<{ org_id: string; d: number; h: number; g: string; current: number }>(
      `SELECT s.org_id AS org_id, toRelativeDayNum(s.hour) AS d, toRelativeHourNum(s.hour) AS h, s.g AS g, s.current AS current FROM (${hourStatesSql(ch, false)}) AS s
       WHERE toStartOfDay(s.hour) + toIntervalMillisecond(86400000 + {settle:UInt64}) <= {now:DateTime64(3, 'UTC')}`,
      { now: clock.now, settle: options.settleMs },
    );
    const summed = await this.rows<{ org_id: string; d: number; source: string; levels: number }>(summedDaysSql(ch, false));
    // A day summed at fewer levels (by a rollup of an earlier version) is summed again.
    const current = new Map(summed.map((r) => [`${r.org_id}|${r.d}`, Number(r.levels) >= DAY_LEVELS ? r.source : '']));
    const days = new Map<string, { org: string; d: number; hours: { h: number; g: string }[]; ready: boolean }>();
    for (const row of hours) {
      const key = `${row.org_id}|${row.d}`;
      const day = days.get(key) ?? { org: row.org_id, d: Number(row.d), hours: [], ready: true };
      if (Number(row.current) !== 1) day.ready = false;
      else day.hours.push({ h: Number(row.h), g: row.g });
      days.set(key, day);
    }
    const todo = [...days.entries()].filter(([key, day]) => day.ready && current.get(key) !== daySource(day.hours)).map(([, day]) => day);
    const byOrg = new Map<string, typeof todo>();
    for (const day of todo) byOrg.set(day.org, [...(byOrg.get(day.org) ?? []), day]);
    for (const [org, orgDays] of byOrg) {
      for (let i = 0; i < orgDays.length; i += options.daysPerStatement) {
        await this.sumDays(org, orgDays.slice(i, i + options.daysPerStatement), clock.generation);
      }
    }
    return todo.length;
  }

  /**
   * Sums `days` of `org` as generation `generation`: their sub-bucket rows, their rows by project
   * (sms_stats_daily) and over projects (sms_stats_daily_org), each row with its median's places
   * (migration 0022) found in the sub-buckets just written, then the markers that make them current.
   */
  private async sumDays(org: string, days: readonly { d: number; hours: readonly { h: number; g: string }[] }[], generation: string): Promise<void> {
    const { ch } = this;
    const pairs = days.flatMap((day) => day.hours);
    const params = { org, generation, hs: pairs.map((p) => p.h), gs: pairs.map((p) => p.g), ds: days.map((day) => day.d) };
    const rolled = 'org_id = {org:String} AND (toRelativeHourNum(created_at), generation) IN arrayZip({hs:Array(UInt32)}, {gs:Array(UInt64)})';
    const summed = (table: string): string => `${ch.table(table)} WHERE org_id = {org:String} AND generation = {generation:UInt64} AND toRelativeDayNum(created_at) IN {ds:Array(UInt32)}`;
    const carry = ['messages', 'segments', 'cost_micros', 'delivery_hist', 'out_of_range'];
    const sums = 'sum(messages) AS messages, sum(segments) AS segments, sum(cost_micros) AS cost_micros, sumForEach(delivery_hist) AS delivery_hist, sum(out_of_range) AS out_of_range';
    /** Writes `rows` (day rows by `dimensions`, each with `carry`) into `table` with their medians' places, found in `fine` (their sub-buckets). */
    const insertWithMedians = (table: string, dimensions: string, rows: string, fine: string): Promise<unknown> => this.command(
      `INSERT INTO ${ch.table(table)} (org_id, created_at, generation, ${dimensions}, ${carry.join(', ')}, median_lo, median_hi)
       SELECT org_id, day, {generation:UInt64}, ${dimensions}, ${carry.join(', ')}, median_lo, median_hi
       FROM (${withStoredMediansSql(rows, fine, ['org_id', 'day', ...dimensions.split(', ')], carry)})`,
      params,
    );
    await this.command(
      `INSERT INTO ${ch.table('sms_stats_daily_fine')} (org_id, created_at, generation, project_id, direction, country, status, bucket, fine)
       SELECT org_id, toStartOfDay(created_at) AS day, {generation:UInt64}, ${DIMENSIONS}, bucket, sumForEach(fine)
       FROM ${ch.table('sms_stats_hourly_fine')} WHERE ${rolled} GROUP BY org_id, day, ${DIMENSIONS}, bucket`,
      params,
    );
    await insertWithMedians('sms_stats_daily', DIMENSIONS,
      `SELECT org_id, toStartOfDay(created_at) AS day, ${DIMENSIONS}, ${sums} FROM ${ch.table('sms_stats_hourly')} WHERE ${rolled} GROUP BY org_id, day, ${DIMENSIONS}`,
      `SELECT org_id, created_at AS day, ${DIMENSIONS}, bucket, fine FROM ${summed('sms_stats_daily_fine')}`);
    await insertWithMedians('sms_stats_daily_org', ORG_DIMENSIONS,
      `SELECT org_id, created_at AS day, ${ORG_DIMENSIONS}, ${sums} FROM ${summed('sms_stats_daily')} GROUP BY org_id, day, ${ORG_DIMENSIONS}`,
      `SELECT org_id, created_at AS day, ${ORG_DIMENSIONS}, bucket, sumForEach(fine) AS fine FROM ${summed('sms_stats_daily_fine')} GROUP BY org_id, day, ${ORG_DIMENSIONS}, bucket`);
    await ch.client.insert({
      table: ch.table('sms_stats_days'),
      values: days.map((day) => ({ org_id: org, day: new Date(day.d * 86_400_000).toISOString().replace('T', ' ').replace('Z', ''), generation, source: daySource(day.hours), levels: DAY_LEVELS })),
      format: 'JSONEachRow',
    });
  }

  /** Deletes rows of `tables` whose generation was superseded in `markers` more than graceMs ago (and of passes that stopped before making theirs current). */
  private async deleteSuperseded(tables: readonly string[], markers: string, at: 'hour' | 'day', now: string): Promise<boolean> {
    const { ch } = this;
    const params = { now, grace: this.options.graceMs };
    let deleted = false;
    for (const table of tables) {
      const stale = `SELECT r.org_id, r.created_at, r.generation
        FROM (SELECT DISTINCT org_id, created_at, generation FROM ${ch.table(table)}) AS r
        INNER JOIN (SELECT org_id, ${at}, max(generation) AS g FROM ${ch.table(markers)}
                    WHERE generation + {grace:UInt64} <= toUnixTimestamp64Milli({now:DateTime64(3, 'UTC')}) GROUP BY org_id, ${at}) AS m
          ON m.org_id = r.org_id AND m.${at} = r.created_at
        WHERE r.generation < m.g`;
      const [found] = await this.rows<{ n: string }>(`SELECT count() AS n FROM (${stale})`, params);
      if (Number(found?.n ?? 0) === 0) continue;
      await ch.client.command({ query: `ALTER TABLE ${ch.table(table)} DELETE WHERE (org_id, created_at, generation) IN (${stale})`, query_params: params });
      deleted = true;
    }
    return deleted;
  }
}
