// Spec 3 §7 + DESIGN §5: every client error of Grammar A is AppError INVALID_FILTER (400)
// whose detail names the offending parameter (and the field / operator when there is one).
import { errorOf } from '../support/app-error';
import {
  compile, MAX_CONDITIONS, MAX_DEPTH, MAX_LIST_VALUES, parseJson, parseUrl, SMS_FIELDS,
} from '../../core/filters/grammar-a';

const now = new Date('2026-11-22T12:00:00.000Z');


/** Parse (URL form) and compile; the error must be INVALID_FILTER naming every fragment. */
function expectUrlError(input: URLSearchParams | Record<string, unknown>, fragments: readonly string[], maxLimit?: number): void {
  const err = errorOf(() => compile(parseUrl(input, { ignore: ['access_token'] }), SMS_FIELDS, { now, ...(maxLimit ? { maxLimit } : {}) }));
  expect(err.code).toBe('INVALID_FILTER');
  expect(err.status).toBe(400);
  for (const f of fragments) expect(err.message).toContain(f);
}

const p = (text: string): URLSearchParams => new URLSearchParams(text);

describe('spec 3 §4.1 rule 1 errors: filter parameters (URL)', () => {
  test.each([
    ['foo_eq=1', ['unknown field "foo" in parameter "foo_eq"']],
    ['foo_bar_eq=1', ['unknown field "foo_bar"', '"foo_bar_eq"']],
    ['a*b_eq=1', ['unknown field "a.b"', '"a*b_eq"']],
    ['status_lt=1', ['operator "lt" does not apply to string field "status"', '"status_lt"']],
    ['unicode_contains=x', ['operator "contains" does not apply to boolean field "unicode"', '"unicode_contains"']],
    ['status_xx=1', ['unknown operator "xx" in parameter "status_xx"']],
    ['status_=1', ['parameter "status_"']],
    ['status=sent', ['parameter "status" is not a filter']],
    ['_foo=1', ['parameter "_foo"']],
    ['_eq=1', ['parameter "_eq"']],
    ['status_and=1', ['"and"', '"status_and"', 'JSON form']],
    ['status_or=1', ['"or"', '"status_or"']],
    ['a.b_eq=1', ['invalid field name "a.b"', '"a.b_eq"']],
    ['a**b_eq=1', ['invalid field name', '"a**b_eq"']],
    ['charsCount_gt=abc', ['"abc"', 'operator "gt"', 'field "charsCount"', '"charsCount_gt"', 'a number']],
    ['charsCount_eq=', ['field "charsCount"', '"charsCount_eq"']],
    ['charsCount_eq=1e999', ['"charsCount_eq"']],
    ['charsCount_eq=0x10', ['"charsCount_eq"']],
    ['charsCount_eq=NaN', ['"charsCount_eq"']],
    ['charsCount_in=1|x', ['"x"', '"charsCount_in"']],
    ['charsCount_range=1', ['"charsCount_range"', 'exactly 2']],
    ['charsCount_between=1|2|3', ['"charsCount_between"', 'exactly 2']],
    ['createdAt_betweeneq=1 day ago', ['"createdAt_betweeneq"', 'exactly 2']],
    ['createdAt_gte=yesterday', ['"yesterday"', 'field "createdAt"', '"createdAt_gte"']],
    ['createdAt_gte=2026-11-22', ['"createdAt_gte"']],
    ['createdAt_gte=2026-13-01T00:00:00Z', ['"createdAt_gte"']],
    ['createdAt_range=1 day ago|tomorrow', ['"tomorrow"', '"createdAt_range"']],
    ['unicode_eq=yes', ['"yes"', '"unicode_eq"', 'true or false']],
    ['status_exists=maybe', ['"maybe"', '"status_exists"', 'true or false']],
  ])('%s', (text, fragments) => {
    expectUrlError(p(text), fragments);
  });

  test('an express record with a nested object names the key', () => {
    expectUrlError({ status_eq: { $ne: 'x' } }, ['parameter "status_eq"']);
  });
  test(`more than ${MAX_CONDITIONS} conditions`, () => {
    const many = new URLSearchParams(Array.from({ length: MAX_CONDITIONS + 1 }, () => ['status_eq', 'x'] as [string, string]));
    expectUrlError(many, ['too many conditions', '"status_eq"']);
  });
  test(`more than ${MAX_LIST_VALUES} list values`, () => {
    expectUrlError(p(`status_in=${Array.from({ length: MAX_LIST_VALUES + 1 }, (_, i) => i).join('|')}`), ['"status_in"', `at most ${MAX_LIST_VALUES}`]);
  });
});

