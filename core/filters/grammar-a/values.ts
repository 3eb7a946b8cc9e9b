// Typing of condition values against the field type: URL values arrive as strings, JSON
// values as JSON; both become the value of a typed bound parameter.
import type { FieldType } from './catalogue';
import { parseDateValue } from './dates';

/** The ClickHouse type of the bound parameter for a field type. */
export const PARAM_TYPE: Readonly<Record<FieldType, string>> = {
  string: 'String',
  id: 'String',
  number: 'Float64',
  date: "DateTime64(6, 'UTC')",
  boolean: 'Bool',
};

/** Reports a bad value; `expected` says what was wanted. Never returns. */
export type Fail = (expected: string) => never;

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export const DATE_FORMS =
  'an ISO 8601 date-time with offset, a UTC date-time without offset (up to microseconds) or "<n> <second|minute|hour|day|month|year>(s) ago"';

export function coerceValue(type: FieldType, value: unknown, now: Date, fail: Fail): string | number | boolean {
  switch (type) {
    case 'string':
    case 'id':
      return typeof value === 'string' ? value : fail('a string');
    case 'number':
      return toNumber(value) ?? fail('a number');
    case 'date':
      return (typeof value === 'string' ? parseDateValue(value, now) : undefined) ?? fail(DATE_FORMS);
    case 'boolean':
      return toFlag(value) ?? fail('true or false');
  }
}

export function toFlag(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

function toNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && NUMBER.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n)) return undefined;
  return n === 0 ? 0 : n; // no -0: the URL form cannot tell it from 0
}
