// Grammar B (spec 3 §2.3, §2.4, §3, §8) against real ClickHouse: the embedded engine (chdb,
// in-process, its own temp dir), the product's migrations, rows inserted directly into
// `audience` and `events`, and searches through the product's path (stores/audience-search.ts).
//  - known answers: the table of test/support/grammar-b-cases.ts (the evaluator passes it too);
//  - project isolation, FINAL and deleted rows, segments (depth 4 vs 5, cycles);
//  - paging: limit/offset, cursors through every page, expiry and tampering, sort;
//  - restrictions, sampling, buckets; aggregations;
//  - hostile values in every value position compare literally, never an error.
import { AppError } from '../../core/errors';
import { parseSearch, type SegmentSource } from '../../core/filters/grammar-b';
import type { ClickHouse } from '../../infra/clickhouse';
import { AudienceSearch, type SearchScope } from '../../stores/audience-search';
import { contact, contactRow, insertModel } from '../support/audience-model';
import { AUTUMN_CASES, AUTUMN_CONTACTS, AUTUMN_NOW, AUTUMN_TZ, CASES, CONTACTS, EVENTS, NOW, SEGMENTS, TZ } from '../support/grammar-b-cases';
import { HOSTILE_VALUES } from '../support/hostile-values';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

let engine: EmbeddedClickHouse | undefined;
let ch: ClickHouse;
let search: AudienceSearch;
const segments = new Map<string, unknown>(SEGMENTS);
const source: SegmentSource = { getRoot: async (_p, slug) => segments.get(slug) ?? null };
const KEY = Buffer.alloc(32, 7);
const scope: SearchScope = { project: 'p1', timezone: TZ, now: NOW };

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('grammar_b');
  ch = engine.ch;
  await insertModel(ch, CONTACTS, EVENTS);
  await insertModel(ch, AUTUMN_CONTACTS, []);
  // An older version of c03 (FINAL must show only the newest) and a deleted contact.
  await ch.client.insert({ table: ch.table('audience'), values: [
    contactRow(contact({ userId: 'c03', firstName: 'Old', bucket: 199 }), 0),
    contactRow(contact({ userId: 'c09', firstName: 'Anna', clientTags: ['vip'] }), 2, true),
  ], format: 'JSONEachRow' });
  search = new AudienceSearch(ch, source, KEY);
}, 60_000);

afterAll(() => engine?.close());

async function ids(body: Record<string, unknown>, s: SearchScope = scope): Promise<string[]> {
  const result = await search.search(parseSearch({ version: '0.0.1', limit: 1000, ...body }), s);
  return result.entities.map((e) => String(e['_user_id'])).sort();
}

async function errorOf(fn: () => Promise<unknown>): Promise<AppError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('spec 3 §2.4 Grammar B operators on ClickHouse: hand-written answers', () => {
  test.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    expect(await ids({ root: c.root })).toEqual([...c.expected].sort());
  });
});

describe('spec 3 §2.4 Grammar B dates on the autumn DST day (America/New_York) on ClickHouse', () => {
  test.each(AUTUMN_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    expect(await ids({ root: c.root }, { project: 'p3', timezone: AUTUMN_TZ, now: AUTUMN_NOW })).toEqual([...c.expected].sort());
  });
});

