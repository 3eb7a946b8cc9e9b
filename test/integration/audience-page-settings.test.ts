// Spec 3 §4.2 on ClickHouse: the page statement in `_user_id` order (every cursor page of the
// default order) whose filter reads the audience alone reads it in key order on one thread in
// one-granule blocks (stores/audience-search.ts KEY_ORDER_PAGE_SETTINGS), which stops reading
// sooner; pages in another order, or with an event group's subquery, keep the engine's threads. The settings change no answer: cursor pages walk
// every matching contact once, in order, newest versions only.
import type { ClickHouseClient } from '@clickhouse/client';
import { parseSearch } from '../../core/filters/grammar-b';
import type { ClickHouse } from '../../infra/clickhouse';
import { AudienceSearch, KEY_ORDER_PAGE_SETTINGS, type SearchScope } from '../../stores/audience-search';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

const scope: SearchScope = { project: 'p1', timezone: 'UTC', now: new Date('2026-11-27T12:00:00Z') };
let engine: EmbeddedClickHouse | undefined;
let ch: ClickHouse;
let search: AudienceSearch;
const statements: string[] = [];
const germany = { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['DE'] };

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('audience_page_settings');
  ch = engine.ch;
  const insert = async (version: number, deleted: string, country: string, from: string): Promise<void> => {
    await ch.client.command({
      query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, country_code, bucket, universal_search, created_at, updated_at)
        SELECT 'p1', concat('c', leftPad(toString(number), 5, '0')) AS u, concat('a', u), ${version}, ${deleted}, ${country}, number % 200, u,
          toDateTime64('2026-11-01 00:00:00', 3), toDateTime64('2026-11-01 00:00:00', 3) ${from}`,
    });
  };
  await insert(1, '0', `arrayElement(['DE', 'FR', 'US'], 1 + cityHash64(number) % 3)`, 'FROM numbers(30000)');
  // Another part: newer versions move some contacts to or from DE, and delete some.
  await insert(2, 'number % 5 = 0', `if(number % 2 = 0, 'DE', 'PL')`, 'FROM numbers(30000) WHERE number % 13 = 0');
  // Purchases of every 7th contact.
  await ch.client.command({
    query: `INSERT INTO ${ch.table('events')} (project_id, datasource_id, event_type, user_id, audience_id, event_id, event_date, received_at, source, version)
      SELECT 'p1', 'd1', 'purchase', concat('c', leftPad(toString(number), 5, '0')) AS u, concat('a', u), concat('e', u), toDateTime64('2026-11-20 00:00:00', 3),
        toDateTime64('2026-11-20 00:00:00', 3), 'api', 1 FROM numbers(30000) WHERE number % 7 = 0`,
  });
  const lane = ch.readLane?.() ?? ch.client;
  const recording = new Proxy(lane, {
    get(target, prop, receiver) {
      if (prop === 'query') return async (params: { query: string }) => { statements.push(params.query); return target.query(params as Parameters<ClickHouseClient['query']>[0]); };
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  search = new AudienceSearch({ ...ch, readLane: () => recording }, { getRoot: async () => null }, Buffer.alloc(32, 5));
}, 120_000);

afterAll(() => engine?.close());

describe('spec 3 §4.2: the key-order page statement', () => {
  test('cursor pages in _user_id order walk every match once, in order, with the one-thread settings on each page statement', async () => {
    const expected = (await (await ch.client.query({ query: `SELECT user_id FROM ${ch.table('audience')} FINAL WHERE project_id = 'p1' AND deleted = 0 AND country_code = 'DE' ORDER BY user_id`, format: 'JSONEachRow' })).json<{ user_id: string }>()).map((r) => r.user_id);
    expect(expected.length).toBeGreaterThan(9000);
    statements.length = 0;
    const seen: string[] = [];
    let r = await search.search(parseSearch({ version: '0.0.1', limit: 1000, root: germany }), scope);
    seen.push(...r.entities.map((e) => String(e['_user_id'])));
    while (r.cursor !== null) {
      r = await search.search(parseSearch({ cursor: r.cursor }), scope);
      seen.push(...r.entities.map((e) => String(e['_user_id'])));
    }
    expect(seen).toEqual(expected);
    const pages = statements.filter((s) => s.includes('ORDER BY'));
    expect(pages.length).toBe(Math.ceil(expected.length / 1000));
    expect(pages.every((s) => s.endsWith(`, ${KEY_ORDER_PAGE_SETTINGS}`))).toBe(true);
    // The total is counted with the engine's threads.
    expect(statements.filter((s) => s.includes('count()')).every((s) => !s.includes('max_threads'))).toBe(true);
  });

  test('a key-order page whose filter reads events (an event group) keeps the engine\'s threads for the events scan', async () => {
    statements.length = 0;
    const r = await search.search(parseSearch({ version: '0.0.1', limit: 100, root: { type: 'group', join: 'and', children: [germany, { type: 'group_event', event: 'purchase', children: [] }] } }), scope);
    const expected = (await (await ch.client.query({ query: `SELECT user_id FROM ${ch.table('audience')} FINAL WHERE project_id = 'p1' AND deleted = 0 AND country_code = 'DE'
      AND user_id IN (SELECT user_id FROM ${ch.table('events')} WHERE project_id = 'p1' AND event_type = 'purchase') ORDER BY user_id`, format: 'JSONEachRow' })).json<{ user_id: string }>()).map((x) => x.user_id);
    expect(expected.length).toBeGreaterThan(1000);
    expect(r.total).toBe(expected.length);
    expect(r.entities.map((e) => e['_user_id'])).toEqual(expected.slice(0, 100));
    const page = statements.filter((s) => s.includes('ORDER BY'));
    expect(page).toHaveLength(1);
    expect(page[0]).not.toContain('max_threads');
  });

  test('a page sorted by another field keeps the engine\'s threads and the same order as the engine gives', async () => {
    statements.length = 0;
    const r = await search.search(parseSearch({ version: '0.0.1', limit: 50, sortField: '_country_code', sortAsc: false, root: { type: 'attribute_condition', key: '_country_code', operator: 'exists', values: [] } }), scope);
    const expected = (await (await ch.client.query({ query: `SELECT user_id FROM ${ch.table('audience')} FINAL WHERE project_id = 'p1' AND deleted = 0 AND isNotNull(country_code) ORDER BY country_code DESC, user_id DESC LIMIT 50`, format: 'JSONEachRow' })).json<{ user_id: string }>()).map((x) => x.user_id);
    expect(r.entities.map((e) => e['_user_id'])).toEqual(expected);
    const page = statements.filter((s) => s.includes('ORDER BY'));
    expect(page).toHaveLength(1);
    expect(page[0]).not.toContain('max_threads');
  });
});
