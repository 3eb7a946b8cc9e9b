// Spec 3 §2.2 (operators per field type) in both forms of §4.1 / §2.1: every allowed
// operator × field type parses to the exact AST and compiles to the exact SQL + params;
// every disallowed pair is a 400 naming the operator, the field and the parameter.
import {
  compile, OPERATORS, OPERATORS_BY_TYPE, parseJson, parseUrl, SMS_FIELDS,
  type FieldType, type Operator, type Query,
} from '../../core/filters/grammar-a';
import { errorOf } from '../support/app-error';

const now = new Date('2026-11-22T12:00:00.000Z');
const D6 = "DateTime64(6, 'UTC')";

interface Row {
  readonly field: string;
  readonly op: Operator;
  /** Raw URL value, and the AST value the URL form yields. */
  readonly url: string;
  readonly urlAst: unknown;
  /** JSON value (also its AST value). */
  readonly json: unknown;
  readonly where: string;
  readonly params: Record<string, unknown>;
}

const row = (field: string, op: Operator, url: string, urlAst: unknown, json: unknown, where: string, params: Record<string, unknown> = {}): Row =>
  ({ field, op, url, urlAst, json, where, params });

// Field types (SMS catalogue): status string, clientId nullable string, charsCount number,
// statusCode nullable number, pricePerSms number expression, createdAt date, deliveredAt
// nullable date, id id, unicode boolean.
const ROWS: readonly Row[] = [
  // string
  row('status', 'exists', 'true', 'true', true, "(isNotNull(status) AND status != '')"),
  row('status', 'exists', 'false', 'false', false, "(isNull(status) OR status = '')"),
  row('status', 'eq', 'sent', 'sent', 'sent', 'status = {p0:String}', { p0: 'sent' }),
  row('status', 'ne', 'sent', 'sent', 'sent', 'NOT (status = {p0:String})', { p0: 'sent' }),
  row('status', 'eqi', 'SENT', 'SENT', 'SENT', 'lowerUTF8(status) = lowerUTF8({p0:String})', { p0: 'SENT' }),
  row('status', 'nei', 'SENT', 'SENT', 'SENT', 'NOT (lowerUTF8(status) = lowerUTF8({p0:String}))', { p0: 'SENT' }),
  row('status', 'in', 'sent|failed', ['sent', 'failed'], ['sent', 'failed'], 'status IN {p0:Array(String)}', { p0: ['sent', 'failed'] }),
  row('status', 'in', 'sent', ['sent'], ['sent'], 'status IN {p0:Array(String)}', { p0: ['sent'] }),
  row('status', 'nin', 'sent|failed', ['sent', 'failed'], ['sent', 'failed'], 'NOT (status IN {p0:Array(String)})', { p0: ['sent', 'failed'] }),
  row('status', 'ini', 'Sent|FAILED', ['Sent', 'FAILED'], ['Sent', 'FAILED'],
    'lowerUTF8(status) IN arrayMap(_v -> lowerUTF8(_v), {p0:Array(String)})', { p0: ['Sent', 'FAILED'] }),
  row('status', 'nini', 'Sent', ['Sent'], ['Sent'],
    'NOT (lowerUTF8(status) IN arrayMap(_v -> lowerUTF8(_v), {p0:Array(String)}))', { p0: ['Sent'] }),
  row('status', 'contains', 'en', 'en', 'en', 'position(status, {p0:String}) > 0', { p0: 'en' }),
  row('status', 'contains', 'en|ai', ['en', 'ai'], ['en', 'ai'],
    'arrayExists(_v -> position(status, _v) > 0, {p0:Array(String)})', { p0: ['en', 'ai'] }),
  row('status', 'containsi', 'EN', 'EN', 'EN', 'position(lowerUTF8(status), lowerUTF8({p0:String})) > 0', { p0: 'EN' }),
  row('status', 'containsi', 'EN|AI', ['EN', 'AI'], ['EN', 'AI'],
    'arrayExists(_v -> position(lowerUTF8(status), lowerUTF8(_v)) > 0, {p0:Array(String)})', { p0: ['EN', 'AI'] }),
  row('status', 'ncontains', 'en', 'en', 'en', 'NOT (position(status, {p0:String}) > 0)', { p0: 'en' }),
  row('status', 'ncontains', 'en|ai', ['en', 'ai'], ['en', 'ai'],
    'NOT (arrayExists(_v -> position(status, _v) > 0, {p0:Array(String)}))', { p0: ['en', 'ai'] }),
  row('status', 'ncontainsi', 'EN', 'EN', 'EN', 'NOT (position(lowerUTF8(status), lowerUTF8({p0:String})) > 0)', { p0: 'EN' }),
  row('status', 'starts', 'se', 'se', 'se', 'startsWith(status, {p0:String})', { p0: 'se' }),
  row('status', 'starts', 'se|fa', ['se', 'fa'], ['se', 'fa'], 'arrayExists(_v -> startsWith(status, _v), {p0:Array(String)})', { p0: ['se', 'fa'] }),
  row('status', 'startsi', 'SE', 'SE', 'SE', 'startsWith(lowerUTF8(status), lowerUTF8({p0:String}))', { p0: 'SE' }),
  row('status', 'startsi', 'SE|FA', ['SE', 'FA'], ['SE', 'FA'],
    'arrayExists(_v -> startsWith(lowerUTF8(status), lowerUTF8(_v)), {p0:Array(String)})', { p0: ['SE', 'FA'] }),
  row('status', 'ends', 'nt', 'nt', 'nt', 'endsWith(status, {p0:String})', { p0: 'nt' }),
  row('status', 'endsi', 'NT', 'NT', 'NT', 'endsWith(lowerUTF8(status), lowerUTF8({p0:String}))', { p0: 'NT' }),
  row('status', 'endsi', 'NT|ED', ['NT', 'ED'], ['NT', 'ED'],
    'arrayExists(_v -> endsWith(lowerUTF8(status), lowerUTF8(_v)), {p0:Array(String)})', { p0: ['NT', 'ED'] }),
  // nullable string: negated operators keep NULL rows, positive ones do not
  row('clientId', 'exists', 'true', 'true', true, "(isNotNull(client_id) AND client_id != '')"),
  row('clientId', 'exists', 'false', 'false', false, "(isNull(client_id) OR client_id = '')"),
  row('clientId', 'eq', 'c1', 'c1', 'c1', 'client_id = {p0:String}', { p0: 'c1' }),
  row('clientId', 'ne', 'c1', 'c1', 'c1', '(isNull(client_id) OR NOT (client_id = {p0:String}))', { p0: 'c1' }),
  row('clientId', 'nei', 'C1', 'C1', 'C1', '(isNull(client_id) OR NOT (lowerUTF8(client_id) = lowerUTF8({p0:String})))', { p0: 'C1' }),
  row('clientId', 'nin', 'a|b', ['a', 'b'], ['a', 'b'], '(isNull(client_id) OR NOT (client_id IN {p0:Array(String)}))', { p0: ['a', 'b'] }),
  row('clientId', 'nini', 'A|b', ['A', 'b'], ['A', 'b'],
    '(isNull(client_id) OR NOT (lowerUTF8(client_id) IN arrayMap(_v -> lowerUTF8(_v), {p0:Array(String)})))', { p0: ['A', 'b'] }),
  row('clientId', 'ncontains', 'x', 'x', 'x', '(isNull(client_id) OR NOT (position(client_id, {p0:String}) > 0))', { p0: 'x' }),
  row('clientId', 'ncontainsi', 'X|Y', ['X', 'Y'], ['X', 'Y'],
    '(isNull(client_id) OR NOT (arrayExists(_v -> position(lowerUTF8(client_id), lowerUTF8(_v)) > 0, {p0:Array(String)})))', { p0: ['X', 'Y'] }),
  row('clientId', 'contains', 'x', 'x', 'x', 'position(client_id, {p0:String}) > 0', { p0: 'x' }),
  // number (URL values are strings, JSON values numbers: same params)
  row('charsCount', 'exists', 'true', 'true', true, 'isNotNull(chars_count)'),
  row('charsCount', 'eq', '160', '160', 160, 'chars_count = {p0:Float64}', { p0: 160 }),
  row('charsCount', 'ne', '160', '160', 160, 'NOT (chars_count = {p0:Float64})', { p0: 160 }),
  row('charsCount', 'lt', '-1.5', '-1.5', -1.5, 'chars_count < {p0:Float64}', { p0: -1.5 }),
  row('charsCount', 'lte', '1e3', '1e3', 1000, 'chars_count <= {p0:Float64}', { p0: 1000 }),
  row('charsCount', 'gt', '0', '0', 0, 'chars_count > {p0:Float64}', { p0: 0 }),
  row('charsCount', 'gte', '.5', '.5', 0.5, 'chars_count >= {p0:Float64}', { p0: 0.5 }),
  row('charsCount', 'in', '1|2.5', ['1', '2.5'], [1, 2.5], 'chars_count IN {p0:Array(Float64)}', { p0: [1, 2.5] }),
  row('charsCount', 'nin', '7', ['7'], [7], 'NOT (chars_count IN {p0:Array(Float64)})', { p0: [7] }),
  row('charsCount', 'range', '10|20', ['10', '20'], [10, 20],
    '(chars_count >= {p0:Float64} AND chars_count < {p1:Float64})', { p0: 10, p1: 20 }),
  row('charsCount', 'between', '10|20', ['10', '20'], [10, 20],
    '(chars_count > {p0:Float64} AND chars_count < {p1:Float64})', { p0: 10, p1: 20 }),
  row('charsCount', 'betweeneq', '10|20', ['10', '20'], [10, 20],
    '(chars_count >= {p0:Float64} AND chars_count <= {p1:Float64})', { p0: 10, p1: 20 }),
  row('statusCode', 'exists', 'false', 'false', false, 'isNull(status_code)'),
  row('statusCode', 'ne', '5', '5', 5, '(isNull(status_code) OR NOT (status_code = {p0:Float64}))', { p0: 5 }),
  row('statusCode', 'nin', '5|6', ['5', '6'], [5, 6], '(isNull(status_code) OR NOT (status_code IN {p0:Array(Float64)}))', { p0: [5, 6] }),
  row('statusCode', 'gt', '1', '1', 1, 'status_code > {p0:Float64}', { p0: 1 }),
  row('pricePerSms', 'gte', '0.05', '0.05', 0.05, '(price_per_sms_micros / 1000000) >= {p0:Float64}', { p0: 0.05 }),
  // date (now = 2026-11-22T12:00:00Z)
  row('createdAt', 'exists', 'true', 'true', true, 'isNotNull(created_at)'),
  row('createdAt', 'eq', '2026-11-22T01:02:03+02:00', '2026-11-22T01:02:03+02:00', '2026-11-22T01:02:03+02:00',
    `created_at = {p0:${D6}}`, { p0: '2026-11-21 23:02:03.000000' }),
  row('createdAt', 'ne', '2026-11-22T01:02:03Z', '2026-11-22T01:02:03Z', '2026-11-22T01:02:03Z',
    `NOT (created_at = {p0:${D6}})`, { p0: '2026-11-22 01:02:03.000000' }),
  row('createdAt', 'lt', '2026-11-22T01:02:03.123456', '2026-11-22T01:02:03.123456', '2026-11-22T01:02:03.123456',
    `created_at < {p0:${D6}}`, { p0: '2026-11-22 01:02:03.123456' }),
  row('createdAt', 'lte', '2026-11-22 01:02:03.5', '2026-11-22 01:02:03.5', '2026-11-22 01:02:03.5',
    `created_at <= {p0:${D6}}`, { p0: '2026-11-22 01:02:03.500000' }),
  row('createdAt', 'gt', '3 days ago', '3 days ago', '3 days ago', `created_at > {p0:${D6}}`, { p0: '2026-11-19 12:00:00.000000' }),
  row('createdAt', 'gte', '1 month ago', '1 month ago', '1 month ago', `created_at >= {p0:${D6}}`, { p0: '2026-10-22 12:00:00.000000' }),
  row('createdAt', 'range', '2026-01-01T00:00:00Z|2 hours ago', ['2026-01-01T00:00:00Z', '2 hours ago'], ['2026-01-01T00:00:00Z', '2 hours ago'],
    `(created_at >= {p0:${D6}} AND created_at < {p1:${D6}})`, { p0: '2026-01-01 00:00:00.000000', p1: '2026-11-22 10:00:00.000000' }),
  row('createdAt', 'between', '1 year ago|1 second ago', ['1 year ago', '1 second ago'], ['1 year ago', '1 second ago'],
    `(created_at > {p0:${D6}} AND created_at < {p1:${D6}})`, { p0: '2025-11-22 12:00:00.000000', p1: '2026-11-22 11:59:59.000000' }),
  row('createdAt', 'betweeneq', '10 minutes ago|0 minutes ago', ['10 minutes ago', '0 minutes ago'], ['10 minutes ago', '0 minutes ago'],
    `(created_at >= {p0:${D6}} AND created_at <= {p1:${D6}})`, { p0: '2026-11-22 11:50:00.000000', p1: '2026-11-22 12:00:00.000000' }),
  row('deliveredAt', 'exists', 'false', 'false', false, 'isNull(delivered_at)'),
  row('deliveredAt', 'ne', '2026-11-22T00:00:00Z', '2026-11-22T00:00:00Z', '2026-11-22T00:00:00Z',
    `(isNull(delivered_at) OR NOT (delivered_at = {p0:${D6}}))`, { p0: '2026-11-22 00:00:00.000000' }),
  row('deliveredAt', 'lt', '1 hour ago', '1 hour ago', '1 hour ago', `delivered_at < {p0:${D6}}`, { p0: '2026-11-22 11:00:00.000000' }),
  // id
  row('id', 'exists', 'true', 'true', true, "(isNotNull(id) AND id != '')"),
  row('id', 'eq', 'm-1', 'm-1', 'm-1', 'id = {p0:String}', { p0: 'm-1' }),
  row('id', 'ne', 'm-1', 'm-1', 'm-1', 'NOT (id = {p0:String})', { p0: 'm-1' }),
  row('id', 'in', 'm-1|m-2', ['m-1', 'm-2'], ['m-1', 'm-2'], 'id IN {p0:Array(String)}', { p0: ['m-1', 'm-2'] }),
  row('id', 'nin', 'm-1|m-2', ['m-1', 'm-2'], ['m-1', 'm-2'], 'NOT (id IN {p0:Array(String)})', { p0: ['m-1', 'm-2'] }),
  // boolean
  row('unicode', 'exists', 'true', 'true', true, 'isNotNull(unicode)'),
  row('unicode', 'eq', 'true', 'true', true, 'unicode = {p0:Bool}', { p0: true }),
  row('unicode', 'ne', 'false', 'false', false, 'NOT (unicode = {p0:Bool})', { p0: false }),
];

