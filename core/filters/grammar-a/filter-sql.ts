// The filter tree → the WHERE expression. The root AND is joined bare, nested groups are
// parenthesised, a one-child group is its child, an empty AND is `1`, an empty OR is `0`.
import type { Node, Query } from './ast';
import { findField, type Catalogue } from './catalogue';
import { conditionSql } from './condition-sql';
import { MAX_CONDITIONS } from './limits';
import type { ParamBinder } from '../params';
import { conditionParam, invalidFilter } from './problems';

export function filterSql(query: Query, catalogue: Catalogue, binder: ParamBinder, now: Date): string {
  let conditions = 0;
  const visit = (node: Node): string => {
    if (node.kind === 'cond') {
      const param = conditionParam(query.origin, node);
      conditions += 1;
      if (conditions > MAX_CONDITIONS) throw invalidFilter(`too many conditions (at most ${MAX_CONDITIONS}) in parameter "${param}"`);
      const def = findField(catalogue, node.field);
      if (def === undefined) throw invalidFilter(`unknown field "${node.field}" in parameter "${param}"`);
      return conditionSql(node, { def, param, now, binder });
    }
    const parts = node.children.map(visit);
    if (parts.length === 0) return node.kind === 'and' ? '1' : '0';
    if (parts.length === 1) return parts[0] ?? '1';
    return `(${parts.join(node.kind === 'and' ? ' AND ' : ' OR ')})`;
  };
  const parts = query.filter.children.map(visit);
  return parts.length === 0 ? '1' : parts.join(' AND ');
}