describe('spec 3 §4.1 rules 3–5 errors: reserved parameters (URL)', () => {
  test.each([
    ['_start=0', ['"_limit" is missing']],
    ['_limit=10', ['"_start" is missing']],
    ['_start=-1&_limit=10', ['parameter "_start"', '-1']],
    ['_start=a&_limit=10', ['parameter "_start"', 'integer']],
    ['_start=0&_limit=1.5', ['parameter "_limit"', 'integer']],
    ['_start=0&_limit=0', ['parameter "_limit"', 'from 1 to 1000']],
    ['_start=0&_limit=1001', ['parameter "_limit"', 'from 1 to 1000', '1001']],
    ['_start=0&_limit=-5', ['parameter "_limit"']],
    ['_start=99999999999999999999&_limit=5', ['parameter "_start"']],
    ['_sort=foo', ['unknown sort field "foo"', 'parameter "_sort"']],
    ['_sort=status:x', ['"status:x"', 'parameter "_sort"']],
    ['_sort=', ['parameter "_sort"']],
    ['_sort=status,,to', ['parameter "_sort"']],
    ['_sort=status,status:-', ['"status" given twice', 'parameter "_sort"']],
    ['_sort=status&_sort=to', ['parameter "_sort" is given more than once']],
    ['_limit=5&_limit=6&_start=0', ['parameter "_limit" is given more than once']],
    ['_group=weekly', ['"weekly"', 'parameter "_group"']],
    ['_group=', ['parameter "_group"']],
    ['_group=status;DROP', ['parameter "_group"']],
  ])('%s', (text, fragments) => {
    expectUrlError(p(text), fragments);
  });

  test('a lower maxLimit is enforced', () => {
    expectUrlError(p('_start=0&_limit=101'), ['parameter "_limit"', 'from 1 to 100'], 100);
  });
});

describe('spec 3 §4.1 rule 9 errors: _q must be the only source', () => {
  test.each([
    [[['_q', '{}'], ['status_eq', 'x']], ['"status_eq"', '"_q"']],
    [[['_q', '{}'], ['_sort', 'to']], ['"_sort"', '"_q"']],
    [[['_q', '{}'], ['_start', '0'], ['_limit', '5']], ['"_start"', '"_q"']],
    [[['_q', '{}'], ['_group', 'daily']], ['"_group"', '"_q"']],
    [[['_q', '{}'], ['_q', '{}']], ['parameter "_q" is given more than once']],
  ] as [string[][], string[]][])('%j', (entries, fragments) => {
    expectUrlError(new URLSearchParams(entries as [string, string][]), fragments);
  });

  test('ignored parameters may accompany _q', () => {
    expect(parseUrl(p('_q={}&access_token=t'), { ignore: ['access_token'] }).origin).toBe('json');
  });
});

