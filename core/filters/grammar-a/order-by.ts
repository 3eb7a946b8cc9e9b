// `_sort` / JSON `sort` → ORDER BY over catalogue columns. Default `created_at DESC`; the id
// column DESC is always the last key so pages are stable.
import type { Query, SortKey } from './ast';
import { columnSql, findField, type Catalogue } from './catalogue';
import { invalidFilter, reservedParam } from './problems';

export function orderBySql(query: Query, catalogue: Catalogue): string {
  const param = reservedParam(query.origin, '_sort');
  const id = findField(catalogue, 'id');
  if (id === undefined) throw new Error('grammar-a: the catalogue needs an "id" field');
  const keys: readonly SortKey[] =
    query.sort.length > 0 || findField(catalogue, 'createdAt') === undefined
      ? query.sort
      : [{ field: 'createdAt', direction: 'desc' }];
  const seen = new Set<string>();
  const parts = keys.map((key) => {
    const def = findField(catalogue, key.field);
    if (def === undefined) throw invalidFilter(`unknown sort field "${key.field}" in parameter "${param}"`);
    if (key.direction !== 'asc' && key.direction !== 'desc') {
      throw invalidFilter(`sort direction of "${key.field}" must be asc or desc in parameter "${param}"`);
    }
    if (seen.has(def.name)) throw invalidFilter(`sort field "${key.field}" given twice in parameter "${param}"`);
    seen.add(def.name);
    return `${columnSql(def)} ${key.direction === 'asc' ? 'ASC' : 'DESC'}`;
  });
  if (!seen.has(id.name)) parts.push(`${columnSql(id)} DESC`);
  return parts.join(', ');
}
