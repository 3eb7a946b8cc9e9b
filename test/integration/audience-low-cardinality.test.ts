// Spec 3 §2.3, §2.4, §4.2 on ClickHouse: migration 0020 stores the audience's project_id and
// country_code as LowCardinality. Contacts written before it answer every search exactly as
// before, the attribute-only scan reads fewer bytes, and migration 0017's skip indexes still
// skip granules on the rewritten parts (converting the lists and map keys too left the e-mail and
// phone indexes selecting every granule until they were cleared and built again).
import { parseSearch } from '../../core/filters/grammar-b';
import { AppError } from '../../core/errors';
import { loadMigrations, migrate, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { AudienceSearch, type SearchScope } from '../../stores/audience-search';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

const CONTACTS = 300_000;
const scope: SearchScope = { project: 'p1', timezone: 'UTC', now: new Date('2026-11-27T12:00:00Z') };
let engine: EmbeddedClickHouse | undefined;
let ch: ClickHouse;
let wide: AudienceSearch;
let narrow: AudienceSearch;

const attribute = (key: string, operator: string, values: unknown): Record<string, unknown> => ({ type: 'attribute_condition', key, operator, values });
const and = (...children: Record<string, unknown>[]): Record<string, unknown> => ({ type: 'group', join: 'and', children });

/** Requests whose answers must not change with the column types. */
const REQUESTS: Record<string, Record<string, unknown>> = {
  'attribute-only': { limit: 50, root: and(attribute('_country_code', 'matches-string', ['DE']), attribute('_client_tags', 'matches-string', ['vip']), attribute('score', 'range-number', { lowerNumber: 50, upperNumber: null })) },
  'sorted by country, descending, page 2': { limit: 20, offset: 20, sortField: '_country_code', sortAsc: false, root: attribute('plan', 'matches-string', ['gold']) },
  'tags -not and text contains': { limit: 30, root: and(attribute('_client_tags', 'matches-string-not', ['new']), attribute('plan', 'contains', ['IL'])) },
  'datasource restriction and exists': { limit: 10, filterDatasourceIds: ['ds2'], root: attribute('score', 'exists', []) },
  'terms over tags, countries and a custom attribute': {
    limit: 0, aggregations: {
      tags: { type: 'terms', params: { field: '@_client_tags', size: 10, other_bucket: true } },
      countries: { type: 'terms', params: { field: '@_country_code', size: 3, other_bucket: true } },
      plans: { type: 'terms', params: { field: '@plan', size: 10 } },
    },
  },
};

async function answer(search: AudienceSearch, body: Record<string, unknown>): Promise<unknown> {
  const r = await search.search(parseSearch({ version: '0.0.1', ...body }), scope);
  return { entities: r.entities, total: r.total, aggregations: r.aggregations };
}

/** Bytes the statement read (ClickHouse's own statistics of the JSON output). */
async function bytesRead(query: string): Promise<number> {
  const result = await ch.client.query({ query, format: 'JSON' });
  const body = (await result.json()) as unknown as { statistics?: { bytes_read?: number } };
  return Number(body.statistics?.bytes_read ?? 0);
}

const COUNT = `SELECT count() FROM {audience} FINAL WHERE project_id = 'p1' AND deleted = 0 AND isNotNull(country_code) AND country_code = 'DE'
  AND has(client_tags, 'vip') AND mapContains(attrs_number, 'score') AND toFloat64(attrs_number['score']) >= 50`;

const before = new Map<string, unknown>();
let bytesBefore = 0;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('audience_lc', { migrated: false });
  ch = engine.ch;
  // Every migration but 0020: later ones add columns the search reads (0021: client_tags_distinct).
  await migrate(ch, createLogger('warn'), loadMigrations().filter((m) => m.version !== 20));
  // Contacts written before migration 0020, merged into one part (as the ingest writer's rows are after merges).
  await ch.client.command({
    query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, datasource_ids, email, phone_mobile, country_code, client_tags,
        attrs_string, attrs_number, bucket, universal_search, created_at, updated_at)
      SELECT 'p1', concat('c', leftPad(toString(number), 6, '0')) AS u, concat('a', u), 1, 0, if(number % 3 = 0, ['ds1', 'ds2'], ['ds1']),
        concat(u, '@example.com'), concat('+4915', leftPad(toString(number), 8, '0')) AS ph,
        if(number % 11 = 0, NULL, arrayElement(['DE', 'FR', 'US', 'PL'], 1 + cityHash64(number, 2) % 4)),
        arrayFilter(t -> cityHash64(number, t) % 4 = 0, ['vip', 'new', 'churn']),
        map('plan', arrayElement(['free', 'gold', 'silver'], 1 + cityHash64(number, 12) % 3)),
        if(number % 7 = 0, map(), map('score', toFloat64(cityHash64(number, 8) % 100))),
        number % 200, lower(concat(u, ' ', u, '@example.com ', ph)), now64(3), now64(3)
      FROM numbers(${CONTACTS})`,
  });
  await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table('audience')} FINAL` });
  wide = new AudienceSearch(ch, { getRoot: async () => null }, Buffer.alloc(32, 6));
  narrow = new AudienceSearch(ch, { getRoot: async () => null }, Buffer.alloc(32, 6), { maxExecutionSeconds: 30, maxRowsToRead: 160_000, maxMemoryBytes: 1_073_741_824 });
  for (const [name, body] of Object.entries(REQUESTS)) before.set(name, await answer(wide, body));
  bytesBefore = await bytesRead(COUNT.replace('{audience}', ch.table('audience')));
  await migrate(ch, createLogger('warn'));
  // Wait for the migration's background mutations (the rewrite, then the indexes).
  for (let i = 0; i < 600; i += 1) {
    const pending = await (await ch.client.query({ query: `SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done`, query_params: { db: ch.database }, format: 'JSONEachRow' })).json<{ n: string }>();
    if (Number(pending[0]?.n) === 0) break;
    await new Promise((resolve) => { setTimeout(resolve, 100); });
  }
}, 300_000);

