// Lists of current records without FINAL (docs/grammar-a.md, "List query plan"), read from the
// list copy of a history table (migration 0009): the same rows, ReplacingMergeTree(updated_at),
// keyed (org_id, created_at, id), so the default order is the key read backwards.
//  1. candidates: rows of any version that match, in list order (`updated_at DESC` breaks the
//     tie between versions of one id), `LIMIT` what the page needs plus a little: ClickHouse
//     reads the key in order and stops there;
//  2. verification: the newest `updated_at` of each candidate id, by key (created_at, id); a
//     candidate is a current record exactly when it is that newest version (the first one kept
//     per id). A record whose newest version matches is always a candidate, so the kept rows
//     are the rows `FINAL` + `WHERE` gives, in the same order; when older versions made the
//     page short while more candidates exist, ask again for four times as many;
//  3. the page: a deep page's candidates are keys only, and its rows are then fetched by key.
import type { CompiledQuery } from '../core/filters/grammar-a';
import type { Visibility } from '../core/sms/history-ports';
import type { ClickHouse } from '../infra/clickhouse';

export const SCOPE = `org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)})`;

export const scopeParams = (v: Visibility): Record<string, unknown> => ({ __org: v.orgId, __project: v.projectId });

/** The list copy of each history table (migration 0009). */
export const LIST_TABLES: Readonly<Record<string, string>> = { sms_messages: 'sms_list', lookups: 'lookups_list' };

/** Up to this many rows, candidates come with every column (ClickHouse materializes the top rows lazily). */
const FULL_ROWS_MAX = 100;
/** Candidates asked beyond what is needed, for the older versions that fail verification. */
const CANDIDATE_SLACK = 8;

export interface ListOptions {
  /** Pages ending beyond this row read candidates as keys, then fetch the page (tests lower it). */
  readonly fullRowsMax?: number;
}

interface Keyed { created_at: string; id: string; updated_at: string }

export async function listRows<R>(
  ch: ClickHouse, table: string, columns: string, v: Visibility, compiled: CompiledQuery, options: ListOptions = {},
): Promise<R[]> {
  const list = LIST_TABLES[table];
  if (list === undefined) throw new Error(`no list table for ${table}`);
  const need = compiled.offset + compiled.limit;
  const full = need <= (options.fullRowsMax ?? FULL_ROWS_MAX);
  const params = { ...compiled.params, ...scopeParams(v), __org: v.orgId };
  let current: Keyed[] = [];
  for (let ask = need + CANDIDATE_SLACK; ; ask *= 4) {
    const result = await ch.client.query({
      query: `SELECT ${full ? columns : 'created_at, id, updated_at'} FROM ${ch.table(list)} WHERE ${SCOPE} AND (${compiled.where})
              ORDER BY ${compiled.orderBy}, updated_at DESC LIMIT {__limit:UInt32}`,
      query_params: { ...params, __limit: ask },
      format: 'JSONEachRow',
    });
    const candidates = await result.json<Keyed>();
    current = await keepNewest(ch, list, v.orgId, candidates);
    if (current.length >= need || candidates.length < ask) break;
  }
  const page = current.slice(compiled.offset, need);
  if (full || page.length === 0) return page as unknown as R[];
  return fetchPage<R>(ch, list, columns, v.orgId, page);
}

/** The key of rows (created_at, id) as parameters: both IN sets are primary-key ranges. */
const keyParams = (orgId: string, rows: readonly Keyed[]): Record<string, unknown> => ({
  __org: orgId, __times: [...new Set(rows.map((r) => r.created_at))], __ids: [...new Set(rows.map((r) => r.id))],
});
const BY_KEY = `org_id = {__org:String} AND created_at IN {__times:Array(DateTime64(3, 'UTC'))} AND id IN {__ids:Array(String)}`;

/** The candidates that are the newest version of their id, in their order, one per id. */
async function keepNewest(ch: ClickHouse, list: string, orgId: string, candidates: readonly Keyed[]): Promise<Keyed[]> {
  if (candidates.length === 0) return [];
  const result = await ch.client.query({
    query: `SELECT id, max(updated_at) AS updated_at FROM ${ch.table(list)} WHERE ${BY_KEY} GROUP BY id`,
    query_params: keyParams(orgId, candidates),
    format: 'JSONEachRow',
  });
  const newest = new Map((await result.json<Keyed>()).map((r) => [r.id, r.updated_at]));
  const kept = new Set<string>();
  return candidates.filter((c) => {
    if (kept.has(c.id) || newest.get(c.id) !== c.updated_at) return false;
    kept.add(c.id);
    return true;
  });
}

/** Full rows of the page (its candidates were read as keys only), newest version, in the page's order. */
async function fetchPage<R>(ch: ClickHouse, list: string, columns: string, orgId: string, page: readonly Keyed[]): Promise<R[]> {
  const result = await ch.client.query({
    query: `SELECT ${columns} FROM ${ch.table(list)} WHERE ${BY_KEY} ORDER BY id, updated_at DESC LIMIT 1 BY id`,
    query_params: keyParams(orgId, page),
    format: 'JSONEachRow',
  });
  const byId = new Map((await result.json<R & Keyed>()).map((r) => [r.id, r]));
  return page.map((k) => byId.get(k.id)).filter((r): r is R & Keyed => r !== undefined);
}
