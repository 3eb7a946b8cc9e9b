// Reads of a history table limited to what a token may see (one organization, and one
// project unless the token is account-wide), with WHERE/ORDER BY compiled from a catalogue
// (Grammar A). Scope parameters are prefixed `__` so they never clash with compiled ones.
import type { CompiledQuery } from '../core/filters/grammar-a';
import type { ClickHouse } from '../infra/clickhouse';

/** Who may see which rows. */
export interface Visibility {
  readonly orgId: string;
  readonly projectId: string | null;
}

const SCOPE = `org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)})`;

const scopeParams = (v: Visibility): Record<string, unknown> => ({ __org: v.orgId, __project: v.projectId });

export async function getRow<R>(ch: ClickHouse, table: string, columns: string, v: Visibility, id: string): Promise<R | null> {
  const result = await ch.client.query({
    query: `SELECT ${columns} FROM ${ch.table(table)} FINAL WHERE ${SCOPE} AND id = {__id:String} LIMIT 1`,
    query_params: { ...scopeParams(v), __id: id },
    format: 'JSONEachRow',
  });
  return (await result.json<R>())[0] ?? null;
}

export async function listRows<R>(ch: ClickHouse, table: string, columns: string, v: Visibility, compiled: CompiledQuery): Promise<R[]> {
  const result = await ch.client.query({
    query: `SELECT ${columns} FROM ${ch.table(table)} FINAL WHERE ${SCOPE} AND (${compiled.where})
            ORDER BY ${compiled.orderBy} LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`,
    query_params: { ...compiled.params, ...scopeParams(v), __limit: compiled.limit, __offset: compiled.offset },
    format: 'JSONEachRow',
  });
  return result.json<R>();
}

export interface GroupCount {
  readonly group: string;
  readonly count: number;
}

/** `_group`: counts per time bucket or per field value, ordered by group (docs/grammar-a.md). */
export async function groupCounts(ch: ClickHouse, table: string, v: Visibility, compiled: CompiledQuery): Promise<GroupCount[]> {
  if (!compiled.group) return [];
  const result = await ch.client.query({
    query: `SELECT toString(${compiled.group.expression}) AS group_key, count() AS n FROM ${ch.table(table)} FINAL
            WHERE ${SCOPE} AND (${compiled.where}) GROUP BY group_key ORDER BY group_key
            LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`,
    query_params: { ...compiled.params, ...scopeParams(v), __limit: compiled.limit, __offset: compiled.offset },
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ group_key: string; n: string | number }>();
  // Time buckets come back as 'YYYY-MM-DD hh:mm:ss' (UTC); the API speaks ISO 8601.
  const key = compiled.group.kind === 'time' ? (k: string) => `${k.replace(' ', 'T')}.000Z` : (k: string) => k;
  return rows.map((r) => ({ group: key(r.group_key), count: Number(r.n) }));
}