describe('spec 3 §2.4 rule 3: segments', () => {
  const chain = (n: number): void => {
    for (let i = 1; i <= n; i += 1) {
      segments.set(`d${i}`, i === n ? { type: 'attribute_condition', key: '_first_name', operator: 'exists', values: [] } : { type: 'segment_condition', key: `d${i + 1}`, operator: 'in-segment' });
    }
  };
  test('a chain of 4 nested segments is evaluated', async () => {
    chain(4);
    expect(await ids({ root: { type: 'segment_condition', key: 'd1', operator: 'in-segment' } })).toEqual(['c01', 'c02', 'c04']);
  });
  test('a chain of 5 is a 400 naming the chain', async () => {
    chain(5);
    const err = await errorOf(() => ids({ root: { type: 'segment_condition', key: 'd1', operator: 'in-segment' } }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('d1 → d2 → d3 → d4 → d5');
  });
  test('a cycle is a 400 naming the cycle', async () => {
    segments.set('x1', { type: 'segment_condition', key: 'x2', operator: 'in-segment' });
    segments.set('x2', { type: 'group', children: [{ type: 'segment_condition', key: 'x1', operator: 'in-segment-not' }] });
    const err = await errorOf(() => ids({ root: { type: 'segment_condition', key: 'x1', operator: 'in-segment' } }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('segment cycle x1 → x2 → x1');
  });
});

describe('spec 3 §4.2: scope, FINAL and deletions', () => {
  test('another project never shows, even with a matching filter', async () => {
    expect(await ids({ root: { type: 'attribute_condition', key: '_first_name', operator: 'matches-string', values: ['Anna'] } })).toEqual(['c01']);
    expect(await ids({}, { ...scope, project: 'p2' })).toEqual(['c05']);
  });
  test('the newest version wins and deleted contacts are gone', async () => {
    expect(await ids({ root: { type: 'attribute_condition', key: '_first_name', operator: 'matches-string', values: ['Old'] } })).toEqual([]);
    expect(await ids({})).toEqual(['c01', 'c02', 'c03', 'c04']);
  });
});

describe('spec 3 §2.3, §3: paging, sorting, cursors', () => {
  test('limit/offset and sortField/sortAsc', async () => {
    const page = await search.search(parseSearch({ version: '0.0.1', limit: 2, offset: 1, sortField: '_bucket', sortAsc: false }), scope);
    expect(page.entities.map((e) => e['_user_id'])).toEqual(['c02', 'c01']);
    expect(page.total).toBe(4);
  });
  test('a cursor walks every page, then is null; a request may carry only the cursor', async () => {
    let result = await search.search(parseSearch({ version: '0.0.1', limit: 1, sortField: '_first_name' }), scope);
    const seen = result.entities.map((e) => e['_user_id']);
    while (result.cursor !== null) {
      result = await search.search(parseSearch({ cursor: result.cursor }), scope);
      seen.push(...result.entities.map((e) => e['_user_id']));
    }
    // '' (absent) sorts first, then "Anna" < "O'Brien" < "anne" (byte order).
    expect(seen).toEqual(['c03', 'c01', 'c04', 'c02']);
  });
  test('a cursor clears offset and keeps the filter', async () => {
    const first = await search.search(parseSearch({ version: '0.0.1', limit: 1, root: { type: 'attribute_condition', key: '_client_tags', operator: 'exists', values: [] } }), scope);
    const next = await search.search(parseSearch({ cursor: first.cursor, offset: 2 }), scope);
    expect(next.entities.map((e) => e['_user_id'])).toEqual(['c02']);
  });
  test('an expired cursor is a 400', async () => {
    const first = await search.search(parseSearch({ version: '0.0.1', limit: 1 }), scope);
    const later = { ...scope, now: new Date(NOW.getTime() + 5 * 60_000 + 1) };
    const err = await errorOf(() => search.search(parseSearch({ cursor: first.cursor }), later));
    expect(err.status).toBe(400);
    expect(err.message).toContain('expired');
  });
  test('a tampered or foreign cursor is a 400', async () => {
    const first = await search.search(parseSearch({ version: '0.0.1', limit: 1 }), scope);
    const cursor = String(first.cursor);
    const [body, sig] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${Buffer.from(JSON.stringify({ ...payload, p: 'p2' })).toString('base64url')}.${sig}`;
    for (const bad of [forged, `${body}.${sig.slice(1)}x`, 'not-a-cursor', `${body}`]) {
      const err = await errorOf(() => search.search(parseSearch({ cursor: bad }), scope));
      expect(err.status).toBe(400);
    }
    const other = await errorOf(() => search.search(parseSearch({ cursor }), { ...scope, project: 'p2' }));
    expect(other.message).toContain('another project');
  });
  test('includeAllData:false returns the essential fields only', async () => {
    const result = await search.search(parseSearch({ version: '0.0.1', includeAllData: false, limit: 1 }), scope);
    expect(result.entities[0]).toEqual({ _user_id: 'c01', _audience_id: 'aud-c01', _datasource_ids: ['ds1'] });
  });
  test('full contacts carry natives and custom attributes', async () => {
    const result = await search.search(parseSearch({ version: '0.0.1', limit: 1 }), scope);
    expect(result.entities[0]).toMatchObject({
      _user_id: 'c01', _first_name: 'Anna', _client_tags: ['vip', 'new'], _date_birthday: '2000-02-29', _date_imported: '2026-03-27T23:30:00.000Z',
      _geopoint: { latitude: 52.52, longitude: 13.405 }, plan: 'Gold', score: 42, meta: { a: 1 }, since: '2026-03-29T00:30:00.000Z',
    });
  });
});

describe('spec 3 §2.3: restriction fields', () => {
  test.each([
    ['filterAudienceIds', { filterAudienceIds: ['aud-c01', 'aud-c03'] }, ['c01', 'c03']],
    ['filterNotAudienceIds', { filterNotAudienceIds: ['aud-c01'] }, ['c02', 'c03', 'c04']],
    ['filterContactIds', { filterContactIds: ['c02', 'c05'] }, ['c02']],
    ['filterDatasourceIds', { filterDatasourceIds: ['ds2'] }, ['c02']],
    ['filterUniversalSearch', { filterUniversalSearch: 'EXAMPLE' }, ['c01', 'c02']],
    ['filterBucketMin/Max', { filterBucketMin: 5, filterBucketMax: 150 }, ['c01', 'c02']],
    ['filterBucketIn', { filterBucketIn: [0, 199] }, ['c03', 'c04']],
    ['filterBucketNotIn', { filterBucketNotIn: [0, 199] }, ['c01', 'c02']],
    ['filterSamplingPercent 0', { filterSamplingPercent: 0 }, []],
    ['filterSamplingPercent 100', { filterSamplingPercent: 100 }, ['c01', 'c02', 'c03', 'c04']],
  ] as const)('%s', async (_n, body, expected) => {
    expect(await ids(body)).toEqual(expected);
  });
});

describe('spec 3 §4.2: aggregations', () => {
  test('terms on @_client_tags with the other bucket; limit 0', async () => {
    const result = await search.search(parseSearch({
      version: '0.0.1', limit: 0,
      aggregations: { tags: { type: 'terms', params: { field: '@_client_tags', size: 1, other_bucket: true, other_bucket_label: 'rest' } } },
    }), scope);
    expect(result.entities).toEqual([]);
    expect(result.aggregations).toEqual({ tags: { buckets: [{ key: 'vip', count: 2 }], other: { key: 'rest', count: 2 } } });
  });
  test('range on a custom number and nested terms on events', async () => {
    const result = await search.search(parseSearch({
      version: '0.0.1', limit: 0,
      aggregations: {
        score: { type: 'range', params: { field: '@score', ranges: [{ from: null, to: 10 }, { from: 10, to: null }] } },
        ev: { type: 'nested', params: { path: 'events' }, aggs: { types: { type: 'terms', params: { field: 'event-type', size: 5 } } } },
      },
    }), scope);
    expect(result.aggregations).toEqual({
      score: { buckets: [{ key: '*-10', from: null, to: 10, count: 1 }, { key: '10-*', from: 10, to: null, count: 1 }] },
      ev: { count: 4, aggregations: { types: { buckets: [{ key: 'purchase', count: 3 }, { key: 'view', count: 1 }] } } },
    });
  });
});

describe('DESIGN §5: hostile values are bound parameters compared literally', () => {
  test.each(HOSTILE_VALUES.map((v) => [JSON.stringify(v).slice(0, 40), v] as const))('%s', async (_n, v) => {
    const values = [...v].length <= 128 && [...v].length >= 2 ? v : 'ab';
    const roots = [
      { type: 'attribute_condition', key: '_first_name', operator: 'matches-string', values: [v.slice(0, 256) || 'x'] },
      { type: 'attribute_condition', key: '_email', operator: 'contains', values: [values] },
      { type: 'attribute_condition', key: '_client_tags', operator: 'startswith', values: ['&&', v.slice(0, 256) || 'x'] },
      { type: 'group_event', event: v.slice(0, 128) || 'x', datasource: [v.slice(0, 128) || 'x'], children: [{ type: 'event_condition', key: 'sku', operator: 'endswith', values: [v.slice(0, 256) || 'x'] }] },
      { type: 'segment_condition', key: v.slice(0, 128) || 'x', operator: 'in-segment' },
    ];
    for (const root of roots) expect(await ids({ root, filterUniversalSearch: v.slice(0, 128), filterContactIds: [v.slice(0, 256) || 'x'] })).toEqual([]);
  });
});
