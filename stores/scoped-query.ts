// Reads of a history table limited to what a token may see (one organization, and one
// project unless the token is account-wide), with WHERE/ORDER BY compiled from a catalogue
// (Grammar A). Scope parameters are prefixed `__` so they never clash with compiled ones.
//
// The tables are ReplacingMergeTree (one row per state change, the newest per id wins), so
// every read is FINAL. Lists stay fast on large organizations without changing results
// (docs/grammar-a.md, "List query plan"; bench/list-filter.ts):
//  - conditions only on stable columns (written once when the record is created and copied
//    unchanged into each later state row) run as PREWHERE, before FINAL: all versions of a
//    record agree on them, so filtering before or after choosing the newest row is the same;
//  - pages ordered by `created_at DESC` (the default) are read newest first in time slices,
//    [now-1d, ∞), [now-7d, now-1d), [now-30d, now-7d), (-∞, now-30d), stopping once the page is
//    full. Every row of a slice sorts before every row of the next, so the concatenation is
//    the exact order; a minmax index on created_at (migration 0004) lets each slice read
//    only its granules.
import type { CompiledQuery } from '../core/filters/grammar-a';
import type { GroupCount, Visibility } from '../core/sms';
import type { ClickHouse } from '../infra/clickhouse';
import { toClickHouseTime } from './clickhouse-time';

export type { GroupCount, Visibility } from '../core/sms';

const SCOPE = `org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)})`;

const scopeParams = (v: Visibility): Record<string, unknown> => ({ __org: v.orgId, __project: v.projectId });

/**
 * Columns whose value is the same in every state row of a record: set when it is created and
 * never changed by a later state (the `settle` activity in activities/lifecycle.ts changes only
 * status, status_code, sent_at, delivered_at and updated_at; lookups have one row each).
 * A writer that starts changing one of these must take it out of this list.
 */
const STABLE_COLUMNS: Readonly<Record<string, ReadonlySet<string>>> = {
  sms_messages: new Set([
    'id', 'org_id', 'project_id', 'token_id', 'source', 'direction', 'client_id', 'sender', 'country', 'recipient', 'normalized_to',
    'chars_count', 'text', 'delivered_text', 'messages_count', 'encoding', 'unicode', 'allow_unicode',
    'price_per_sms_micros', 'price_user_micros', 'currency', 'created_at', 'scheduled_at',
  ]),
  lookups: new Set(['id', 'org_id', 'project_id', 'token_id', 'source', 'country', 'recipient', 'normalized_to', 'currency', 'created_at']),
};

/**
 * Where the versions of a table's records are read for verification (`keepNewest`): a narrow
 * table with small granules (migration 0008), else the table itself.
 */
const VERSIONS: Readonly<Record<string, string>> = { sms_messages: 'sms_versions' };

/** Words the Grammar A compiler writes into `where` that are not columns. */
const SQL_WORDS: ReadonlySet<string> = new Set([
  'AND', 'OR', 'NOT', 'IN', 'IS', 'NULL', 'isNull', 'isNotNull', 'position', 'positionCaseInsensitiveUTF8', 'startsWith', 'endsWith',
  'lowerUTF8', 'arrayExists', 'arrayMap', '_v',
]);

/** `where` split at its top-level ANDs; placeholders `{pN:Type}` and '' literals are opaque. */
export function topLevelConjuncts(where: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < where.length;) {
    const c = where[i];
    if (c === '{' || c === "'") {
      const end = where.indexOf(c === '{' ? '}' : "'", i + 1);
      i = end < 0 ? where.length : end + 1;
      continue;
    }
    if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (depth === 0 && where.startsWith(' AND ', i)) {
      parts.push(where.slice(start, i));
      i += 5;
      start = i;
      continue;
    }
    i += 1;
  }
  parts.push(where.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p.length > 0 && p !== '1');
}

/** True when every name in the condition is a stable column or a word of ours. */
function onStableColumns(condition: string, stable: ReadonlySet<string>): boolean {
  const names = condition.replace(/\{[^}]*\}/g, ' ').replace(/'[^']*'/g, ' ').match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [];
  return names.every((name) => SQL_WORDS.has(name) || stable.has(name));
}

interface Split {
  /** Conditions on stable columns plus the scope: PREWHERE, before FINAL. */
  readonly prewhere: string;
  /** The rest, after FINAL. */
  readonly where: string;
}

export function splitWhere(table: string, compiledWhere: string): Split {
  const stable = STABLE_COLUMNS[table] ?? new Set<string>();
  const pre = [SCOPE];
  const post: string[] = [];
  for (const condition of topLevelConjuncts(compiledWhere)) (onStableColumns(condition, stable) ? pre : post).push(condition);
  return { prewhere: pre.join(' AND '), where: post.length === 0 ? '1' : post.join(' AND ') };
}

export async function getRow<R>(ch: ClickHouse, table: string, columns: string, v: Visibility, id: string): Promise<R | null> {
  const result = await ch.client.query({
    query: `SELECT ${columns} FROM ${ch.table(table)} FINAL WHERE ${SCOPE} AND id = {__id:String} LIMIT 1`,
    query_params: { ...scopeParams(v), __id: id },
    format: 'JSONEachRow',
  });
  return (await result.json<R>())[0] ?? null;
}

