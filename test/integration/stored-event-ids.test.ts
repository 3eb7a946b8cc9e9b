// The ingest writer's filter of stored event ids in front of event_keys (stores/stored-event-ids.ts,
// docs/ingestion.md "Deduplication"), on embedded chdb. Spec 2 §2.2: an _event_id already stored is
// a duplicate; the filter may send a new id to the table, never let a stored one through.
import { planWrites, type ContactStates, type IngestMessage } from '../../core/ingest';
import { idHash, loadIdHash } from '../../core/ingest/event-id-filter';
import { createLogger } from '../../infra/logger';
import { AudienceWriter } from '../../stores/audience-writer';
import { StoredEventIds, type EventKey } from '../../stores/stored-event-ids';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

jest.setTimeout(120_000);

const log = createLogger('silent');
const hostile = ['plain', 'quote " and \' apostrophe', 'back\\slash', 'tab\there', 'emoji 😀 and ü', 'new\nline', '\u2028separator', ' spaced ', ''];

function eventsMessage(seq: number, datasourceId: string, eventIds: readonly string[]): { seq: number; message: IngestMessage } {
  return {
    seq,
    message: {
      kind: 'events', orgId: 'o', projectId: 'p', datasourceId, receivedAt: '2026-11-27T01:00:00.000Z', failed: 0,
      items: eventIds.map((eventId, i) => ({
        userData: { userId: `user-${i % 7}`, attributes: {} },
        event: { userId: `user-${i % 7}`, eventId, eventType: 'purchase', eventDate: '2026-11-27T00:59:00.000Z', triggers: false, parameters: {} },
      })),
    },
  };
}

/** Stores the events as the ingest writer does, recording their ids in `ids` first when given. */
async function store(writer: AudienceWriter, seq: number, datasourceId: string, eventIds: readonly string[], ids?: StoredEventIds): Promise<void> {
  const states: ContactStates = new Map();
  const plan = planWrites({ messages: [eventsMessage(seq, datasourceId, eventIds)], states, storedBefore: () => false });
  ids?.recordStored(plan.events);
  await writer.write(plan, states);
}

const keys = (datasourceId: string, ids: readonly string[]): EventKey[] => ids.map((eventId) => ({ datasourceId, eventId }));
const sorted = (set: Set<string>): string[] => [...set].sort();

/** The table lookups a StoredEventIds makes, kept beside the real ones. */
function countingLookups(writer: AudienceWriter): { asked: EventKey[]; lookup: Pick<AudienceWriter, 'storedEventKeys'> } {
  const asked: EventKey[] = [];
  return { asked, lookup: { storedEventKeys: async (k) => { asked.push(...k); return writer.storedEventKeys(k); } } };
}

