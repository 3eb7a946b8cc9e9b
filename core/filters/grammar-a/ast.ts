// The one AST both Grammar A forms (URL parameters and the JSON `_q` object, spec 3 §2.1,
// §4.1) parse into. Values stay as the client sent them (URL: strings, JSON: any JSON
// value); typing them against the field catalogue is the compiler's job.

/** Condition operators of spec 3 §2.2 (the logical `and`/`or` are node kinds, not operators). */
export const OPERATORS = [
  'exists',
  'eq', 'eqi', 'ne', 'nei',
  'lt', 'lte', 'gt', 'gte',
  'in', 'ini', 'nin', 'nini',
  'contains', 'containsi', 'ncontains', 'ncontainsi', 'starts', 'startsi', 'ends', 'endsi',
  'range', 'between', 'betweeneq',
] as const;

export type Operator = (typeof OPERATORS)[number];

const OPERATOR_SET: ReadonlySet<string> = new Set(OPERATORS);

export function isOperator(name: string): name is Operator {
  return OPERATOR_SET.has(name);
}

export interface Condition {
  readonly kind: 'cond';
  /** Dotted path (`a.b`); the URL form writes it `a*b`. */
  readonly field: string;
  readonly operator: Operator;
  readonly value: unknown;
}

export interface Group {
  readonly kind: 'and' | 'or';
  readonly children: readonly Node[];
}

export type Node = Condition | Group;

export interface AndGroup extends Group {
  readonly kind: 'and';
}

export interface SortKey {
  readonly field: string;
  readonly direction: 'asc' | 'desc';
}

export interface Paging {
  readonly start: number;
  readonly limit: number;
}

/** Which form a query was parsed from; only used to name the parameter in error details. */
export type QueryOrigin = 'url' | 'json';

export interface Query {
  readonly filter: AndGroup;
  readonly sort: readonly SortKey[];
  readonly paging?: Paging;
  readonly group?: string;
  readonly origin?: QueryOrigin;
}

/** A field path: one or more non-empty names joined by dots. */
export function isFieldPath(path: string): boolean {
  return path.length > 0 && path.split('.').every((part) => part.length > 0);
}