/** Time slices of a newest-first read: boundaries in days before now. */
const SLICE_DAYS = [1, 7, 30] as const;
const DAY_MS = 86_400_000;
/** Up to this many rows, candidates come with every column (ClickHouse materializes the top rows lazily). */
const FULL_ROWS_MAX = 1000;
/** Candidates asked beyond what is still needed, for the older versions that fail verification. */
const CANDIDATE_SLACK = 8;

interface Slice { readonly from: number | null; readonly to: number | null }

interface Keyed { id: string; updated_at: string }

/**
 * A page of current records without FINAL (docs/grammar-a.md, "List query plan"):
 *  1. candidates: rows of any version that match, in list order (`updated_at DESC` breaks the
 *     tie between versions of one id), with no merge of versions;
 *  2. verification: the newest version of each candidate id, by primary key; a candidate is a
 *     current record exactly when it is that newest version (the first one kept per id);
 *  3. when older versions made the page short while more candidates exist, ask again for more.
 * A record whose newest version matches is always a candidate, so the result equals FINAL's.
 */
export interface ListOptions {
  /** Pages ending beyond this row read candidates as keys, then fetch the page (tests lower it). */
  readonly fullRowsMax?: number;
}

export async function listRows<R>(
  ch: ClickHouse, table: string, columns: string, v: Visibility, compiled: CompiledQuery, options: ListOptions = {},
): Promise<R[]> {
  const condition = `${SCOPE} AND (${compiled.where})`;
  const params = { ...compiled.params, ...scopeParams(v) };
  const need = compiled.offset + compiled.limit;
  const sliced = /^created_at DESC(,|$)/.test(compiled.orderBy) && STABLE_COLUMNS[table]?.has('created_at') === true;
  const full = need <= (options.fullRowsMax ?? FULL_ROWS_MAX);
  const keyColumns = 'id, updated_at';
  const read = (slice: Slice, want: number): Promise<Keyed[]> =>
    currentInSlice(ch, table, full ? columns : keyColumns, condition, params, compiled.orderBy, slice, want);
  const found: Keyed[] = [];
  if (!sliced) found.push(...(await read({ from: null, to: null }, need)));
  else {
    // Newest first: after each slice, skip the next boundaries that the rows found per day so
    // far say cannot complete the page (a rare filter goes to the whole rest in one read).
    const now = Date.now();
    let upper: number | null = null;
    let days = 0;
    while (found.length < need) {
      const remaining = need - found.length;
      const perDay = days === 0 ? Infinity : found.length / days;
      const next: number | undefined = SLICE_DAYS.find((d) => d > days && perDay * (d - days) >= remaining * 1.5);
      const lower = next === undefined ? null : now - next * DAY_MS;
      found.push(...(await read({ from: lower, to: upper }, remaining)));
      if (next === undefined) break;
      upper = lower;
      days = next;
    }
  }
  const page = found.slice(compiled.offset, need);
  if (full || page.length === 0) return page as unknown as R[];
  return fetchVersions<R>(ch, table, columns, v.orgId, page);
}

async function currentInSlice(
  ch: ClickHouse, table: string, columns: string, condition: string, params: Record<string, unknown>, orderBy: string, slice: Slice, want: number,
): Promise<Keyed[]> {
  const bounds = (slice.from === null ? '' : ` AND created_at >= {__from:DateTime64(3, 'UTC')}`)
    + (slice.to === null ? '' : ` AND created_at < {__to:DateTime64(3, 'UTC')}`);
  const sliceParams = {
    ...(slice.from === null ? {} : { __from: toClickHouseTime(new Date(slice.from).toISOString()) }),
    ...(slice.to === null ? {} : { __to: toClickHouseTime(new Date(slice.to).toISOString()) }),
  };
  let rereads = 0;
  for (let ask = want + CANDIDATE_SLACK; ;) {
    const recent = toClickHouseTime(new Date(Date.now() - LATE_WRITE_MS).toISOString());
    const result = await ch.client.query({
      query: `SELECT ${columns} FROM ${ch.table(table)} WHERE ${condition}${bounds}
              ORDER BY ${orderBy}, updated_at DESC LIMIT {__limit:UInt32}`,
      query_params: { ...params, ...sliceParams, __limit: ask },
      format: 'JSONEachRow',
    });
    const candidates = await result.json<Keyed>();
    const { current, late, lagging } = await keepNewest(ch, table, String(params['__org']), candidates, recent);
    // Between the two reads a record may change state: its candidate is then no longer the
    // newest version, and the new one may match too; or the versions table may not yet hold a
    // version the candidates show. Either way the slice is read again.
    const changed = lagging || (late.length > 0 && await anyMatches(ch, table, condition + bounds, { ...params, ...sliceParams }, late));
    if (changed && rereads < MAX_REREADS) {
      rereads += 1;
      continue;
    }
    if (current.length >= want || candidates.length < ask) return current.slice(0, want);
    ask *= 4;
  }
}

