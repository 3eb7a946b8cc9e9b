// Audience search (spec 3 §4.2) over ClickHouse: the compiled Grammar B filter, the filter*
// restrictions, keyset paging with signed cursors, the total, and aggregations. Every
// statement reads `audience FINAL` with `deleted = 0` scoped to the path's project, and
// events only through subqueries scoped to the same project.
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../core/errors';
import {
  checkCompiledSize, compileFilter, loadSegments, MATERIALIZED_ATTRIBUTE_COLUMNS, QUERY_MAX_EXECUTION_SECONDS, QUERY_MAX_MEMORY_BYTES, QUERY_MAX_ROWS_TO_READ, openCursor, ParamBinder, parseQuery, rangeBound, rangeValue, restrictionsSql, signCursor, sqlContext, termValues,
  type Aggregation, type AudienceQuery, type SearchRequest, type SegmentSource, type SqlContext,
} from '../core/filters/grammar-b';
import type { SearchResult, SearchScope } from '../core/filters/grammar-b/ports';
import type { ClickHouse } from '../infra/clickhouse';
import { ceilingSettings, exceededCeiling, type QueryCeilings } from './query-ceilings';
import { contactEntity, ESSENTIAL_COLUMNS, FULL_COLUMNS, type ContactRow } from './audience-rows';
import type { SearchCosts } from './search-fairness';

export type { SearchResult, SearchScope } from '../core/filters/grammar-b/ports';

/** The cost ceiling of each statement of a search (core/filters/grammar-b/limits.ts; tests lower it). */
export const DEFAULT_CEILING: QueryCeilings = {
  maxExecutionSeconds: QUERY_MAX_EXECUTION_SECONDS, maxRowsToRead: QUERY_MAX_ROWS_TO_READ, maxMemoryBytes: QUERY_MAX_MEMORY_BYTES,
};

/**
 * How every statement reads `audience FINAL` (migration 0017's skip indexes): skip indexes apply
 * under FINAL, in exact mode, which also reads the ranges of other parts holding the keys of a
 * selected range, so a skipped newer version never leaves an older matching one as the answer.
 * Both are ClickHouse's defaults today; they are written here because exactness depends on them.
 */
export const FINAL_SETTINGS = 'use_skip_indexes_if_final = 1, use_skip_indexes_if_final_exact_mode = 1';

/**
 * The page statement in `_user_id` order (the default, and every cursor page of it) whose filter
 * reads the audience alone: the audience is read in its key order until the page is full, so one
 * reading thread in blocks of one granule stops sooner than two threads reading ahead in
 * 65,505-row blocks (cursor pages of 1,000 on 1 M contacts: p50 30 against 34 ms, interleaved,
 * 2026-11-27). Pages in another order read every match and sort them, and a filter with an event
 * group or segment subquery scans events first (one thread: 411 against 277 ms on 10 M events):
 * both keep the engine's threads. Settings change no answer.
 */
export const KEY_ORDER_PAGE_SETTINGS = 'max_threads = 1, max_block_size = 8192';

function keyOrderPage(query: AudienceQuery, plan: Plan): boolean {
  return query.sort.sql === 'user_id' && !/\bSELECT\b/i.test(plan.where);
}

/**
 * Fair share between organizations (stores/search-fairness.ts): the statements of an organization
 * over its share while another one searches run on the engine's `heavy` read lane (a chdb session
 * of their own), one at a time (heavyTurn), with `heavySettings` appended (a lower CPU priority:
 * `os_thread_priority`, optionally fewer `max_threads`).
 */
export interface SearchFairness {
  readonly costs: SearchCosts;
  /** ClickHouse settings, `name = value, ...`, appended to a heavy organization's statements ('' for none). */
  readonly heavySettings: string;
}

/** The statement settings of a heavy organization: `os_thread_priority` (nice 1-19; 0 = unchanged) and `max_threads` (0 = unchanged). */
export function heavySettings(nice: number, maxThreads: number): string {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new RangeError(`nice must be 0-19, got ${nice}`);
  if (!Number.isInteger(maxThreads) || maxThreads < 0) throw new RangeError(`maxThreads must be a non-negative integer, got ${maxThreads}`);
  return [nice > 0 ? `os_thread_priority = ${nice}` : '', maxThreads > 0 ? `max_threads = ${maxThreads}` : ''].filter(Boolean).join(', ');
}

interface Plan {
  readonly c: SqlContext;
  /** Whose cost the statements count to (the scope's organization, else its project). */
  readonly org: string;
  /** project scope, tree and restrictions: the rows the query is about. */
  readonly where: string;
}

export class AudienceSearch {
  /**
   * Searches run on the engine's read lane (infra/clickhouse.ts `readLane`): on the embedded
   * engine a chdb session of their own, so that a search never queues the SMS API's reads.
   */
  private readonly client: ClickHouseClient;
  /** Appended to every statement: per statement, never the session's settings (chdb applies `clickhouse_settings` as a session-wide SET). */
  private readonly settings: string;
  /** The fairness's heavySettings (`, name = value, ...`, or ''), last in a heavy organization's statements so that they win. */
  private readonly heavySettings: string;