describe('spec 3 §2.1 errors: the JSON form names _q', () => {
  const cond = (over: Record<string, unknown>): unknown => ({ filter: [{ field: 'status', operator: 'eq', value: 'x', ...over }] });
  const deep = (levels: number): unknown => {
    let node: unknown = { field: 'status', operator: 'eq', value: 'x' };
    for (let i = 0; i < levels; i += 1) node = { field: '', operator: 'and', value: [node] };
    return { filter: [node] };
  };

  test.each([
    ['{not json', ['parameter "_q" is not valid JSON']],
    ['', ['parameter "_q" is not valid JSON']],
    ['[]', ['parameter "_q" must be a JSON object']],
    ['null', ['parameter "_q" must be a JSON object']],
    ['42', ['parameter "_q" must be a JSON object']],
    [{ filters: [] }, ['"_q"', 'unknown key "filters"']],
    [{ filter: {} }, ['"_q"', 'filter must be an array']],
    [{ filter: ['status_eq'] }, ['"_q"', 'filter[0] must be an object']],
    [cond({ operator: 7 }), ['"_q"', 'filter[0].operator must be a string']],
    [cond({ operator: 'like' }), ['unknown operator "like" in parameter "_q"']],
    [cond({ extra: 1 }), ['"_q"', 'unknown key "extra"']],
    [cond({ field: '' }), ['"_q"', 'filter[0].field']],
    [cond({ field: 'a..b' }), ['"_q"', 'filter[0].field']],
    [cond({ field: 3 }), ['"_q"', 'filter[0].field']],
    [{ filter: [{ field: 'status', operator: 'eq' }] }, ['"_q"', 'filter[0].value is missing']],
    [{ filter: [{ field: 'status', operator: 'or', value: [] }] }, ['"_q"', 'filter[0].field must be empty for "or"']],
    [{ filter: [{ field: '', operator: 'and', value: {} }] }, ['"_q"', 'filter[0].value must be an array']],
    [{ filter: [{ field: '', operator: 'or', value: [{ field: 'x' }] }] }, ['"_q"', 'filter[0].value[0].operator']],
    [deep(MAX_DEPTH), ['"_q"', `deeper than ${MAX_DEPTH}`]],
    [{ sort: 'createdAt' }, ['"_q"', 'sort must be an array']],
    [{ sort: [['createdAt']] }, ['"_q"', 'sort[0]']],
    [{ sort: [['createdAt', 'down']] }, ['"_q"', 'sort[0][1]']],
    [{ sort: [[1, 'asc']] }, ['"_q"', 'sort[0][0]']],
    [{ paging: { start: 0 } }, ['"_q"', 'paging needs both start and limit']],
    [{ paging: { limit: 5 } }, ['"_q"', 'paging needs both start and limit']],
    [{ paging: { start: 0, limit: '5' } }, ['"_q"', 'paging.limit must be an integer']],
    [{ paging: { start: 0.5, limit: 5 } }, ['"_q"', 'paging.start must be an integer']],
    [{ paging: { start: 0, limit: 5, page: 1 } }, ['"_q"', 'unknown key "page"']],
    [{ paging: [0, 5] }, ['"_q"', 'paging must be an object']],
    [{ group: 1 }, ['"_q"', 'group must be a string']],
  ])('%j', (input, fragments) => {
    const err = errorOf(() => parseJson(input));
    expect(err.code).toBe('INVALID_FILTER');
    for (const f of fragments) expect(err.message).toContain(f);
  });

  test(`nesting up to ${MAX_DEPTH} levels is fine`, () => {
    expect(() => parseJson(deep(MAX_DEPTH - 1))).not.toThrow();
  });

  test.each([
    [{ filter: [{ field: 'foo', operator: 'eq', value: 'x' }] }, ['unknown field "foo" in parameter "_q"']],
    [{ filter: [{ field: 'status', operator: 'in', value: 'sent' }] }, ['"_q"', 'operator "in"', 'field "status"', 'non-empty list']],
    [{ filter: [{ field: 'status', operator: 'in', value: [] }] }, ['"_q"', 'non-empty list']],
    [{ filter: [{ field: 'to', operator: 'contains', value: [] }] }, ['"_q"', 'non-empty list']],
    [{ filter: [{ field: 'to', operator: 'contains', value: [1] }] }, ['"_q"', 'a string']],
    [{ filter: [{ field: 'to', operator: 'eq', value: 447700 }] }, ['"_q"', 'field "to"', 'a string']],
    [{ filter: [{ field: 'to', operator: 'eq', value: null }] }, ['"_q"', 'field "to"']],
    [{ filter: [{ field: 'charsCount', operator: 'eq', value: [1] }] }, ['"_q"', 'a number']],
    [{ filter: [{ field: 'charsCount', operator: 'range', value: { min: 1, max: 2 } }] }, ['"_q"', 'exactly 2']],
    [{ filter: [{ field: 'createdAt', operator: 'gt', value: 1700000000 }] }, ['"_q"', 'field "createdAt"']],
    [{ filter: [{ field: 'unicode', operator: 'eq', value: 1 }] }, ['"_q"', 'true or false']],
    [{ filter: [{ field: 'status', operator: 'exists', value: 'yes' }] }, ['"_q"', 'true or false']],
    [{ sort: [['foo', 'asc']] }, ['unknown sort field "foo" in parameter "_q"']],
    [{ paging: { start: -1, limit: 5 } }, ['parameter "_q"', 'paging.start']],
    [{ paging: { start: 0, limit: 1001 } }, ['parameter "_q"', 'paging.limit', '1001']],
    [{ group: 'weekly' }, ['"weekly"', 'parameter "_q"']],
  ])('compile %j', (input, fragments) => {
    const err = errorOf(() => compile(parseJson(input), SMS_FIELDS, { now }));
    expect(err.code).toBe('INVALID_FILTER');
    for (const f of fragments) expect(err.message).toContain(f);
  });

  test('a 10 kB value is cut in the detail', () => {
    const err = errorOf(() => compile(parseJson({ filter: [{ field: 'charsCount', operator: 'eq', value: 'x'.repeat(10240) }] }), SMS_FIELDS));
    expect(err.message.length).toBeLessThan(300);
  });
});
