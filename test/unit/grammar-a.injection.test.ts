// DESIGN §5: "Values never reach SQL as text: only bound parameters and whitelisted
// identifiers." Hostile values leave the compiled WHERE byte-identical to a harmless one;
// hostile names (fields, sort keys, groups) are refused before any SQL exists.
import { AppError } from '../../core/errors';
import { compile, LOOKUP_FIELDS, parseJson, parseUrl, SMS_FIELDS, type Query } from '../../core/filters/grammar-a';
import { HOSTILE_VALUES } from '../support/hostile-values';

const now = new Date('2026-11-22T12:00:00.000Z');

const HARMLESS = 'sent';

// [field, operator, value builder] on string and id fields, nullable and not.
const CASES: readonly (readonly [string, string, (v: string) => unknown])[] = [
  ['status', 'eq', (v) => v],
  ['clientId', 'ne', (v) => v],
  ['status', 'eqi', (v) => v],
  ['clientId', 'nei', (v) => v],
  ['status', 'in', (v) => [v, 'other']],
  ['clientId', 'nini', (v) => [v]],
  ['text', 'contains', (v) => v],
  ['text', 'containsi', (v) => [v, 'other']],
  ['deliveredText', 'ncontains', (v) => v],
  ['clientId', 'ncontainsi', (v) => [v, 'other']],
  ['to', 'starts', (v) => v],
  ['to', 'endsi', (v) => v],
  ['id', 'eq', (v) => v],
  ['id', 'nin', (v) => [v, 'other']],
];

const jsonQuery = (field: string, operator: string, value: unknown): Query => parseJson(JSON.stringify({ filter: [{ field, operator, value }] }));
const urlQuery = (field: string, operator: string, value: unknown): Query =>
  parseUrl(new URLSearchParams([[`${field}_${operator}`, Array.isArray(value) ? value.join('|') : String(value)]]));

describe('DESIGN §5 + spec 3 §4.1: hostile values only change params', () => {
  const table = CASES.flatMap(([field, op, build]) =>
    HOSTILE_VALUES.map((h, i) => [`${field}_${op} #${i}`, field, op, build, h] as const),
  );

  test.each(table)('%s (JSON and URL)', (_name, field, op, build, hostile) => {
    for (const make of [jsonQuery, urlQuery]) {
      const safe = compile(make(field, op, build(HARMLESS)), SMS_FIELDS, { now });
      const evil = compile(make(field, op, build(hostile)), SMS_FIELDS, { now });
      expect(evil.where).toBe(safe.where);
      expect(evil.orderBy).toBe(safe.orderBy);
      expect(JSON.stringify(evil.params)).toContain(JSON.stringify(hostile).slice(1, -1));
      expect(evil.params).toEqual(JSON.parse(JSON.stringify(safe.params).split(HARMLESS).join(JSON.stringify(hostile).slice(1, -1))));
    }
  });

  test('a value that looks like a placeholder stays a parameter', () => {
    const c = compile(jsonQuery('status', 'eq', '{p1:String}'), SMS_FIELDS, { now });
    expect(c.where).toBe('status = {p0:String}');
    expect(c.params).toEqual({ p0: '{p1:String}' });
  });

  test('pipes in a scalar eq value stay inside the one parameter', () => {
    const c = compile(urlQuery('status', 'eq', "a|b' OR '1"), LOOKUP_FIELDS, { now });
    expect(c.where).toBe('status = {p0:String}');
    expect(c.params).toEqual({ p0: "a|b' OR '1" });
  });
});

describe('DESIGN §5: hostile names never reach SQL', () => {
  const refused = (fn: () => unknown): AppError => {
    try {
      fn();
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
    throw new Error('expected an AppError');
  };

  test.each([
    'status) OR (1=1',
    'status; DROP TABLE sms_messages',
    'created_at',
    'recipient',
    'toString',
  ])('field %j', (field) => {
    expect(refused(() => compile(jsonQuery(field, 'eq', 'x'), SMS_FIELDS, { now })).code).toBe('INVALID_FILTER');
  });

  test.each(['status DESC; DROP TABLE x', 'created_at', '1', 'rand()'])('sort %j', (field) => {
    expect(refused(() => compile(parseJson({ sort: [[field, 'asc']] }), SMS_FIELDS, { now })).code).toBe('INVALID_FILTER');
  });

  test.each(['status) --', 'toStartOfWeek', 'created_at', 'HOURLY'])('group %j', (group) => {
    expect(refused(() => compile(parseJson({ group }), SMS_FIELDS, { now })).code).toBe('INVALID_FILTER');
  });
});
