// Grammar A, JSON form (spec 3 §2.1, §4.1 rule 9): the `_q` value → Query.
import { isFieldPath, isOperator, type Node, type Operator, type Paging, type Query, type SortKey } from './ast';
import { MAX_DEPTH } from './limits';
import { invalidFilter } from './problems';

/** A condition of the JSON form; `and`/`or` have field '' and an array of conditions as value. */
export interface JsonCondition {
  readonly field: string;
  readonly operator: Operator | 'and' | 'or';
  readonly value: unknown;
}

export interface JsonQuery {
  readonly filter: readonly JsonCondition[];
  readonly sort?: readonly (readonly [string, 'asc' | 'desc'])[];
  readonly paging?: Paging;
  readonly group?: string;
}

type Obj = Record<string, unknown>;

function bad(path: string, problem: string): never {
  throw invalidFilter(`parameter "_q": ${path} ${problem}`);
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(obj: Obj, allowed: readonly string[], path: string): void {
  const extra = Object.keys(obj).find((key) => !allowed.includes(key));
  if (extra !== undefined) bad(path, `has an unknown key "${extra}" (allowed: ${allowed.join(', ')})`);
}

/** Parses the `_q` text (or an already parsed object). */
export function parseJson(input: unknown): Query {
  let data = input;
  if (typeof input === 'string') {
    try {
      data = JSON.parse(input) as unknown;
    } catch {
      throw invalidFilter('parameter "_q" is not valid JSON');
    }
  }
  if (!isObject(data)) throw invalidFilter('parameter "_q" must be a JSON object');
  onlyKeys(data, ['filter', 'paging', 'sort', 'group'], 'the object');
  const filter = data['filter'] ?? [];
  if (!Array.isArray(filter)) bad('filter', 'must be an array of conditions');
  const paging = parsePaging(data['paging']);
  const group = data['group'];
  if (group !== undefined && typeof group !== 'string') bad('group', 'must be a string');
  return {
    filter: { kind: 'and', children: filter.map((c: unknown, i) => parseNode(c, `filter[${i}]`, 1)) },
    sort: parseSort(data['sort']),
    ...(paging === undefined ? {} : { paging }),
    ...(group === undefined ? {} : { group }),
    origin: 'json',
  };
}

function parseNode(raw: unknown, path: string, depth: number): Node {
  if (!isObject(raw)) bad(path, 'must be an object { field, operator, value }');
  onlyKeys(raw, ['field', 'operator', 'value'], path);
  const { field, operator, value } = { field: raw['field'], operator: raw['operator'], value: raw['value'] };
  if (typeof operator !== 'string') bad(`${path}.operator`, 'must be a string');
  if (operator === 'and' || operator === 'or') {
    if (field !== '' && field !== undefined) bad(`${path}.field`, `must be empty for "${operator}"`);
    if (!Array.isArray(value)) bad(`${path}.value`, `must be an array of conditions for "${operator}"`);
    if (depth >= MAX_DEPTH) bad(path, `nests deeper than ${MAX_DEPTH} levels`);
    return { kind: operator, children: value.map((c: unknown, i) => parseNode(c, `${path}.value[${i}]`, depth + 1)) };
  }
  if (!isOperator(operator)) throw invalidFilter(`unknown operator "${operator}" in parameter "_q" at ${path}`);
  if (typeof field !== 'string' || !isFieldPath(field)) bad(`${path}.field`, 'must be a field name (a.b for nested fields)');
  if (!('value' in raw)) bad(`${path}.value`, 'is missing');
  return { kind: 'cond', field, operator, value };
}

function parseSort(raw: unknown): SortKey[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) bad('sort', 'must be an array of [field, "asc"|"desc"]');
  return raw.map((item: unknown, i) => {
    if (!Array.isArray(item) || item.length !== 2) bad(`sort[${i}]`, 'must be [field, "asc"|"desc"]');
    const [field, direction] = item as [unknown, unknown];
    if (typeof field !== 'string' || !isFieldPath(field)) bad(`sort[${i}][0]`, 'must be a field name');
    if (direction !== 'asc' && direction !== 'desc') bad(`sort[${i}][1]`, 'must be "asc" or "desc"');
    return { field, direction };
  });
}

function parsePaging(raw: unknown): Paging | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) bad('paging', 'must be an object { start, limit }');
  onlyKeys(raw, ['start', 'limit'], 'paging');
  const start = raw['start'];
  const limit = raw['limit'];
  if (start === undefined || limit === undefined) bad('paging', 'needs both start and limit');
  if (typeof start !== 'number' || !Number.isInteger(start)) bad('paging.start', 'must be an integer');
  if (typeof limit !== 'number' || !Number.isInteger(limit)) bad('paging.limit', 'must be an integer');
  return { start, limit };
}
