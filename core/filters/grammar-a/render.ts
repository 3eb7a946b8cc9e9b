// Query → the two client forms, for clients and tests. toJson renders any query; the URL
// form can only say "AND of conditions, where one key repeated is an OR", so toUrlParams
// throws a RangeError for anything else (nested groups, OR across keys, a key twice in
// the AND, values the pipe syntax cannot carry).
import type { Condition, Node, Query } from './ast';
import { OPERATOR_SHAPE } from './operators';
import type { JsonCondition, JsonQuery } from './parse-json';
import { urlKey } from './problems';

function notInUrl(what: string): never {
  throw new RangeError(`grammar-a: the URL form cannot express ${what}; use the JSON form`);
}

export function toUrlParams(query: Query): URLSearchParams {
  const out = new URLSearchParams();
  const keys = new Set<string>();
  for (const child of query.filter.children) {
    const conds = child.kind === 'cond' ? [child] : child.kind === 'or' ? child.children : notInUrl('a nested "and"');
    let key: string | undefined;
    for (const cond of conds) {
      if (cond.kind !== 'cond') notInUrl('a group inside "or"');
      const k = renderKey(cond);
      if (key !== undefined && k !== key) notInUrl('an "or" across different fields or operators');
      key = k;
      out.append(k, renderValue(cond));
    }
    if (key === undefined) notInUrl('an empty "or"');
    if (keys.has(key)) notInUrl(`the key "${key}" twice in the AND`);
    keys.add(key);
  }
  if (query.sort.length > 0) {
    out.set('_sort', query.sort.map((s) => `${renderField(s.field)}${s.direction === 'desc' ? ':-' : ''}`).join(','));
  }
  if (query.paging !== undefined) {
    out.set('_start', String(query.paging.start));
    out.set('_limit', String(query.paging.limit));
  }
  if (query.group !== undefined) out.set('_group', query.group);
  return out;
}

export function toJson(query: Query): JsonQuery {
  return {
    filter: query.filter.children.map(jsonNode),
    ...(query.sort.length > 0 ? { sort: query.sort.map((s) => [s.field, s.direction] as const) } : {}),
    ...(query.paging === undefined ? {} : { paging: { start: query.paging.start, limit: query.paging.limit } }),
    ...(query.group === undefined ? {} : { group: query.group }),
  };
}

function jsonNode(node: Node): JsonCondition {
  if (node.kind === 'cond') return { field: node.field, operator: node.operator, value: node.value };
  return { field: '', operator: node.kind, value: node.children.map(jsonNode) };
}

function renderField(field: string): string {
  if (field.length === 0 || field.includes('*')) notInUrl(`the field name "${field}"`);
  return field;
}

function renderKey(cond: Condition): string {
  return urlKey(renderField(cond.field), cond.operator);
}

function renderScalar(value: unknown, pipeSplits: boolean): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') notInUrl(`the value ${String(value)}`);
  const text = String(value);
  if (pipeSplits && text.includes('|')) notInUrl(`"|" inside the value "${text}"`);
  return text;
}

function renderValue(cond: Condition): string {
  const shape = OPERATOR_SHAPE[cond.operator];
  const value = cond.value;
  if (shape === 'flag' || shape === 'scalar') return renderScalar(value, false);
  if (!Array.isArray(value)) {
    if (shape === 'text') return renderScalar(value, true);
    return notInUrl(`a non-array value for "${cond.operator}"`);
  }
  if (value.length === 0) notInUrl('an empty list');
  return value.map((v: unknown) => renderScalar(v, true)).join('|');
}
