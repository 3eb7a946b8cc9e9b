// `_group` / JSON `group` → the GROUP BY expression: a time bucket over createdAt for the
// tokens hourly/daily/monthly, otherwise a catalogue field's column.
import type { Query } from './ast';
import { columnSql, findField, type Catalogue } from './catalogue';
import { invalidFilter, quote, reservedParam } from './problems';

export interface CompiledGroup {
  readonly expression: string;
  readonly kind: 'time' | 'field';
}

const TIME_BUCKETS: ReadonlyMap<string, string> = new Map([
  ['hourly', 'toStartOfHour'],
  ['daily', 'toStartOfDay'],
  ['monthly', 'toStartOfMonth'],
]);

export function groupOf(query: Query, catalogue: Catalogue): CompiledGroup | undefined {
  if (query.group === undefined) return undefined;
  const param = reservedParam(query.origin, '_group');
  const bucket = TIME_BUCKETS.get(query.group);
  if (bucket !== undefined) {
    const time = findField(catalogue, 'createdAt');
    if (time === undefined) throw invalidFilter(`time grouping is not available here (parameter "${param}")`);
    return { expression: `${bucket}(${columnSql(time)})`, kind: 'time' };
  }
  const def = findField(catalogue, query.group);
  if (def === undefined) {
    throw invalidFilter(`unknown group ${quote(query.group)} in parameter "${param}": expected hourly, daily, monthly or a field`);
  }
  return { expression: columnSql(def), kind: 'field' };
}
