// `_start`/`_limit` / JSON `paging` → LIMIT and OFFSET, with the default and the maximum.
import type { Query } from './ast';
import { invalidFilter, reservedParam } from './problems';

export function pagingOf(query: Query, defaultLimit: number, maxLimit: number): { limit: number; offset: number } {
  if (query.paging === undefined) return { limit: defaultLimit, offset: 0 };
  const { start, limit } = query.paging;
  const json = query.origin === 'json';
  if (!Number.isSafeInteger(start) || start < 0) {
    const name = json ? 'paging.start' : 'start';
    throw invalidFilter(`parameter "${reservedParam(query.origin, '_start')}": ${name} must be an integer >= 0, got ${String(start)}`);
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > maxLimit) {
    const name = json ? 'paging.limit' : 'limit';
    throw invalidFilter(
      `parameter "${reservedParam(query.origin, '_limit')}": ${name} must be an integer from 1 to ${maxLimit}, got ${String(limit)}`,
    );
  }
  return { limit, offset: start };
}
