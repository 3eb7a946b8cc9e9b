// Spec 3 §4.2 on ClickHouse: a terms aggregation on @_client_tags counts each contact once per
// distinct tag, while the tags stay stored and returned exactly as the client sent them
// (duplicates included, spec 2 §2). Migration 0021 stores the distinct tags once per row
// (audience.client_tags_distinct, MATERIALIZED) and the aggregation reads them instead of
// evaluating arrayDistinct(client_tags) for every contact it counts. Contacts written before
// the migration answer exactly as before; contacts the ingest writer writes after it get the
// column without the writer naming it.
import type { ClickHouseClient } from '@clickhouse/client';
import { planWrites, type ContactStates, type IngestMessage } from '../../core/ingest';
import { parseSearch } from '../../core/filters/grammar-b';
import { loadMigrations, migrate, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { AudienceSearch, type SearchScope } from '../../stores/audience-search';
import { AudienceWriter } from '../../stores/audience-writer';
import { contact, contactRow } from '../support/audience-model';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

const at = (project: string): SearchScope => ({ project, timezone: 'UTC', now: new Date('2026-11-27T12:00:00Z') });
let engine: EmbeddedClickHouse | undefined;
let ch: ClickHouse;
let search: AudienceSearch;
const statements: string[] = [];

const tags = (size = 10): Record<string, unknown> => ({ tags: { type: 'terms', params: { field: '@_client_tags', size, other_bucket: true } } });
const attribute = (key: string, operator: string, values: unknown): Record<string, unknown> => ({ type: 'attribute_condition', key, operator, values });

/** Requests on the generated project p3 whose answers must not change with the migration. */
const REQUESTS: Record<string, Record<string, unknown>> = {
  'terms over all contacts': { limit: 0, aggregations: tags() },
  'terms, 2 buckets and the other bucket, under a tag filter': { limit: 0, root: attribute('_client_tags', 'matches-string', ['vip']), aggregations: tags(2) },
  'terms beside a page of contacts with all their data': { limit: 20, includeAllData: true, root: attribute('_country_code', 'matches-string', ['DE']), aggregations: tags() },
};

async function answer(body: Record<string, unknown>, project = 'p3', by = search): Promise<{ entities: unknown[]; total: number; aggregations: unknown }> {
  const r = await by.search(parseSearch({ version: '0.0.1', ...body }), at(project));
  return { entities: r.entities, total: r.total, aggregations: r.aggregations };
}

async function rows<T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  return (await ch.client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}

const before = new Map<string, unknown>();

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('audience_tags_distinct', { migrated: false });
  ch = engine.ch;
  await migrate(ch, createLogger('warn'), loadMigrations().filter((m) => m.version < 21));
  // p1: tags sent with duplicates; f changes its tags in a newer version, g is deleted, e is another project's.
  await ch.client.insert({
    table: ch.table('audience'), format: 'JSONEachRow', values: [
      contactRow(contact({ userId: 'a', countryCode: 'DE', clientTags: ['vip', 'vip', 'new'] })),
      contactRow(contact({ userId: 'b', countryCode: 'DE', clientTags: ['vip'] })),
      contactRow(contact({ userId: 'c', countryCode: 'FR', clientTags: ['new', 'new'] })),
      contactRow(contact({ userId: 'd', countryCode: 'FR', clientTags: [] })),
      contactRow(contact({ userId: 'e', project: 'p2', clientTags: ['vip', 'vip'] })),
      contactRow(contact({ userId: 'f', clientTags: ['vip', 'vip'] })),
      contactRow(contact({ userId: 'g', clientTags: ['vip'] })),
    ],
  });
  await ch.client.insert({
    table: ch.table('audience'), format: 'JSONEachRow',
    values: [contactRow(contact({ userId: 'f', clientTags: ['churn', 'churn', 'churn'] }), 2), contactRow(contact({ userId: 'g', clientTags: ['vip'] }), 2, true)],
  });
  // p3: 5,000 contacts, a fifth of them with a tag sent twice, in two parts.
  await ch.client.command({
    query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, country_code, client_tags, bucket, universal_search, created_at, updated_at)
      SELECT 'p3', concat('c', leftPad(toString(number), 5, '0')) AS u, concat('a', u), 1, 0, arrayElement(['DE', 'FR', 'US'], 1 + cityHash64(number, 1) % 3),
        arrayConcat(arrayFilter(t -> cityHash64(number, t) % 3 = 0, ['vip', 'new', 'churn', 'b2b']), if(number % 5 = 0, ['vip', 'vip'], [])),
        number % 200, u, toDateTime64('2026-11-01 00:00:00', 3), toDateTime64('2026-11-01 00:00:00', 3)
      FROM numbers(5000)`,
  });
  await ch.client.command({
    query: `INSERT INTO ${ch.table('audience')} (project_id, user_id, audience_id, version, deleted, country_code, client_tags, bucket, universal_search, created_at, updated_at)
      SELECT 'p3', concat('c', leftPad(toString(number * 7), 5, '0')) AS u, concat('a', u), 2, number % 4 = 0, 'DE', ['b2b', 'b2b', 'new'],
        number % 200, u, toDateTime64('2026-11-02 00:00:00', 3), toDateTime64('2026-11-02 00:00:00', 3)
      FROM numbers(500)`,
  });
  const lane = ch.readLane?.() ?? ch.client;
  // The search's session, recording each statement it runs (and, for the answers before the migration, rewriting it back).
  const session = (rewrite: (sql: string) => string): ClickHouseClient => new Proxy(lane, {
    get(target, prop, receiver) {
      if (prop === 'query') return async (params: { query: string }) => { statements.push(params.query); return target.query({ ...params, query: rewrite(params.query) } as Parameters<ClickHouseClient['query']>[0]); };
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  search = new AudienceSearch({ ...ch, readLane: () => session((sql) => sql) }, { getRoot: async () => null }, Buffer.alloc(32, 4));
  // Before migration 0021 the statements de-duplicated the tags of every contact they counted.
  const earlier = new AudienceSearch({ ...ch, readLane: () => session((sql) => sql.replaceAll('client_tags_distinct', 'arrayDistinct(client_tags)')) }, { getRoot: async () => null }, Buffer.alloc(32, 4));
  for (const [name, body] of Object.entries(REQUESTS)) before.set(name, await answer(body, 'p3', earlier));
  await migrate(ch, createLogger('warn'));
  for (let i = 0; i < 600; i += 1) {
    const pending = await rows<{ n: string }>(`SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done`, { db: ch.database });
    if (Number(pending[0]?.n) === 0) break;
    await new Promise((resolve) => { setTimeout(resolve, 100); });
  }
}, 300_000);

afterAll(() => engine?.close());

describe('spec 3 §4.2: terms on @_client_tags over tags sent with duplicates (migration 0021)', () => {
  test('each contact counts once per distinct tag; newer versions, deletions and other projects hold', async () => {
    expect(await answer({ limit: 0, aggregations: tags() }, 'p1')).toEqual({
      entities: [], total: 5,
      aggregations: { tags: { buckets: [{ key: 'new', count: 2 }, { key: 'vip', count: 2 }, { key: 'churn', count: 1 }], other: { key: 'other', count: 0 } } },
    });
  });

  test('the contacts keep their tags as sent, duplicates included (spec 2 §2)', async () => {
    const r = await answer({ limit: 10, includeAllData: true, root: attribute('_client_tags', 'exists', []) }, 'p1');
    expect(Object.fromEntries(r.entities.map((e) => [(e as Record<string, unknown>)['_user_id'], (e as Record<string, unknown>)['_client_tags']])))
      .toEqual({ a: ['vip', 'vip', 'new'], b: ['vip'], c: ['new', 'new'], f: ['churn', 'churn', 'churn'] });
    const stored = await rows<{ user_id: string; client_tags: string[] }>(`SELECT user_id, client_tags FROM ${ch.table('audience')} FINAL WHERE project_id = 'p1' AND user_id = 'a'`);
    expect(stored).toEqual([{ user_id: 'a', client_tags: ['vip', 'vip', 'new'] }]);
  });

  test.each(Object.keys(REQUESTS))('contacts written before it answer exactly as before: %s', async (name) => {
    const now = await answer(REQUESTS[name] as Record<string, unknown>);
    expect(now).toEqual(before.get(name));
    expect(now.total).toBeGreaterThan(0);
  });

  test('terms over all contacts equal an independent count of distinct tags per contact', async () => {
    const expected = await rows<{ key: string; count: string }>(`SELECT tag AS key, count() AS count FROM (SELECT user_id, client_tags FROM ${ch.table('audience')} FINAL
      WHERE project_id = 'p3' AND deleted = 0) ARRAY JOIN arrayDistinct(client_tags) AS tag GROUP BY tag ORDER BY count DESC, tag`);
    expect(expected.length).toBe(4);
    expect((await answer({ limit: 0, aggregations: tags() })).aggregations)
      .toEqual({ tags: { buckets: expected.map((r) => ({ key: r.key, count: Number(r.count) })), other: { key: 'other', count: 0 } } });
  });

  test('the terms statement reads the stored distinct tags instead of de-duplicating every contact', async () => {
    statements.length = 0;
    await answer({ limit: 0, aggregations: tags() });
    const terms = statements.filter((s) => s.includes('arrayJoin'));
    expect(terms).toHaveLength(1);
    expect(terms[0]).toContain('arrayJoin(client_tags_distinct)');
    expect(terms[0]).not.toContain('arrayDistinct');
  });

  test('MATERIALIZE COLUMN stored the column in every part written before the migration', async () => {
    const parts = await rows<{ name: string; has: number }>(`SELECT name, max(column = 'client_tags_distinct') AS has FROM system.parts_columns
      WHERE database = {db:String} AND table = 'audience' AND active GROUP BY name`, { db: ch.database });
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(parts.every((p) => Number(p.has) === 1)).toBe(true);
    const wrong = await rows<{ n: string }>(`SELECT count() AS n FROM ${ch.table('audience')} WHERE client_tags_distinct != arrayDistinct(client_tags)`);
    expect(Number(wrong[0]?.n)).toBe(0);
  });

  test('contacts the ingest writer writes after it get the distinct tags, and keep theirs as sent', async () => {
    const message: IngestMessage = {
      kind: 'contacts', orgId: 'o', projectId: 'pw', datasourceId: 'd', receivedAt: '2026-11-27T10:00:00.000Z', failed: 0,
      contacts: [
        { userId: 'w1', attributes: { _client_tags: { type: 'array', value: ['gold', 'gold', 'vip'] } } },
        { userId: 'w2', attributes: { _client_tags: { type: 'array', value: ['gold'] } } },
      ],
    };
    const states: ContactStates = new Map();
    await new AudienceWriter(ch).write(planWrites({ messages: [{ seq: 1, message }], states, storedBefore: () => false }), states);
    const stored = await rows<{ user_id: string; client_tags: string[]; client_tags_distinct: string[] }>(
      `SELECT user_id, client_tags, client_tags_distinct FROM ${ch.table('audience')} FINAL WHERE project_id = 'pw' ORDER BY user_id`);
    expect(stored).toEqual([
      { user_id: 'w1', client_tags: ['gold', 'gold', 'vip'], client_tags_distinct: ['gold', 'vip'] },
      { user_id: 'w2', client_tags: ['gold'], client_tags_distinct: ['gold'] },
    ]);
    expect((await answer({ limit: 0, aggregations: tags() }, 'pw')).aggregations)
      .toEqual({ tags: { buckets: [{ key: 'gold', count: 2 }, { key: 'vip', count: 1 }], other: { key: 'other', count: 0 } } });
  });
});
