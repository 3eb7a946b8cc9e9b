// Spec 3 §4.2 aggregations on ClickHouse: a search with aggregations reports the exact `total`
// beside them: contacts without a value, a newer version in another part, deleted contacts and
// other projects are counted as the plain count counts them; and how many statements it ran
// (a terms aggregation that counted the total itself was tried on 2026-11-26 and measured
// slower than the separate count by npm run bench:audience).
import type { ClickHouseClient } from '@clickhouse/client';
import { parseSearch } from '../../core/filters/grammar-b';
import type { ClickHouse } from '../../infra/clickhouse';
import { AudienceSearch, type SearchScope } from '../../stores/audience-search';
import { contact, contactRow } from '../support/audience-model';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

const scope: SearchScope = { project: 'p1', timezone: 'UTC', now: new Date('2026-11-26T12:00:00Z') };
let engine: EmbeddedClickHouse | undefined;
let search: AudienceSearch;
const statements: string[] = [];

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('audience_terms_total');
  const ch = engine.ch;
  const lane = ch.readLane?.() ?? ch.client;
  // The search's session, recording each statement it runs.
  const recording = new Proxy(lane, {
    get(target, prop, receiver) {
      if (prop === 'query') return async (params: { query: string }) => { statements.push(params.query); return target.query(params as Parameters<ClickHouseClient['query']>[0]); };
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  const recorded: ClickHouse = { ...ch, readLane: () => recording };
  const rows = [
    contactRow(contact({ userId: 'a', countryCode: 'DE', clientTags: ['vip', 'new'], attrs: { plan: { t: 'string', v: 'gold' } } })),
    contactRow(contact({ userId: 'b', countryCode: 'DE', clientTags: ['vip'] })),
    contactRow(contact({ userId: 'c', countryCode: 'FR', clientTags: [] })),
    contactRow(contact({ userId: 'd', countryCode: 'DE', clientTags: ['churn'] })),
    contactRow(contact({ userId: 'e', countryCode: 'DE', clientTags: ['vip'] })),
    contactRow(contact({ userId: 'x', project: 'p2', countryCode: 'DE', clientTags: ['vip'] })),
  ];
  await ch.client.insert({ table: ch.table('audience'), values: rows, format: 'JSONEachRow' });
  // Another part: d loses its tag and moves to FR, e is deleted.
  await ch.client.insert({
    table: ch.table('audience'), format: 'JSONEachRow',
    values: [contactRow(contact({ userId: 'd', countryCode: 'FR', clientTags: [] }), 2), contactRow(contact({ userId: 'e', countryCode: 'DE', clientTags: ['vip'] }), 2, true)],
  });
  search = new AudienceSearch(recorded, { getRoot: async () => null }, Buffer.alloc(32, 9));
}, 60_000);

afterAll(() => engine?.close());

const terms = (field: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ t: { type: 'terms', params: { field, size: 2, other_bucket: true, ...extra } } });

async function run(body: Record<string, unknown>): Promise<{ total: number; ids: string[]; aggregations: unknown; statements: number }> {
  statements.length = 0;
  const r = await search.search(parseSearch({ version: '0.0.1', ...body }), scope);
  return { total: r.total, ids: r.entities.map((e) => String(e['_user_id'])), aggregations: r.aggregations, statements: statements.length };
}

describe('spec 3 §4.2: the total beside aggregations', () => {
  test('limit 0: contacts without tags count, the newest version and deletions hold', async () => {
    expect(await run({ limit: 0, aggregations: terms('@_client_tags') })).toEqual({
      total: 4, ids: [], statements: 2,
      aggregations: { t: { buckets: [{ key: 'vip', count: 2 }, { key: 'new', count: 1 }], other: { key: 'other', count: 0 } } },
    });
  });

  test('with a page and a filter: the page, the count and the aggregation', async () => {
    expect(await run({ limit: 10, root: { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['FR'] }, aggregations: terms('@_client_tags') })).toEqual({
      total: 2, ids: ['c', 'd'], statements: 3, aggregations: { t: { buckets: [], other: { key: 'other', count: 0 } } },
    });
  });

  test('a custom attribute few contacts carry', async () => {
    expect(await run({ limit: 0, aggregations: terms('@plan', { size: 1 }) })).toEqual({
      total: 4, ids: [], statements: 2, aggregations: { t: { buckets: [{ key: 'gold', count: 1 }], other: { key: 'other', count: 0 } } },
    });
  });

  test('nothing matches: total 0 and no buckets', async () => {
    expect(await run({ limit: 0, root: { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['US'] }, aggregations: terms('@_client_tags') })).toEqual({
      total: 0, ids: [], statements: 2, aggregations: { t: { buckets: [], other: { key: 'other', count: 0 } } },
    });
  });

  test('a range aggregation', async () => {
    const r = await run({ limit: 0, aggregations: { b: { type: 'range', params: { field: '@_bucket', ranges: [{ from: 0, to: 100 }] } } } });
    expect(r).toMatchObject({ total: 4, statements: 2 });
  });
});
