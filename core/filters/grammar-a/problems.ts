// Client errors of Grammar A: always AppError INVALID_FILTER, and the detail names the
// parameter the client sent (the URL key, or `_q` for the JSON form).
import { AppError } from '../../errors';
import type { Condition, QueryOrigin } from './ast';

export function invalidFilter(detail: string): AppError {
  return new AppError('INVALID_FILTER', detail);
}

/** The URL key of a condition: `a.b` + `eq` → `a*b_eq`. */
export function urlKey(field: string, operator: string): string {
  return `${field.split('.').join('*')}_${operator}`;
}

/** The parameter a condition came from. Queries built in code are named like URL ones. */
export function conditionParam(origin: QueryOrigin | undefined, cond: Condition): string {
  return origin === 'json' ? '_q' : urlKey(cond.field, cond.operator);
}

export type ReservedParam = '_sort' | '_start' | '_limit' | '_group';

export function reservedParam(origin: QueryOrigin | undefined, name: ReservedParam): string {
  return origin === 'json' ? '_q' : name;
}

/** A value quoted for an error detail, cut so a 10 kB value does not become a 10 kB detail. */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const cut = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return JSON.stringify(cut);
}