afterAll(() => engine?.close());

describe('migration 0020: LowCardinality audience columns (spec 3 §2.4, §4.2)', () => {
  test('the columns are stored as dictionary indexes', async () => {
    const types = await (await ch.client.query({ query: `SELECT name, type FROM system.columns WHERE database = {db:String} AND table = 'audience' AND name IN ('project_id', 'country_code', 'client_tags', 'attrs_number') ORDER BY name`, query_params: { db: ch.database }, format: 'JSONEachRow' })).json<{ name: string; type: string }>();
    expect(types).toEqual([
      { name: 'attrs_number', type: 'Map(String, Float64)' },
      { name: 'client_tags', type: 'Array(String)' },
      { name: 'country_code', type: 'LowCardinality(Nullable(String))' },
      { name: 'project_id', type: 'LowCardinality(String)' },
    ]);
  });

  test.each(Object.keys(REQUESTS))('contacts written before it answer exactly as before: %s', async (name) => {
    expect(await answer(wide, REQUESTS[name] as Record<string, unknown>)).toEqual(before.get(name));
  });

  test('the attribute-only count reads fewer bytes than before (project and country: 1 byte a contact each)', async () => {
    const after = await bytesRead(COUNT.replace('{audience}', ch.table('audience')));
    expect(bytesBefore).toBeGreaterThan(0);
    expect(after).toBeLessThan(bytesBefore * 0.85);
  });

  test('one e-mail and one phone number still read a few granules (the skip indexes stay valid on the rewritten part)', async () => {
    const one = async (key: string, value: string): Promise<unknown> => {
      const r = await narrow.search(parseSearch({ version: '0.0.1', limit: 10, root: attribute(key, 'matches-string', [value]) }), scope);
      return { ids: r.entities.map((e) => e['_user_id']), total: r.total };
    };
    expect(await one('_email', 'c123456@example.com')).toEqual({ ids: ['c123456'], total: 1 });
    expect(await one('_phone_mobile', '+491500222222')).toEqual({ ids: ['c222222'], total: 1 });
    // The ceiling is what they pass under: a filter every granule matches goes beyond it.
    await expect(narrow.search(parseSearch({ version: '0.0.1', limit: 10, root: attribute('_country_code', 'matches-string', ['DE']) }), scope))
      .rejects.toMatchObject({ code: 'QUERY_TOO_EXPENSIVE' } satisfies Partial<AppError>);
  });

  test('contacts written after it are found with their lists and attributes', async () => {
    await ch.client.insert({
      table: ch.table('audience'), format: 'JSONEachRow',
      values: [{ project_id: 'p1', user_id: 'z1', audience_id: 'az1', version: 2, deleted: 0, datasource_ids: ['ds9'], country_code: 'NO', client_tags: ['fresh'], tags: [],
        attrs_string: { plan: 'platinum' }, attrs_number: { score: 99 }, attrs_bool: {}, attrs_date: {}, attrs_array: { langs: ['nb'] }, attrs_json: {}, bucket: 1,
        universal_search: 'z1', created_at: '2026-11-27 00:00:00.000', updated_at: '2026-11-27 00:00:00.000' }],
    });
    const r = await wide.search(parseSearch({ version: '0.0.1', limit: 5, root: and(attribute('_country_code', 'matches-string', ['NO']), attribute('_client_tags', 'matches-string', ['fresh']), attribute('score', 'range-number', { lowerNumber: 99, upperNumber: 99 })) }), scope);
    expect(r.total).toBe(1);
    expect(r.entities[0]).toMatchObject({ _user_id: 'z1', _datasource_ids: ['ds9'], _country_code: 'NO', _client_tags: ['fresh'], plan: 'platinum', score: 99, langs: ['nb'] });
  });
});
