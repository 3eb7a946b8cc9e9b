// Grammar A, URL form (spec 3 §4.1): query parameters → Query. When `_q` is present the JSON
// form is the only source and nothing else but ignored parameters may come with it.
import { isFieldPath, isOperator, type Condition, type Node, type Paging, type Query, type SortKey } from './ast';
import { splitsOnPipe } from './operators';
import { parseJson } from './parse-json';
import { invalidFilter } from './problems';

/** URLSearchParams, or an express `req.query` (values string or string[]). */
export type UrlQueryInput = URLSearchParams | Readonly<Record<string, unknown>>;

export interface ParseUrlOptions {
  /** Parameters the endpoint owns (e.g. `access_token`); they are not filters. */
  readonly ignore?: readonly string[];
}

const RESERVED: ReadonlySet<string> = new Set(['_sort', '_start', '_limit', '_group']);

export function parseUrl(input: UrlQueryInput, options: ParseUrlOptions = {}): Query {
  const ignore = new Set(options.ignore ?? []);
  const entries = entriesOf(input).filter(([key]) => !ignore.has(key));
  if (entries.some(([key]) => key === '_q')) return parseJsonOnly(entries);

  const reserved = new Map<string, string>();
  const byKey = new Map<string, Condition[]>();
  for (const [key, value] of entries) {
    if (RESERVED.has(key)) {
      if (reserved.has(key)) throw invalidFilter(`parameter "${key}" is given more than once`);
      reserved.set(key, value);
      continue;
    }
    const cond = parseFilter(key, value);
    const same = byKey.get(key);
    if (same === undefined) byKey.set(key, [cond]);
    else same.push(cond);
  }
  const children: Node[] = [...byKey.values()].map((conds) =>
    conds.length === 1 && conds[0] !== undefined ? conds[0] : { kind: 'or', children: conds },
  );
  const paging = parsePaging(reserved.get('_start'), reserved.get('_limit'));
  const group = reserved.get('_group');
  return {
    filter: { kind: 'and', children },
    sort: parseSort(reserved.get('_sort')),
    ...(paging === undefined ? {} : { paging }),
    ...(group === undefined ? {} : { group }),
    origin: 'url',
  };
}

function parseJsonOnly(entries: readonly [string, string][]): Query {
  const q = entries.filter(([key]) => key === '_q');
  if (q.length > 1) throw invalidFilter('parameter "_q" is given more than once');
  const other = entries.find(([key]) => key !== '_q');
  if (other !== undefined) {
    throw invalidFilter(`parameter "${other[0]}" cannot be combined with "_q": the JSON form carries filter, sort, paging and group`);
  }
  return parseJson(q[0]?.[1] ?? '');
}

function entriesOf(input: UrlQueryInput): [string, string][] {
  if (input instanceof URLSearchParams) return [...input.entries()];
  const out: [string, string][] = [];
  for (const [key, value] of Object.entries(input)) {
    const values = Array.isArray(value) ? (value as unknown[]) : value === undefined ? [] : [value];
    for (const v of values) {
      if (typeof v !== 'string') throw invalidFilter(`parameter "${key}" must be a plain string value`);
      out.push([key, v]);
    }
  }
  return out;
}

/** `<field>_<operator>`, split at the last underscore; `a*b` is the nested field `a.b`. */
function parseFilter(key: string, raw: string): Condition {
  const at = key.lastIndexOf('_');
  if (at <= 0 || at === key.length - 1) {
    throw invalidFilter(`parameter "${key}" is not a filter: expected <field>_<operator> or a reserved parameter`);
  }
  const operator = key.slice(at + 1);
  if (operator === 'and' || operator === 'or') {
    throw invalidFilter(`operator "${operator}" in parameter "${key}" is only available in the JSON form (_q)`);
  }
  if (!isOperator(operator)) throw invalidFilter(`unknown operator "${operator}" in parameter "${key}"`);
  const written = key.slice(0, at);
  const field = written.split('*').join('.');
  if (written.includes('.') || !isFieldPath(field)) {
    throw invalidFilter(`invalid field name "${written}" in parameter "${key}" (nested fields are written a*b)`);
  }
  const value = splitsOnPipe(operator, raw) ? raw.split('|') : raw;
  return { kind: 'cond', field, operator, value };
}

/** `createdAt:-,status:+,to`: `:-` descending, `:+` (or `:` once URL decoding ate the +) or nothing ascending. */
function parseSort(text: string | undefined): SortKey[] {
  if (text === undefined) return [];
  return text.split(',').map((segment) => {
    const m = /^([^:]+?)(?::([+-]?))?$/.exec(segment.trim());
    const written = m?.[1];
    const field = written?.split('*').join('.');
    if (written === undefined || field === undefined || !isFieldPath(field)) {
      throw invalidFilter(`invalid sort key "${segment}" in parameter "_sort": expected field, field:+ or field:-`);
    }
    return { field, direction: m?.[2] === '-' ? 'desc' : 'asc' };
  });
}

function parsePaging(start: string | undefined, limit: string | undefined): Paging | undefined {
  if (start === undefined && limit === undefined) return undefined;
  if (start === undefined || limit === undefined) {
    const missing = start === undefined ? '_start' : '_limit';
    throw invalidFilter(`parameters "_start" and "_limit" go together: "${missing}" is missing`);
  }
  return { start: integer('_start', start), limit: integer('_limit', limit) };
}

function integer(param: string, text: string): number {
  if (!/^-?\d{1,15}$/.test(text)) throw invalidFilter(`parameter "${param}" must be an integer, got "${text.slice(0, 40)}"`);
  return Number(text);
}
