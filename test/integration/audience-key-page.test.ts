// Spec 3 §2.3, §4.2 on ClickHouse: the first page in ascending `_user_id` order of a filter with an
// event group (or a segment holding one) takes its total and its page's ids from one pass, then
// reads the page's rows by key, each event subquery restricted to those contacts
// (stores/audience-search.ts KEY_PAGE_MAX_IDS). The answers equal the plain statements' (page, offset,
// negated event group, segment, the contact-attribute join); a contact that stops matching between
// the two statements sends the page back to the usual statement, so no matching row is left out.
import type { ClickHouseClient } from '@clickhouse/client';
import { parseSearch } from '../../core/filters/grammar-b';
import type { ClickHouse } from '../../infra/clickhouse';
import { AudienceSearch, KEY_PAGE_MAX_IDS, type SearchScope } from '../../stores/audience-search';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

const scope: SearchScope = { project: 'p1', timezone: 'UTC', now: new Date('2026-11-27T12:00:00Z') };
let engine: EmbeddedClickHouse | undefined;
let ch: ClickHouse;
let search: AudienceSearch;
const statements: string[] = [];
/** Runs once before the statement after the next count-and-ids statement (a write arriving between the two). */
let between: (() => Promise<void>) | null = null;

const germany = { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['DE'] };
const bigPurchase = { type: 'group_event', event: 'purchase', children: [{ type: 'event_condition', key: 'amount', operator: 'range-number', values: { lowerNumber: 300, upperNumber: null } }] };
const and = (...children: unknown[]): Record<string, unknown> => ({ type: 'group', join: 'and', children });
const segments = new Map<string, unknown>([['buyers', and(bigPurchase)]]);

async function ids(where: string): Promise<string[]> {
  const rows = await (await ch.client.query({
    query: `SELECT user_id FROM ${ch.table('audience')} FINAL WHERE project_id = 'p1' AND deleted = 0 AND ${where} ORDER BY user_id`, format: 'JSONEachRow',
  })).json<{ user_id: string }>();
  return rows.map((r) => r.user_id);
}