const urlKey = (r: Row): string => `${r.field}_${r.op}`;

const expectedAst = (r: Row, value: unknown, origin: 'url' | 'json'): Query => ({
  filter: { kind: 'and', children: [{ kind: 'cond', field: r.field, operator: r.op, value }] },
  sort: [],
  origin,
});

describe('spec 3 §2.2 + §4.1 rules 1, 8: every allowed operator × field type, URL form', () => {
  test.each(ROWS.map((r) => [`${urlKey(r)}=${r.url}`, r] as const))('%s', (_name, r) => {
    const query = parseUrl(new URLSearchParams([[urlKey(r), r.url]]));
    expect(query).toEqual(expectedAst(r, r.urlAst, 'url'));
    const compiled = compile(query, SMS_FIELDS, { now });
    expect(compiled.where).toBe(r.where);
    expect(compiled.params).toEqual(r.params);
  });
});

describe('spec 3 §2.1 + §2.2: every allowed operator × field type, JSON form (_q)', () => {
  test.each(ROWS.map((r) => [`${r.field} ${r.op} ${JSON.stringify(r.json)}`, r] as const))('%s', (_name, r) => {
    const q = JSON.stringify({ filter: [{ field: r.field, operator: r.op, value: r.json }] });
    const query = parseUrl({ _q: q });
    expect(query).toEqual(expectedAst(r, r.json, 'json'));
    const compiled = compile(query, SMS_FIELDS, { now });
    expect(compiled.where).toBe(r.where);
    expect(compiled.params).toEqual(r.params);
  });
});

