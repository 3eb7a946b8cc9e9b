// The ingest writer's key filters in front of event_keys and ds_contacts (stores/key-filters.ts,
// docs/ingestion.md "Lookups before a run"), on embedded chdb. Spec 2 §2.2: an _event_id already
// stored is a duplicate, and a contact's stored state decides its merge; a filter may send a new
// key to the table, never let a stored one through.
import { keyHash, loadKeyHash, planWrites, userKey, type ContactStates, type IngestMessage } from '../../core/ingest';
import { createLogger } from '../../infra/logger';
import { ingestKeyFilterChecks } from '../../infra/metrics';
import { AudienceWriter } from '../../stores/audience-writer';
import { CONTACT_KEYS, EVENT_KEYS, KeyFilterMemory, StoredKeys } from '../../stores/key-filters';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

jest.setTimeout(120_000);

const log = createLogger('silent');
const hostile = ['plain', 'quote " and \' apostrophe', 'back\\slash', 'tab\there', 'emoji 😀 and ü', 'new\nline', '\u2028separator', ' spaced ', ''];

function eventsMessage(seq: number, datasourceId: string, eventIds: readonly string[], users: number, prefix: string): { seq: number; message: IngestMessage } {
  return {
    seq,
    message: {
      kind: 'events', orgId: 'o', projectId: 'p', datasourceId, receivedAt: '2026-11-27T01:00:00.000Z', failed: 0,
      items: eventIds.map((eventId, i) => ({
        userData: { userId: `${prefix}-${i % users}`, attributes: {} },
        event: { userId: `${prefix}-${i % users}`, eventId, eventType: 'purchase', eventDate: '2026-11-27T00:59:00.000Z', triggers: false, parameters: {} },
      })),
    },
  };
}

/** Stores the events (and their contacts) as the ingest writer does: through `writer`, which records the keys in its filters first. */
async function store(writer: AudienceWriter, seq: number, datasourceId: string, eventIds: readonly string[], users = 7, prefix = 'user'): Promise<void> {
  const states: ContactStates = new Map();
  await writer.write(planWrites({ messages: [eventsMessage(seq, datasourceId, eventIds, users, prefix)], states, storedBefore: () => false }), states);
}

type EventKey = { datasourceId: string; eventId: string };
const keys = (datasourceId: string, ids: readonly string[]): EventKey[] => ids.map((eventId) => ({ datasourceId, eventId }));
const sorted = (set: Set<string>): string[] => [...set].sort();

/** How many keys of `keys` the filters handed to the table, and ruled out, so far (ingest_key_filter_checks_total). */
async function checks(keys: 'event_ids' | 'contacts'): Promise<{ table: number; filter: number }> {
  const values = (await ingestKeyFilterChecks.get()).values.filter((v) => v.labels['keys'] === keys);
  const of = (by: string): number => values.filter((v) => v.labels['answered_by'] === by).reduce((sum, v) => sum + v.value, 0);
  return { table: of('table'), filter: of('filter') };
}

/** A writer with key filters of its own. */
function filteredWriter(engine: EmbeddedClickHouse, budgetBytes: number, pageKeys?: number): { writer: AudienceWriter; ids: StoredKeys; contacts: StoredKeys } {
  const memory = new KeyFilterMemory(budgetBytes);
  const options = pageKeys === undefined ? {} : { pageKeys };
  const ids = new StoredKeys(engine.ch, EVENT_KEYS, memory, log, options);
  const contacts = new StoredKeys(engine.ch, CONTACT_KEYS, memory, log, options);
  return { writer: new AudienceWriter(engine.ch, { events: ids, contacts }), ids, contacts };
}