const BUYERS = `user_id IN (SELECT user_id FROM {events} WHERE project_id = 'p1' AND event_type = 'purchase' AND mapContains(params_number, 'amount') AND params_number['amount'] >= 300)`;
const buyers = (): string => BUYERS.replace('{events}', ch.table('events'));

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('audience_key_page');
  ch = engine.ch;
  const insert = async (version: number, deleted: string, from: string): Promise<void> => {
    await ch.client.command({
      query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, datasource_ids, country_code, bucket, universal_search, created_at, updated_at)
        SELECT 'p1', concat('c', leftPad(toString(number), 5, '0')) AS u, concat('a', u), ${version}, ${deleted}, if(number % 4 = 0, ['d1', 'd2'], ['d1']),
          arrayElement(['DE', 'FR', 'US'], 1 + cityHash64(number, ${version}) % 3), number % 200, u,
          toDateTime64('2026-11-01 00:00:00', 3), toDateTime64('2026-11-01 00:00:00', 3) ${from}`,
    });
  };
  await insert(1, '0', 'FROM numbers(20000)');
  // Another part: newer versions move some contacts between countries and delete some.
  await insert(2, 'number % 5 = 0', 'FROM numbers(20000) WHERE number % 11 = 0');
  await ch.client.command({
    query: `INSERT INTO ${ch.table('events')} (project_id, datasource_id, event_type, user_id, audience_id, event_id, event_date, received_at, source, params_number, version)
      SELECT 'p1', if(number % 2 = 0, 'd1', 'd2'), 'purchase', concat('c', leftPad(toString(cityHash64(number) % 20000), 5, '0')) AS u, concat('a', u), concat('e', toString(number)),
        toDateTime64('2026-11-20 00:00:00', 3), toDateTime64('2026-11-20 00:00:00', 3), 'api', map('amount', toFloat64(number % 500)), 1 FROM numbers(30000)`,
  });
  const lane = ch.readLane?.() ?? ch.client;
  const recording = new Proxy(lane, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return async (params: { query: string }) => {
          const hook = statements.at(-1)?.includes('groupArraySorted') === true ? between : null;
          if (hook !== null) { between = null; await hook(); }
          statements.push(params.query);
          return target.query(params as Parameters<ClickHouseClient['query']>[0]);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  const source = { getRoot: async (_project: string, slug: string) => (segments.get(slug) ?? null) as never };
  search = new AudienceSearch({ ...ch, readLane: () => recording }, source, Buffer.alloc(32, 7));
}, 120_000);

afterAll(() => engine?.close());

async function run(body: Record<string, unknown>): Promise<{ ids: unknown[]; total: number; cursor: string | null }> {
  statements.length = 0;
  const r = await search.search(parseSearch({ version: '0.0.1', ...body }), scope);
  return { ids: r.entities.map((e) => e['_user_id']), total: r.total, cursor: r.cursor };
}

describe('spec 3 §4.2: the first page of an event-group filter by key', () => {
  test('total and page equal the plain statements\', and the page\'s event subquery reads only the page\'s contacts', async () => {
    const expected = await ids(`country_code = 'DE' AND ${buyers()}`);
    expect(expected.length).toBeGreaterThan(500);
    const r = await run({ limit: 50, root: and(germany, bigPurchase) });
    expect(r).toMatchObject({ ids: expected.slice(0, 50), total: expected.length });
    expect(r.cursor).not.toBeNull();
    expect(statements).toHaveLength(2);
    expect(statements[0]).toContain('groupArraySorted');
    expect(statements[1]).toContain('e.user_id IN {');
    // The cursor's next page is the usual keyset statement and continues where the first page ended.
    const next = await search.search(parseSearch({ cursor: r.cursor ?? '' }), scope);
    expect(next.entities.map((e) => e['_user_id'])).toEqual(expected.slice(50, 100));
  });

  test.each([
    ['an offset', { limit: 30, offset: 70, root: and(germany, bigPurchase) }, (): Promise<string[]> => ids(`country_code = 'DE' AND ${buyers()}`), 70],
    ['an empty `or` beside the event group (matches none)', { limit: 40, root: and(germany, bigPurchase, { type: 'group', join: 'or', children: [] }) }, null, 0],
    ['a segment holding the event group, negated', { limit: 40, root: and(germany, { type: 'segment_condition', key: 'buyers', operator: 'in-segment-not' }) }, (): Promise<string[]> => ids(`country_code = 'DE' AND NOT ${buyers()}`), 0],
    ['an event attribute of the contact (datasource ids joined in)', {
      limit: 40, root: and(germany, { type: 'group_event', event: 'purchase', children: [{ type: 'event_condition', key: 'audience-ds-ids', operator: 'matches-string', values: ['d2'] }] }),
    }, (): Promise<string[]> => ids(`country_code = 'DE' AND has(datasource_ids, 'd2') AND user_id IN (SELECT user_id FROM ${ch.table('events')} WHERE project_id = 'p1' AND event_type = 'purchase')`), 0],
  ] as const)('with %s: the same contacts as the plain statements', async (_name, body, expectedOf, offset) => {
    const r = await run(body as Record<string, unknown>);
    if (expectedOf === null) {
      expect(r).toMatchObject({ ids: [], total: 0 });
      return;
    }
    expect(statements[0]).toContain('groupArraySorted');
    const expected = await expectedOf();
    expect(expected.length).toBeGreaterThan(offset + (body as { limit: number }).limit);
    expect(r).toMatchObject({ ids: expected.slice(offset, offset + (body as { limit: number }).limit), total: expected.length });
  });

  test('a contact that stops matching between the count and the page: the usual page statement reads the page again', async () => {
    const before = await ids(`country_code = 'DE' AND ${buyers()}`);
    const gone = before[3] as string;
    between = async () => {
      await ch.client.command({
        query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, country_code, bucket, universal_search, created_at, updated_at)
          VALUES ('p1', {u:String}, 'x', 99, 0, 'FR', 0, '', '2026-11-01 00:00:00', '2026-11-01 00:00:00')`,
        query_params: { u: gone },
      });
    };
    const r = await run({ limit: 20, root: and(germany, bigPurchase) });
    expect(between).toBeNull();
    // The total is the first pass's; the page is full and holds only contacts that still match.
    expect(r.total).toBe(before.length);
    expect(r.ids).toEqual(before.filter((u) => u !== gone).slice(0, 20));
    expect(statements.filter((s) => s.includes('ORDER BY'))).toHaveLength(2);
  });

  test('pages in another order, descending, on a cursor, or with more than KEY_PAGE_MAX_IDS ids read as before', async () => {
    const root = and(germany, bigPurchase);
    for (const body of [{ limit: 10, root, sortField: '_first_name' }, { limit: 10, root, sortAsc: false }, { limit: 1000, offset: KEY_PAGE_MAX_IDS, root }, { limit: 10, root: germany }]) {
      await run(body);
      expect(statements.some((s) => s.includes('groupArraySorted'))).toBe(false);
    }
  });
});