  constructor(
    private readonly ch: ClickHouse, private readonly segments: SegmentSource, private readonly cursorKey: Buffer,
    private readonly ceiling: QueryCeilings = DEFAULT_CEILING,
    private readonly fairness?: SearchFairness,
  ) {
    this.client = ch.readLane?.() ?? ch.client;
    this.settings = ` SETTINGS ${ceilingSettings(ceiling)}, ${FINAL_SETTINGS}`;
    this.heavySettings = fairness === undefined || fairness.heavySettings === '' ? '' : `, ${fairness.heavySettings}`;
  }

  /**
   * Heavy statements enter the engine one at a time: the embedded chdb 3.4 runs every statement
   * with bound parameters one at a time process-wide (node_modules/chdb/index.js
   * `globalParamChain`), so each heavy statement queued there is one more that another
   * organization's statement (and `GET /sms`) arriving later waits behind.
   */
  private heavyTail: Promise<void> = Promise.resolve();

  private async heavyTurn(): Promise<() => void> {
    let release: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => { release = resolve; });
    const before = this.heavyTail;
    this.heavyTail = before.then(() => mine);
    await before;
    return release;
  }

  /** The heavy lane, opened on the first heavy statement. */
  private heavyClient(): ClickHouseClient {
    return this.ch.readLane?.('heavy') ?? this.ch.client;
  }

  private tables() {
    return { audience: this.ch.table('audience'), events: this.ch.table('events') };
  }

  private async plan(query: AudienceQuery, scope: SearchScope): Promise<Plan> {
    const c = sqlContext(new ParamBinder(), this.tables(), scope.project, scope.timezone, scope.now);
    const segments = await loadSegments(query.root, scope.project, this.segments);
    const parts = [`project_id = ${c.project}`, 'deleted = 0', compileFilter(query.root, c, segments), ...restrictionsSql(query.restrictions, c)];
    const where = parts.filter((p) => p !== '1').join(' AND ');
    checkCompiledSize(where, c.binder.params);
    return { c, org: scope.org ?? scope.project, where };
  }

  private pageSql(query: AudienceQuery, plan: Plan, after: readonly [string | number, string] | null): string {
    const { c } = plan;
    const dir = query.sort.asc ? 'ASC' : 'DESC';
    let keyset = '';
    if (after !== null) {
      const cmp = query.sort.asc ? '>' : '<';
      const u = c.binder.bind('String', after[1]);
      // Sorted by _user_id alone, the key is the primary key's second column: a plain bound.
      keyset = query.sort.sql === 'user_id' ? ` AND user_id ${cmp} ${u}`
        : ` AND (${query.sort.sql} ${cmp} ${c.binder.bind(query.sort.type, after[0])} OR (${query.sort.sql} = ${c.binder.bind(query.sort.type, after[0])} AND user_id ${cmp} ${u}))`;
    }
    const columns = query.includeAllData ? FULL_COLUMNS : ESSENTIAL_COLUMNS;
    return `SELECT ${columns}, ${query.sort.sql} AS __sort FROM ${c.tables.audience} FINAL WHERE ${plan.where}${keyset}
      ORDER BY ${query.sort.sql === 'user_id' ? '' : `__sort ${dir}, `}user_id ${dir} LIMIT ${c.binder.bind('UInt32', query.limit + 1)} OFFSET ${c.binder.bind('UInt32', after === null ? query.offset : 0)}`;
  }

  async search(request: SearchRequest, scope: SearchScope): Promise<SearchResult> {
    let query: AudienceQuery;
    let after: readonly [string | number, string] | null = null;
    let knownTotal: number | null = null;
    if (request.kind === 'cursor') {
      const state = openCursor(this.cursorKey, request.cursor, scope.project, scope.now.getTime());
      query = parseQuery(state.continuation, request.limit ?? state.limit);
      after = state.after;
      knownTotal = state.total;
    } else {
      query = request.query;
    }
    const plan = await this.plan(query, scope);
    const { c } = plan;
    const totalSql = `SELECT count() AS n FROM ${c.tables.audience} FINAL WHERE ${plan.where}`;
    const pageSql = query.limit === 0 ? null : this.pageSql(query, plan, after);
    // Aggregations are not repeated on cursor pages (docs/grammar-b.md).
    const aggregating = query.aggregations.length === 0 || request.kind === 'cursor' ? null : this.aggregate(query.aggregations, plan);
    const [rows, counted, aggregations] = await Promise.all([
      pageSql === null ? Promise.resolve([]) : this.rows<ContactRow & { __sort: string | number }>(pageSql, c.binder.params, plan.org, keyOrderPage(query, plan) ? KEY_ORDER_PAGE_SETTINGS : ''),
      // A cursor page reports the first page's total instead of counting again.
      knownTotal === null ? this.rows<{ n: string | number }>(totalSql, c.binder.params, plan.org) : Promise.resolve([{ n: knownTotal }]),
      aggregating,
    ]);
    const total = Number(counted[0]?.n ?? 0);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    const cursor = rows.length > query.limit && last !== undefined
      ? signCursor(this.cursorKey, { project: scope.project, continuation: query.continuation, after: [last.__sort, last.user_id], limit: query.limit, total }, scope.now.getTime())
      : null;
    const result: SearchResult = { entities: page.map((r) => contactEntity(r, query.includeAllData)), total, cursor };
    return aggregations === null ? result : { ...result, aggregations };
  }

  /** `extra`: settings of this statement alone (`name = value, ...`), after the search's own. */
  private async rows<R>(query: string, params: Record<string, unknown>, org: string, extra = ''): Promise<R[]> {
    const costs = this.fairness?.costs;
    // Decided per statement: an organization becomes heavy, or light again, between two statements of one search.
    const heavy = costs?.heavy(org) ?? false;
    costs?.started(org);
    const started = performance.now();
    const done = heavy ? await this.heavyTurn() : (): void => undefined;
    try {
      const settings = `${this.settings}${extra === '' ? '' : `, ${extra}`}${heavy ? this.heavySettings : ''}`;
      const result = await (heavy ? this.heavyClient() : this.client).query({ query: `${query}${settings}`, query_params: params, format: 'JSONEachRow' });
      return await result.json<R>();
    } catch (err) {
      const limit = exceededCeiling(err, this.ceiling);
      if (limit === undefined) throw err;
      throw new AppError('QUERY_TOO_EXPENSIVE', `the search went beyond ${limit}, the ceiling of every audience query: narrow the filter (fewer event groups, a smaller sample, fewer aggregations) and retry`, { cause: err });
    } finally {
      done();
      costs?.finished(org, performance.now() - started);
    }
  }

  private async aggregate(aggs: readonly Aggregation[], plan: Plan): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    // `*` leaves out MATERIALIZED columns (client_tags_distinct, migration 0021): named so terms can read them.
    const contacts = `SELECT ${['*', ...MATERIALIZED_ATTRIBUTE_COLUMNS].join(', ')} FROM ${plan.c.tables.audience} FINAL WHERE ${plan.where}`;
    for (const agg of aggs) {
      if (agg.kind === 'nested') {
        const events = `SELECT * FROM ${plan.c.tables.events} AS e WHERE e.project_id = ${plan.c.project}
          AND e.user_id IN (SELECT user_id FROM ${plan.c.tables.audience} FINAL WHERE ${plan.where})`;
        const inner: Record<string, unknown> = {};
        for (const a of agg.aggs) inner[a.name] = await this.one(a, `(${events}) AS e`, true, plan);
        const n = await this.rows<{ n: string }>(`SELECT count() AS n FROM (${events})`, plan.c.binder.params, plan.org);
        out[agg.name] = { count: Number(n[0]?.n ?? 0), aggregations: inner };
      } else {
        out[agg.name] = await this.one(agg, `(${contacts})`, false, plan);
      }
    }
    return out;
  }

  private async one(agg: Aggregation, from: string, events: boolean, plan: Plan): Promise<unknown> {
    const { c } = plan;
    if (agg.kind === 'terms') {
      const values = termValues(agg.field, events, c);
      const sql = `SELECT key, n, sum(n) OVER () AS all FROM (SELECT arrayJoin(${values}) AS key, count() AS n FROM ${from} GROUP BY key)
        ORDER BY n DESC, key ASC LIMIT ${c.binder.bind('UInt32', agg.size)}`;
      const rows = await this.rows<{ key: string; n: string; all: string }>(sql, c.binder.params, plan.org);
      const buckets = rows.map((r) => ({ key: r.key, count: Number(r.n) }));
      const all = Number(rows[0]?.all ?? 0);
      const shown = buckets.reduce((s, b) => s + b.count, 0);
      return agg.otherBucket ? { buckets, other: { key: agg.otherLabel, count: all - shown } } : { buckets };
    }
    if (agg.kind === 'range') {
      const v = rangeValue(agg.field, events, c);
      const counts = agg.ranges.map((r, i) => {
        const parts = [`isNotNull(${v.sql})`];
        if (r.from !== null) parts.push(`${v.sql} >= ${rangeBound(r.from, c)}`);
        if (r.to !== null) parts.push(`${v.sql} < ${rangeBound(r.to, c)}`);
        return `countIf(${parts.join(' AND ')}) AS r${i}`;
      });
      const row = (await this.rows<Record<string, string>>(`SELECT ${counts.join(', ')} FROM ${from}`, c.binder.params, plan.org))[0] ?? {};
      return { buckets: agg.ranges.map((r, i) => ({ key: r.key, from: r.from, to: r.to, count: Number(row[`r${i}`] ?? 0) })) };
    }
    throw new TypeError('nested aggregations do not nest');
  }
}
