// Query + catalogue → the parts of a ClickHouse SELECT. The SQL strings hold only catalogue
// columns, our function names and `{pN:Type}` placeholders; client values are in `params`.
import type { Query } from './ast';
import type { Catalogue } from './catalogue';
import { filterSql } from './filter-sql';
import { groupOf, type CompiledGroup } from './group';
import { DEFAULT_LIMIT, MAX_LIMIT } from './limits';
import { orderBySql } from './order-by';
import { pagingOf } from './paging';
import { ParamBinder } from '../params';

export interface CompileOptions {
  /** The instant relative dates count back from; default: the time of the call. */
  readonly now?: Date;
  readonly defaultLimit?: number;
  readonly maxLimit?: number;
}

export interface CompiledQuery {
  /** SQL boolean expression; `1` when there is no filter. */
  readonly where: string;
  readonly params: Record<string, unknown>;
  readonly orderBy: string;
  readonly limit: number;
  readonly offset: number;
  readonly group?: CompiledGroup;
}

export function compile(query: Query, catalogue: Catalogue, options: CompileOptions = {}): CompiledQuery {
  const binder = new ParamBinder('p');
  const where = filterSql(query, catalogue, binder, options.now ?? new Date());
  const orderBy = orderBySql(query, catalogue);
  const { limit, offset } = pagingOf(query, options.defaultLimit ?? DEFAULT_LIMIT, options.maxLimit ?? MAX_LIMIT);
  const group = groupOf(query, catalogue);
  return { where, params: binder.params, orderBy, limit, offset, ...(group === undefined ? {} : { group }) };
}