describe('stored event ids: the filter in front of event_keys (spec 2 §2.2)', () => {
  let engine: EmbeddedClickHouse;
  let writer: AudienceWriter;
  const stored = Array.from({ length: 3_000 }, (_, i) => `stored-${i}`);
  const fresh = Array.from({ length: 3_000 }, (_, i) => `fresh-${i}`);
  beforeAll(async () => {
    await loadIdHash();
    engine = await openEmbeddedClickHouse('stored_event_ids');
    writer = new AudienceWriter(engine.ch);
    await store(writer, 1, 'ds-a', [...stored, ...hostile]);
    await store(writer, 2, 'ds-b', ['only-in-b']);
  });
  afterAll(async () => {
    await engine.close();
  });

  test('idHash equals ClickHouse xxHash64 of the same id, hostile ids included', async () => {
    const result = await engine.ch.client.query({
      query: 'SELECT id, toUInt32(bitAnd(xxHash64(id), 4294967295)) AS lo, toUInt32(bitShiftRight(xxHash64(id), 32)) AS hi FROM (SELECT arrayJoin({ids:Array(String)}) AS id)',
      query_params: { ids: hostile }, format: 'JSONEachRow',
    });
    const rows = await result.json<{ id: string; lo: number; hi: number }>();
    expect(rows).toHaveLength(hostile.length);
    for (const row of rows) expect(idHash(row.id)).toEqual({ lo: row.lo, hi: row.hi });
  });

  test('built from the table after a restart (pages of 500): stored ids are found, and the table is asked about few of the new ones', async () => {
    const { asked, lookup } = countingLookups(writer);
    const ids = new StoredEventIds(engine.ch, lookup, log, { budgetBytes: 64 * 1024 * 1024, pageIds: 500 });
    // The first run of a datasource is answered by the table while the filter is built.
    expect(sorted(await ids.stored(keys('ds-a', ['stored-1', 'fresh-1'])))).toEqual(['ds-a:stored-1']);
    expect(asked).toHaveLength(2);
    await ids.settled('ds-a');
    expect(ids.status('ds-a')).toBe('ready');
    asked.length = 0;
    const found = await ids.stored(keys('ds-a', [...stored, ...hostile, ...fresh, 'Plain', 'new', 'line']));
    expect(sorted(found)).toEqual([...stored, ...hostile].map((id) => `ds-a:${id}`).sort());
    const freshAsked = asked.filter((k) => k.eventId.startsWith('fresh-')).length;
    expect(asked.length - freshAsked).toBeGreaterThanOrEqual(stored.length + hostile.length);
    expect(freshAsked).toBeLessThan(fresh.length * 0.03);
    // Another datasource has a filter of its own.
    expect(sorted(await ids.stored(keys('ds-b', ['only-in-b', 'stored-1'])))).toEqual(['ds-b:only-in-b']);
    await ids.settled('ds-b');
    expect(sorted(await ids.stored(keys('ds-b', ['only-in-b', 'stored-1'])))).toEqual(['ds-b:only-in-b']);
  });

  test('ids stored while the filter is being built are found once it is ready', async () => {
    const { lookup } = countingLookups(writer);
    const ids = new StoredEventIds(engine.ch, lookup, log, { budgetBytes: 64 * 1024 * 1024, pageIds: 200 });
    // Hold the build after its first page of hashes until the writer has stored more ids.
    let release = (): void => {};
    const held = new Promise<void>((r) => { release = r; });
    let pages = 0;
    const query = engine.ch.client.query.bind(engine.ch.client);
    const spy = jest.spyOn(engine.ch.client, 'query').mockImplementation(async (params) => {
      if (params.query.includes('xxHash64') && (pages += 1) === 2) await held;
      return query(params);
    });
    try {
      await ids.stored(keys('ds-c', ['x']));
      expect(ids.status('ds-c')).toBe('building');
      // Before and after the scan's position in key order.
      const during = ['aaa-during', 'zzz-during', ...Array.from({ length: 500 }, (_, i) => `during-${i}`)];
      await store(writer, 3, 'ds-c', during.slice(0, 250), ids);
      await store(writer, 4, 'ds-a', ['ds-a-during'], ids);
      release();
      await store(writer, 5, 'ds-c', during.slice(250), ids);
      await ids.settled('ds-c');
      expect(ids.status('ds-c')).toBe('ready');
      expect(sorted(await ids.stored(keys('ds-c', [...during, 'never'])))).toEqual(during.map((id) => `ds-c:${id}`).sort());
      await ids.settled('ds-a');
      expect(sorted(await ids.stored(keys('ds-a', ['ds-a-during', 'stored-2'])))).toEqual(['ds-a:ds-a-during', 'ds-a:stored-2']);
    } finally {
      release();
      spy.mockRestore();
    }
  });

  test('an id released from event_keys (its contact deleted) is new again: the filter may hold it, the table decides', async () => {
    const ids = new StoredEventIds(engine.ch, writer, log, { budgetBytes: 64 * 1024 * 1024 });
    await store(writer, 6, 'ds-d', ['kept', 'released'], ids);
    await ids.stored(keys('ds-d', ['kept']));
    await ids.settled('ds-d');
    await engine.ch.client.command({ query: `DELETE FROM ${engine.ch.table('event_keys')} WHERE datasource_id = 'ds-d' AND event_id = 'released'` });
    expect(sorted(await ids.stored(keys('ds-d', ['kept', 'released'])))).toEqual(['ds-d:kept']);
  });

  test('without room in INGEST_DEDUPE_FILTER_MB, or with 0, every id is looked up in the table and the answer is the same', async () => {
    for (const budgetBytes of [0, 1024]) {
      const { asked, lookup } = countingLookups(writer);
      const ids = new StoredEventIds(engine.ch, lookup, log, { budgetBytes });
      await ids.stored(keys('ds-a', ['stored-1']));
      await ids.settled('ds-a');
      expect(ids.status('ds-a')).toBe('off');
      asked.length = 0;
      expect(sorted(await ids.stored(keys('ds-a', ['stored-3', 'fresh-3'])))).toEqual(['ds-a:stored-3']);
      expect(asked).toHaveLength(2);
    }
  });

  test('a filter that outgrows the budget is dropped and its datasource looked up in the table, still exactly', async () => {
    const sizing = new StoredEventIds(engine.ch, writer, log, { budgetBytes: 64 * 1024 * 1024 });
    await sizing.stored(keys('ds-e', ['x']));
    await sizing.settled('ds-e');
    // A budget that holds ds-e's first segment exactly: the filter is dropped when it has to grow.
    const oneSegment = (sizing as unknown as { usedBytes(): number }).usedBytes();
    const tight = new StoredEventIds(engine.ch, writer, log, { budgetBytes: oneSegment });
    await tight.stored(keys('ds-e', ['x']));
    await tight.settled('ds-e');
    expect(tight.status('ds-e')).toBe('ready');
    // The first segment (sized for MIN_SEGMENT_IDS, its bits a power of two) holds about 109,000 ids.
    const many = Array.from({ length: 115_000 }, (_, i) => `grow-${i}`);
    await store(writer, 7, 'ds-e', many, tight);
    expect(tight.status('ds-e')).toBe('off');
    const found = await tight.stored(keys('ds-e', ['grow-0', 'grow-114999', 'nope']));
    expect(sorted(found)).toEqual(['ds-e:grow-0', 'ds-e:grow-114999']);
  });
});