// Spec 3 §2.2, written out independently of the implementation's table (in/nin also on
// numbers, a documented extension).
const ALLOWED: Readonly<Record<FieldType, readonly Operator[]>> = {
  string: ['exists', 'eq', 'eqi', 'ne', 'nei', 'in', 'ini', 'nin', 'nini', 'contains', 'containsi', 'ncontains', 'ncontainsi', 'starts', 'startsi', 'ends', 'endsi'],
  number: ['exists', 'eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'nin', 'range', 'between', 'betweeneq'],
  date: ['exists', 'eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'range', 'between', 'betweeneq'],
  id: ['exists', 'eq', 'ne', 'in', 'nin'],
  boolean: ['exists', 'eq', 'ne'],
};
const FIELD_OF_TYPE: Readonly<Record<FieldType, string>> = {
  string: 'status', number: 'charsCount', date: 'createdAt', id: 'id', boolean: 'unicode',
};
const TYPES = Object.keys(ALLOWED) as FieldType[];

describe('spec 3 §2.2: the operator table', () => {
  test('OPERATORS_BY_TYPE matches the spec table', () => {
    for (const type of TYPES) expect([...OPERATORS_BY_TYPE[type]].sort()).toEqual([...ALLOWED[type]].sort());
  });

  test('the rows above cover every allowed operator × field type', () => {
    const typeOf = new Map(SMS_FIELDS.map((f) => [f.name, f.type]));
    const covered = new Set(ROWS.map((r) => `${typeOf.get(r.field) ?? '?'}:${r.op}`));
    const missing = TYPES.flatMap((t) => ALLOWED[t].map((op) => `${t}:${op}`)).filter((k) => !covered.has(k));
    expect(missing).toEqual([]);
  });
});

const DISALLOWED = TYPES.flatMap((type) =>
  OPERATORS.filter((op) => !ALLOWED[type].includes(op)).map((op) => [type, op, FIELD_OF_TYPE[type]] as const),
);

function valueFor(op: Operator): unknown {
  if (['in', 'ini', 'nin', 'nini'].includes(op)) return ['1'];
  if (['range', 'between', 'betweeneq'].includes(op)) return ['1', '2'];
  return '1';
}

describe('spec 3 §2.2: operators that do not apply to the field type are 400s naming operator, field and parameter', () => {
  test.each(DISALLOWED)('%s field: %s (URL)', (type, op, field) => {
    const value = valueFor(op);
    const query = parseUrl(new URLSearchParams([[`${field}_${op}`, Array.isArray(value) ? value.join('|') : String(value)]]));
    const err = errorOf(() => compile(query, SMS_FIELDS, { now }));
    expect(err.code).toBe('INVALID_FILTER');
    expect(err.message).toBe(`operator "${op}" does not apply to ${type} field "${field}" in parameter "${field}_${op}"`);
  });

  test.each(DISALLOWED)('%s field: %s (JSON)', (type, op, field) => {
    const query = parseJson({ filter: [{ field, operator: op, value: valueFor(op) }] });
    const err = errorOf(() => compile(query, SMS_FIELDS, { now }));
    expect(err.code).toBe('INVALID_FILTER');
    expect(err.message).toBe(`operator "${op}" does not apply to ${type} field "${field}" in parameter "_q"`);
  });
});

