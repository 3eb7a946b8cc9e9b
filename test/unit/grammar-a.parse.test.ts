// Spec 3 §4.1 (URL form) and §2.1 (JSON form): what each form parses to.
import { parseJson, parseUrl, type Query } from '../../core/filters/grammar-a';

const cond = (field: string, operator: string, value: unknown): unknown => ({ kind: 'cond', field, operator, value });

describe('spec 3 §4.1 rule 1: filters are <field>_<operator>, several AND', () => {
  test('several filters become children of the root AND, in order', () => {
    const q = parseUrl(new URLSearchParams('status_eq=sent&charsCount_gt=10&to_starts=44'));
    expect(q).toEqual({
      filter: { kind: 'and', children: [cond('status', 'eq', 'sent'), cond('charsCount', 'gt', '10'), cond('to', 'starts', '44')] },
      sort: [],
      origin: 'url',
    });
  });

  test('the key is split at the last underscore', () => {
    const q = parseUrl(new URLSearchParams('foo_bar_eq=1'));
    expect(q.filter.children).toEqual([cond('foo_bar', 'eq', '1')]);
  });

  test('the same field with different operators is AND', () => {
    const q = parseUrl(new URLSearchParams('createdAt_gte=1 day ago&createdAt_lt=1 hour ago'));
    expect(q.filter).toEqual({
      kind: 'and',
      children: [cond('createdAt', 'gte', '1 day ago'), cond('createdAt', 'lt', '1 hour ago')],
    });
  });

  test('no parameters: an empty AND, no sort, no paging, no group', () => {
    expect(parseUrl(new URLSearchParams())).toEqual({ filter: { kind: 'and', children: [] }, sort: [], origin: 'url' });
  });

  test('an express req.query record (string | string[]) parses like URLSearchParams', () => {
    const fromRecord = parseUrl({ status_eq: ['sent', 'failed'], to_contains: '44', _sort: 'to' });
    const fromParams = parseUrl(new URLSearchParams('status_eq=sent&status_eq=failed&to_contains=44&_sort=to'));
    expect(fromRecord).toEqual(fromParams);
  });

  test('parameters in the ignore list are not filters', () => {
    const q = parseUrl(new URLSearchParams('access_token=abc&status_eq=sent'), { ignore: ['access_token'] });
    expect(q.filter.children).toEqual([cond('status', 'eq', 'sent')]);
  });
});

describe('spec 3 §4.1 rule 2: repeated keys OR', () => {
  test('the same key twice is an OR of the two conditions', () => {
    const q = parseUrl(new URLSearchParams('status_eq=sent&charsCount_gt=1&status_eq=failed'));
    expect(q.filter.children).toEqual([
      { kind: 'or', children: [cond('status', 'eq', 'sent'), cond('status', 'eq', 'failed')] },
      cond('charsCount', 'gt', '1'),
    ]);
  });

  test('three repeats, one OR of three', () => {
    const q = parseUrl(new URLSearchParams('to_starts=44&to_starts=33&to_starts=49'));
    expect(q.filter.children).toEqual([
      { kind: 'or', children: [cond('to', 'starts', '44'), cond('to', 'starts', '33'), cond('to', 'starts', '49')] },
    ]);
  });
});

describe('spec 3 §4.1 rule 3: _sort', () => {
  test.each([
    ['createdAt:-,status:+,to', [['createdAt', 'desc'], ['status', 'asc'], ['to', 'asc']]],
    ['to', [['to', 'asc']]],
    ['a*b:-', [['a.b', 'desc']]],
    // an unencoded + decodes to a space: "status: " still means ascending
    ['status: ,createdAt:-', [['status', 'asc'], ['createdAt', 'desc']]],
  ])('_sort=%s', (text, keys) => {
    const q = parseUrl(new URLSearchParams([['_sort', text]]));
    expect(q.sort).toEqual(keys.map(([field, direction]) => ({ field, direction })));
  });
});