describe('key filters in front of event_keys and ds_contacts (spec 2 §2.2, §3)', () => {
  let engine: EmbeddedClickHouse;
  let plain: AudienceWriter;
  const stored = Array.from({ length: 3_000 }, (_, i) => `stored-${i}`);
  const fresh = Array.from({ length: 3_000 }, (_, i) => `fresh-${i}`);
  beforeAll(async () => {
    await loadKeyHash();
    engine = await openEmbeddedClickHouse('key_filters');
    plain = new AudienceWriter(engine.ch);
    await store(plain, 1, 'ds-a', [...stored, ...hostile], 1_000);
    await store(plain, 2, 'ds-b', ['only-in-b']);
  });
  afterAll(async () => {
    await engine.close();
  });

  test('keyHash equals ClickHouse xxHash64 of the same key, hostile keys included', async () => {
    const result = await engine.ch.client.query({
      query: 'SELECT id, toUInt32(bitAnd(xxHash64(id), 4294967295)) AS lo, toUInt32(bitShiftRight(xxHash64(id), 32)) AS hi FROM (SELECT arrayJoin({ids:Array(String)}) AS id)',
      query_params: { ids: hostile }, format: 'JSONEachRow',
    });
    const rows = await result.json<{ id: string; lo: number; hi: number }>();
    expect(rows).toHaveLength(hostile.length);
    for (const row of rows) expect(keyHash(row.id)).toEqual({ lo: row.lo, hi: row.hi });
  });

  test('event ids, built from the table after a restart (pages of 500): stored ids are found, and the table is asked about few of the new ones', async () => {
    const { writer, ids } = filteredWriter(engine, 64 * 1024 * 1024, 500);
    // The first run of a datasource is answered by the table while the filter is built.
    let before = await checks('event_ids');
    expect(sorted(await writer.storedEventKeys(keys('ds-a', ['stored-1', 'fresh-1'])))).toEqual(['ds-a:stored-1']);
    expect((await checks('event_ids')).table - before.table).toBe(2);
    await ids.settled('ds-a');
    expect(ids.status('ds-a')).toBe('ready');
    before = await checks('event_ids');
    const found = await writer.storedEventKeys(keys('ds-a', [...stored, ...hostile, ...fresh, 'Plain', 'new', 'line']));
    expect(sorted(found)).toEqual([...stored, ...hostile].map((id) => `ds-a:${id}`).sort());
    const after = await checks('event_ids');
    const askedTable = after.table - before.table;
    expect(askedTable).toBeGreaterThanOrEqual(stored.length + hostile.length);
    expect(askedTable - stored.length - hostile.length).toBeLessThan(fresh.length * 0.03);
    expect(after.filter - before.filter).toBeGreaterThan(fresh.length * 0.97);
    // Another datasource has a filter of its own.
    expect(sorted(await writer.storedEventKeys(keys('ds-b', ['only-in-b', 'stored-1'])))).toEqual(['ds-b:only-in-b']);
    await ids.settled('ds-b');
    expect(sorted(await writer.storedEventKeys(keys('ds-b', ['only-in-b', 'stored-1'])))).toEqual(['ds-b:only-in-b']);
  });

  test('contacts: a project\'s stored states are loaded, a new contact gets an empty state without a statement', async () => {
    const { writer, contacts } = filteredWriter(engine, 64 * 1024 * 1024, 100);
    const users = (ids: readonly string[]): Array<{ projectId: string; userId: string }> => ids.map((userId) => ({ projectId: 'p', userId }));
    await writer.loadStates(new Map(), users(['user-1']));
    await contacts.settled('p');
    expect(contacts.status('p')).toBe('ready');
    const before = await checks('contacts');
    const states: ContactStates = new Map();
    const newcomers = Array.from({ length: 2_000 }, (_, i) => `newcomer-${i}`);
    await writer.loadStates(states, users(['user-0', 'user-999', ...newcomers]));
    expect(states.get(userKey('p', 'user-0'))?.has('ds-a')).toBe(true);
    expect(states.get(userKey('p', 'user-999'))?.has('ds-a')).toBe(true);
    expect(newcomers.every((u) => states.get(userKey('p', u))?.size === 0)).toBe(true);
    const after = await checks('contacts');
    expect(after.filter - before.filter).toBeGreaterThan(newcomers.length * 0.97);
    // The same answer through the table alone.
    const viaTable: ContactStates = new Map();
    await plain.loadStates(viaTable, users(['user-0', 'user-999', ...newcomers]));
    expect([...viaTable.entries()].map(([k, v]) => [k, [...v.keys()]])).toEqual([...states.entries()].map(([k, v]) => [k, [...v.keys()]]));
  });

  test('keys stored while a filter is being built are found once it is ready (event ids and contacts)', async () => {
    await store(plain, 8, 'ds-c', Array.from({ length: 300 }, (_, i) => `before-${i}`));
    const { writer, ids, contacts } = filteredWriter(engine, 64 * 1024 * 1024, 200);
    // Hold each build after its first page of hashes until the writer has stored more keys.
    let release = (): void => {};
    const held = new Promise<void>((r) => { release = r; });
    const pages = new Map<string, number>();
    const query = engine.ch.client.query.bind(engine.ch.client);
    const spy = jest.spyOn(engine.ch.client, 'query').mockImplementation(async (params) => {
      const table = /FROM \S+\.`(event_keys|ds_contacts)` WHERE \w+ = \{scope/.exec(params.query)?.[1];
      if (table && params.query.includes('xxHash64')) {
        pages.set(table, (pages.get(table) ?? 0) + 1);
        if (pages.get(table) === 2) await held;
      }
      return query(params);
    });
    try {
      await writer.storedEventKeys(keys('ds-c', ['x']));
      await writer.loadStates(new Map(), [{ projectId: 'p', userId: 'x' }]);
      expect(ids.status('ds-c')).toBe('building');
      expect(contacts.status('p')).toBe('building');
      // Before and after the scan's position in key order.
      const during = ['aaa-during', 'zzz-during', ...Array.from({ length: 500 }, (_, i) => `during-${i}`)];
      await store(writer, 3, 'ds-c', during.slice(0, 250), 100, 'aaa-user');
      await store(writer, 4, 'ds-a', ['ds-a-during'], 1);
      release();
      await store(writer, 5, 'ds-c', during.slice(250), 100, 'zzz-user');
      await ids.settled('ds-c');
      await contacts.settled('p');
      expect(ids.status('ds-c')).toBe('ready');
      expect(contacts.status('p')).toBe('ready');
      expect(sorted(await writer.storedEventKeys(keys('ds-c', [...during, 'never'])))).toEqual(during.map((id) => `ds-c:${id}`).sort());
      const states: ContactStates = new Map();
      const createdDuring = ['aaa-user', 'zzz-user'].flatMap((prefix) => Array.from({ length: 100 }, (_, i) => ({ projectId: 'p', userId: `${prefix}-${i}` })));
      await writer.loadStates(states, [...createdDuring, { projectId: 'p', userId: 'mmm-never' }]);
      expect(createdDuring.filter((u) => states.get(userKey('p', u.userId))?.has('ds-c'))).toHaveLength(createdDuring.length);
      expect(states.get(userKey('p', 'mmm-never'))?.size).toBe(0);
    } finally {
      release();
      spy.mockRestore();
    }
  });

  test('an id released from event_keys (its contact deleted) is new again: the filter may hold it, the table decides', async () => {
    const { writer, ids } = filteredWriter(engine, 64 * 1024 * 1024);
    await writer.storedEventKeys(keys('ds-d', ['kept']));
    await ids.settled('ds-d');
    await store(writer, 6, 'ds-d', ['kept', 'released']);
    expect(sorted(await writer.storedEventKeys(keys('ds-d', ['kept', 'released'])))).toEqual(['ds-d:kept', 'ds-d:released']);
    await engine.ch.client.command({ query: `DELETE FROM ${engine.ch.table('event_keys')} WHERE datasource_id = 'ds-d' AND event_id = 'released'` });
    expect(sorted(await writer.storedEventKeys(keys('ds-d', ['kept', 'released'])))).toEqual(['ds-d:kept']);
  });

  test('without room in INGEST_KEY_FILTER_MB, or with 0, every key is looked up in the table and the answer is the same', async () => {
    for (const budgetBytes of [0, 1024]) {
      const { writer, ids } = filteredWriter(engine, budgetBytes);
      await writer.storedEventKeys(keys('ds-a', ['stored-1']));
      await ids.settled('ds-a');
      expect(ids.status('ds-a')).toBe('off');
      const before = await checks('event_ids');
      expect(sorted(await writer.storedEventKeys(keys('ds-a', ['stored-3', 'fresh-3'])))).toEqual(['ds-a:stored-3']);
      expect((await checks('event_ids')).table - before.table).toBe(2);
    }
  });

  test('a filter that outgrows the budget is dropped and its datasource looked up in the table, still exactly', async () => {
    const sizing = filteredWriter(engine, 64 * 1024 * 1024);
    await sizing.writer.storedEventKeys(keys('ds-e', ['x']));
    await sizing.ids.settled('ds-e');
    // A budget that holds ds-e's first segment exactly (and nothing for contacts): the filter is dropped when it has to grow.
    const { writer, ids } = filteredWriter(engine, sizing.ids.bytes());
    await writer.storedEventKeys(keys('ds-e', ['x']));
    await ids.settled('ds-e');
    expect(ids.status('ds-e')).toBe('ready');
    // The first segment (sized for MIN_SEGMENT_KEYS) holds about 65,000 ids.
    const many = Array.from({ length: 100_000 }, (_, i) => `grow-${i}`);
    await store(writer, 7, 'ds-e', many);
    expect(ids.status('ds-e')).toBe('off');
    const found = await writer.storedEventKeys(keys('ds-e', ['grow-0', 'grow-99999', 'nope']));
    expect(sorted(found)).toEqual(['ds-e:grow-0', 'ds-e:grow-99999']);
  });
});
