// Lists of current records without FINAL (docs/grammar-a.md, "List query plan"), read from the
// list copy of a history table (migration 0009): the same rows, ReplacingMergeTree(updated_at),
// keyed (org_id, created_at, id), so the default order is the key read backwards.
//  1. candidates: keys (created_at, id, updated_at) of rows of any version that match, in list
//     order, `LIMIT` what the page needs plus a little: ClickHouse reads the key in order and
//     stops there;
//  2. verification: the newest `updated_at` of each candidate id, by key (created_at, id); a
//     candidate is a current record exactly when it is that newest version (the first one kept
//     per id). A record whose newest version matches is always a candidate, so the kept rows
//     are the rows `FINAL` + `WHERE` gives, in the same order; when older versions made the
//     page short while more candidates exist, ask again for four times as many;
//  3. the page: for a short list the verification reads the newest rows whole (two queries); a
//     deep page verifies keys only and then fetches its own rows by key (three).
import type { CompiledQuery } from '../core/filters/grammar-a';
import type { Visibility } from '../core/sms/history-ports';
import type { ClickHouse } from '../infra/clickhouse';

export const SCOPE = `org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)})`;

export const scopeParams = (v: Visibility): Record<string, unknown> => ({ __org: v.orgId, __project: v.projectId });

/** The list copy of each history table (migration 0009). */
export const LIST_TABLES: Readonly<Record<string, string>> = { sms_messages: 'sms_list', lookups: 'lookups_list' };

/** Up to this many rows, the verification reads the candidates' rows whole (they are the page). */
const FULL_ROWS_MAX = 100;
/** Candidates asked beyond what is needed, for the older versions that fail verification. */
const CANDIDATE_SLACK = 8;

export interface ListOptions {
  /** Pages ending beyond this row verify keys only, then fetch the page by key (tests lower it). */
  readonly fullRowsMax?: number;
}

interface Keyed { created_at: string; id: string; updated_at: string }

export async function listRows<R>(
  ch: ClickHouse, table: string, columns: string, v: Visibility, compiled: CompiledQuery, options: ListOptions = {},
): Promise<R[]> {
  const list = LIST_TABLES[table];
  if (list === undefined) throw new Error(`no list table for ${table}`);
  const need = compiled.offset + compiled.limit;
  // A short list: the newest version of every candidate is read whole, and is the page's row.
  const whole = need <= (options.fullRowsMax ?? FULL_ROWS_MAX);
  const params = { ...compiled.params, ...scopeParams(v) };
  let current: Keyed[] = [];
  let rows = new Map<string, Keyed>();
  for (let ask = need + CANDIDATE_SLACK; ; ask *= 4) {
    // No `updated_at` in the order: it would stop ClickHouse reading the key in order (a tenfold
    // cost), and only the newest version of an id is kept, wherever its older ones sort.
    const result = await ch.client.query({
      query: `SELECT created_at, id, updated_at FROM ${ch.table(list)} WHERE ${SCOPE} AND (${compiled.where})
              ORDER BY ${compiled.orderBy} LIMIT {__limit:UInt32}`,
      query_params: { ...params, __limit: ask },
      format: 'JSONEachRow',
    });
    const candidates = await result.json<Keyed>();
    rows = await newestByKey(ch, list, whole ? columns : 'id, updated_at', v.orgId, candidates);
    current = keepNewest(candidates, rows);
    if (current.length >= need || candidates.length < ask) break;
  }
  const page = current.slice(compiled.offset, need);
  if (page.length === 0) return [];
  if (!whole) rows = await newestByKey(ch, list, columns, v.orgId, page);
  return page.map((k) => rows.get(k.id)).filter((r): r is Keyed => r !== undefined) as unknown as R[];
}

/** The key of rows (created_at, id) as parameters: both IN sets are primary-key ranges. */
const keyParams = (orgId: string, rows: readonly Keyed[]): Record<string, unknown> => ({
  __org: orgId, __times: [...new Set(rows.map((r) => r.created_at))], __ids: [...new Set(rows.map((r) => r.id))],
});

/** The newest version of each id among `keys`, read by key: `columns` (with id and updated_at) by id. */
async function newestByKey(ch: ClickHouse, list: string, columns: string, orgId: string, keys: readonly Keyed[]): Promise<Map<string, Keyed>> {
  if (keys.length === 0) return new Map();
  const result = await ch.client.query({
    query: `SELECT ${columns} FROM ${ch.table(list)}
            WHERE org_id = {__org:String} AND created_at IN {__times:Array(DateTime64(3, 'UTC'))} AND id IN {__ids:Array(String)}
            ORDER BY id, updated_at DESC LIMIT 1 BY id`,
    query_params: keyParams(orgId, keys),
    format: 'JSONEachRow',
  });
  return new Map((await result.json<Keyed>()).map((r) => [r.id, r]));
}

/** The candidates that are the newest version of their id, in their order, one per id. */
function keepNewest(candidates: readonly Keyed[], newest: ReadonlyMap<string, Keyed>): Keyed[] {
  const kept = new Set<string>();
  return candidates.filter((c) => {
    if (kept.has(c.id) || newest.get(c.id)?.updated_at !== c.updated_at) return false;
    kept.add(c.id);
    return true;
  });
}