describe('spec 3 §4.1 rule 4: _start and _limit', () => {
  test('both given → paging', () => {
    expect(parseUrl(new URLSearchParams('_start=20&_limit=10')).paging).toEqual({ start: 20, limit: 10 });
  });
  test('neither given → no paging', () => {
    expect(parseUrl(new URLSearchParams('status_eq=x')).paging).toBeUndefined();
  });
});

describe('spec 3 §4.1 rule 5: _group', () => {
  test.each(['hourly', 'daily', 'monthly', 'status'])('_group=%s is carried as given', (g) => {
    expect(parseUrl(new URLSearchParams([['_group', g]])).group).toBe(g);
  });
});

describe('spec 3 §4.1 rule 6: nested fields a*b', () => {
  test('URL a*b is the field a.b', () => {
    expect(parseUrl(new URLSearchParams('meta*source_eq=api')).filter.children).toEqual([cond('meta.source', 'eq', 'api')]);
  });
  test('JSON uses the dot', () => {
    expect(parseJson({ filter: [{ field: 'meta.source', operator: 'eq', value: 'api' }] }).filter.children).toEqual([
      cond('meta.source', 'eq', 'api'),
    ]);
  });
});

describe('spec 3 §4.1 rule 8: pipe-separated arrays in URL form', () => {
  test.each([
    ['status_in=a|b|c', ['a', 'b', 'c']],
    ['status_nini=a', ['a']],
    ['status_in=', ['']],
    ['charsCount_range=1|2', ['1', '2']],
    ['createdAt_between=1 day ago|now-ish', ['1 day ago', 'now-ish']],
    ['createdAt_betweeneq=a|b', ['a', 'b']],
    ['to_contains=44|33', ['44', '33']],
    ['to_endsi=x|y', ['x', 'y']],
    ['to_contains=44', '44'],
    ['text_eq=a|b', 'a|b'],
    ['status_exists=true', 'true'],
  ])('%s', (text, value) => {
    const q = parseUrl(new URLSearchParams(text));
    expect(q.filter.children).toHaveLength(1);
    expect((q.filter.children[0] as { value: unknown }).value).toEqual(value);
  });
});

describe('spec 3 §2.1 + §4.1 rule 9: the JSON form _q', () => {
  const expected: Query = {
    filter: {
      kind: 'and',
      children: [
        cond('status', 'eq', 'sent') as never,
        {
          kind: 'or',
          children: [cond('to', 'starts', '44') as never, { kind: 'and', children: [cond('charsCount', 'gt', 100) as never] }],
        },
      ],
    },
    sort: [{ field: 'createdAt', direction: 'desc' }, { field: 'status', direction: 'asc' }],
    paging: { start: 10, limit: 5 },
    group: 'daily',
    origin: 'json',
  };
  const json = {
    filter: [
      { field: 'status', operator: 'eq', value: 'sent' },
      {
        field: '',
        operator: 'or',
        value: [{ field: 'to', operator: 'starts', value: '44' }, { field: '', operator: 'and', value: [{ field: 'charsCount', operator: 'gt', value: 100 }] }],
      },
    ],
    paging: { start: 10, limit: 5 },
    sort: [['createdAt', 'desc'], ['status', 'asc']],
    group: 'daily',
  };

  test('nested and/or with empty field; paging, sort, group', () => {
    expect(parseJson(JSON.stringify(json))).toEqual(expected);
  });
  test('an already parsed object gives the same query', () => {
    expect(parseJson(json)).toEqual(expected);
  });
  test('via the URL parameter _q (with ignored parameters alongside)', () => {
    expect(parseUrl({ _q: JSON.stringify(json), access_token: 't' }, { ignore: ['access_token'] })).toEqual(expected);
  });
  test('a logical condition may omit field', () => {
    expect(parseJson({ filter: [{ operator: 'or', value: [] }] }).filter.children).toEqual([{ kind: 'or', children: [] }]);
  });
  test('an empty object is an empty query', () => {
    expect(parseJson('{}')).toEqual({ filter: { kind: 'and', children: [] }, sort: [], origin: 'json' });
  });
});
