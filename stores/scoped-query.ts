// Reads of a history table limited to what a token may see (one organization, and one
// project unless the token is account-wide), with WHERE/ORDER BY compiled from a catalogue
// (Grammar A). Scope parameters are prefixed `__` so they never clash with compiled ones.
//
// The tables are ReplacingMergeTree (one row per state change, the newest per id wins):
//  - lists read the list copy of a table without FINAL (stores/list-plan.ts);
//  - a record by id and `_group` counts read FINAL; conditions only on stable columns (written
//    once when the record is created and copied unchanged into each later state row) run as
//    PREWHERE, before FINAL: all versions of a record agree on them, so filtering before or
//    after choosing the newest row is the same.
import type { CompiledQuery } from '../core/filters/grammar-a';
import type { GroupCount, Visibility } from '../core/sms/history-ports';
import type { ClickHouse } from '../infra/clickhouse';
import { SCOPE, scopeParams } from './list-plan';

export type { GroupCount, Visibility } from '../core/sms/history-ports';
export { listRows, type ListOptions } from './list-plan';

/**
 * Columns whose value is the same in every state row of a record: set when it is created and
 * never changed by a later state (the `settle` activity in activities/lifecycle.ts changes only
 * status, status_code, sent_at, delivered_at and updated_at; lookups have one row each).
 * A writer that starts changing one of these must take it out of this list.
 */
const STABLE_COLUMNS: Readonly<Record<string, ReadonlySet<string>>> = {
  sms_messages: new Set([
    'id', 'org_id', 'project_id', 'token_id', 'source', 'client_id', 'sender', 'country', 'recipient', 'normalized_to',
    'chars_count', 'text', 'delivered_text', 'messages_count', 'encoding', 'unicode', 'allow_unicode',
    'price_per_sms_micros', 'price_user_micros', 'currency', 'created_at', 'scheduled_at',
  ]),
  lookups: new Set(['id', 'org_id', 'project_id', 'token_id', 'source', 'country', 'recipient', 'normalized_to', 'currency', 'created_at']),
};

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

function splitWhere(table: string, compiledWhere: string): Split {
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
