// Grammar B limits (spec 3 §2.3, §8; docs/grammar-b.md): the compiled SQL text does not grow
// with the number of values (a long `contains` list is one Array(String) parameter), a filter
// whose text or bound values ClickHouse would refuse is a 400 naming the limit (never a 500),
// `_bucket` conditions take bucket numbers 0 to 199 only, and an aggregation named `__proto__`
// is refused instead of silently dropped.
import {
  checkCompiledSize, compileFilter, MAX_BOUND_VALUES_BYTES, MAX_FILTER_SQL_CHARS, ParamBinder, parseSearch, sqlContext, type SearchRequest,
} from '../../core/filters/grammar-b';
import { errorOf } from '../support/app-error';

const cond = (key: string, operator: string, values: unknown): Record<string, unknown> => ({ type: 'attribute_condition', key, operator, values });
const body = (root: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ version: '0.0.1', root, ...extra });

function compiled(input: Record<string, unknown>): { where: string; params: Record<string, unknown> } {
  const request = parseSearch(input) as Extract<SearchRequest, { kind: 'query' }>;
  const c = sqlContext(new ParamBinder(), { audience: 'a', events: 'e' }, 'p1', 'UTC', new Date(0));
  return { where: compileFilter(request.query.root, c), params: c.binder.params };
}

const values = (n: number, length: number): string[] => Array.from({ length: n }, (_, i) => `${i}`.padEnd(length, 'x'));

describe('spec 3 §8: the SQL text of a filter does not grow with its values', () => {
  test.each([
    ['contains on a native attribute', '_email', 'contains'],
    ['contains on a custom attribute (scalar and list forms)', 'plan', 'contains'],
    ['startswith on a list attribute', '_client_tags', 'startswith'],
    ['endswith, all values (&&)', '_email', 'endswith'],
  ])('%s: 2 values and 1,000 values compile to SQL of the same length', (_name, key, operator) => {
    const all = _name.includes('&&') ? ['&&'] : [];
    const two = compiled(body(cond(key, operator, [...all, ...values(2, 100)])));
    const many = compiled(body(cond(key, operator, [...all, ...values(1000, 100)])));
    expect(many.where.length).toBe(two.where.length);
    expect(many.where.length).toBeLessThan(500);
  });

  test('1,000 numbers with && compile to one Array(Float64) parameter', () => {
    const many = compiled(body(cond('score', 'matches-number', ['&&', ...Array.from({ length: 1000 }, (_, i) => i)])));
    expect(many.where.length).toBeLessThan(300);
  });

  test('an OR group of three contains with 1,000 values of 100 characters each passes the size check (it was a 500: max_query_size)', () => {
    const { where, params } = compiled(body({ type: 'group', join: 'or', children: [0, 1, 2].map(() => cond('plan', 'contains', values(1000, 100))) }));
    expect(where.length).toBeLessThan(2_000);
    expect(() => checkCompiledSize(where, params)).not.toThrow();
  });
});

describe('spec 3 §8: a filter ClickHouse would refuse is a 400 naming the limit', () => {
  test(`bound values beyond ${MAX_BOUND_VALUES_BYTES} bytes URL-encoded: 400 naming the limit`, () => {
    // 3 × 1,000 values of 128 characters outside ASCII: 9 URL-encoded bytes each.
    const wide = Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(128, 'ü'));
    const { where, params } = compiled(body({ type: 'group', join: 'or', children: [0, 1, 2].map(() => cond('plan', 'contains', wide)) }));
    const err = errorOf(() => checkCompiledSize(where, params));
    expect({ code: err.code, status: err.status }).toEqual({ code: 'INVALID_FILTER', status: 400 });
    expect(err.message).toContain(MAX_BOUND_VALUES_BYTES.toLocaleString('en'));
  });

  test(`SQL text beyond ${MAX_FILTER_SQL_CHARS} characters (max_query_size): 400 naming the limit`, () => {
    const err = errorOf(() => checkCompiledSize('1 AND '.repeat(MAX_FILTER_SQL_CHARS / 6 + 1), {}));
    expect({ code: err.code, status: err.status }).toEqual({ code: 'INVALID_FILTER', status: 400 });
    expect(err.message).toContain(MAX_FILTER_SQL_CHARS.toLocaleString('en'));
    expect(err.message).toContain('max_query_size');
  });
});

describe('spec 3 §2.3, §8: _bucket conditions take bucket numbers 0 to 199', () => {
  test.each([
    ['matches-number 300', cond('_bucket', 'matches-number', [300]), 'root.values[0]'],
    ['matches-number after ||', cond('_bucket', 'matches-number', ['||', 5, 200]), 'root.values[2]'],
    ['matches-number -1', cond('_bucket', 'matches-number', [-1]), 'root.values[0]'],
    ['matches-number 1.5', cond('_bucket', 'matches-number', [1.5]), 'root.values[0]'],
    ['range-number upper 300', cond('_bucket', 'range-number', { lowerNumber: 0, upperNumber: 300 }), 'root.values.upperNumber'],
    ['range-number-not lower -3', cond('_bucket', 'range-number-not', { lowerNumber: -3, upperNumber: 5 }), 'root.values.lowerNumber'],
  ])('%s is a 400 naming the value', (_name, root, path) => {
    const err = errorOf(() => parseSearch(body(root)));
    expect({ code: err.code, status: err.status }).toEqual({ code: 'INVALID_FILTER', status: 400 });
    expect(err.message).toContain(path);
    expect(err.message).toContain('0 to 199');
  });

  test('0, 199 and a range within them are accepted; a custom attribute may take 300', () => {
    expect(parseSearch(body(cond('_bucket', 'matches-number', [0, 199]))).kind).toBe('query');
    expect(parseSearch(body(cond('_bucket', 'range-number', { lowerNumber: 0, upperNumber: 199 }))).kind).toBe('query');
    expect(parseSearch(body(cond('score', 'matches-number', [300]))).kind).toBe('query');
  });
});

describe('spec 3 §4.2: aggregation names', () => {
  test.each([
    ['top level', '{"version":"0.0.1","limit":0,"aggregations":{"__proto__":{"type":"terms","params":{"field":"@_tags"}}}}', 'aggregations.__proto__'],
    ['inside nested', '{"version":"0.0.1","limit":0,"aggregations":{"n":{"type":"nested","params":{"path":"events"},"aggs":{"__proto__":{"type":"terms","params":{"field":"sku"}}}}}}', 'aggregations.n.aggs.__proto__'],
  ])('an aggregation named __proto__ (%s) is a 400, not silently dropped', (_name, json, path) => {
    const err = errorOf(() => parseSearch(JSON.parse(json)));
    expect({ code: err.code, status: err.status }).toEqual({ code: 'INVALID_FILTER', status: 400 });
    expect(err.message).toContain(path);
  });
});