/** Times a slice is read again because a record changed state between its two reads. */
const MAX_REREADS = 5;
/**
 * A version stamped this long before a read may still be landing in the table during it (the
 * history writer batches, clocks of processes differ): older ones were there before the read.
 */
const LATE_WRITE_MS = 300_000;

interface Verified {
  /** The candidates that are the newest version of their id, in their order, one per id. */
  readonly current: Keyed[];
  /** Recent newest versions (stamped after `recent`) of ids no candidate kept: written after the candidates were read, or not matching. */
  readonly late: Keyed[];
  /** A recent candidate is newer than every version the versions table holds for its id (its insert is still landing there). */
  readonly lagging: boolean;
}

async function keepNewest(ch: ClickHouse, table: string, orgId: string, candidates: readonly Keyed[], recent: string): Promise<Verified> {
  if (candidates.length === 0) return { current: [], late: [], lagging: false };
  const ids = [...new Set(candidates.map((c) => c.id))];
  const result = await ch.client.query({
    query: `SELECT id, max(updated_at) AS updated_at FROM ${ch.table(VERSIONS[table] ?? table)}
            WHERE org_id = {__org:String} AND id IN {__ids:Array(String)} GROUP BY id`,
    query_params: { __org: orgId, __ids: ids },
    format: 'JSONEachRow',
  });
  const newest = new Map((await result.json<Keyed>()).map((r) => [r.id, r.updated_at]));
  const kept = new Set<string>();
  const current = candidates.filter((c) => {
    if (kept.has(c.id) || newest.get(c.id) !== c.updated_at) return false;
    kept.add(c.id);
    return true;
  });
  // updated_at is 'YYYY-MM-DD hh:mm:ss.mmm': its string order is its time order.
  const lagging = candidates.some((c) => { const n = newest.get(c.id); return c.updated_at >= recent && (n === undefined || c.updated_at > n); });
  const late: Keyed[] = [];
  for (const id of ids) {
    const updatedAt = newest.get(id);
    if (!kept.has(id) && updatedAt !== undefined && updatedAt >= recent) late.push({ id, updated_at: updatedAt });
  }
  return { current, late, lagging };
}

/** True when one of these exact versions matches the list's condition (it belongs in the page). */
async function anyMatches(ch: ClickHouse, table: string, condition: string, params: Record<string, unknown>, versions: readonly Keyed[]): Promise<boolean> {
  const result = await ch.client.query({
    query: `SELECT id, updated_at FROM ${ch.table(table)} WHERE ${condition} AND id IN {__unseen:Array(String)}`,
    query_params: { ...params, __unseen: versions.map((v) => v.id) },
    format: 'JSONEachRow',
  });
  const wanted = new Set(versions.map((v) => `${v.id}@${v.updated_at}`));
  return (await result.json<Keyed>()).some((r) => wanted.has(`${r.id}@${r.updated_at}`));
}

/** Full rows of exact versions (a deep page whose candidates were read as keys only), in the page's order. */
async function fetchVersions<R>(ch: ClickHouse, table: string, columns: string, orgId: string, page: readonly Keyed[]): Promise<R[]> {
  const result = await ch.client.query({
    query: `SELECT ${columns} FROM ${ch.table(table)} WHERE org_id = {__org:String} AND id IN {__ids:Array(String)} ORDER BY id, updated_at DESC LIMIT 1 BY id`,
    query_params: { __org: orgId, __ids: page.map((k) => k.id) },
    format: 'JSONEachRow',
  });
  const byId = new Map((await result.json<R & Keyed>()).map((r) => [r.id, r]));
  return page.map((k) => byId.get(k.id)).filter((r): r is R & Keyed => r !== undefined);
}

/**
 * `_group`: counts per time bucket or per field value, ordered by the typed group expression
 * (times and numbers in their natural order, the NULL group last; docs/grammar-a.md).
 */
export async function groupCounts(ch: ClickHouse, table: string, v: Visibility, compiled: CompiledQuery): Promise<GroupCount[]> {
  if (!compiled.group) return [];
  const split = splitWhere(table, compiled.where);
  const expression = compiled.group.expression;
  const result = await ch.client.query({
    query: `SELECT toString(${expression}) AS group_key, count() AS n FROM ${ch.table(table)} FINAL
            PREWHERE ${split.prewhere} WHERE ${split.where} GROUP BY ${expression} ORDER BY ${expression} ASC
            LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`,
    query_params: { ...compiled.params, ...scopeParams(v), __limit: compiled.limit, __offset: compiled.offset },
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ group_key: string | null; n: string | number }>();
  const time = compiled.group.kind === 'time';
  return rows.map((r) => ({ group: r.group_key !== null && time ? isoBucket(r.group_key) : r.group_key, count: Number(r.n) }));
}

/** A time bucket, 'YYYY-MM-DD hh:mm:ss' or (monthly) 'YYYY-MM-DD' in UTC, as ISO 8601. */
function isoBucket(key: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(key) ? `${key}T00:00:00.000Z` : `${key.replace(' ', 'T')}.000Z`;
}
