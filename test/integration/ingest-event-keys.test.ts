// The ingest writer's lookup of stored event ids (spec 2 §2.2: "_event_id already used:
// duplicate dropped"): AudienceWriter.storedEventKeys binds a run's ids of one datasource as
// one newline-joined String that the statement splits (cheaper on chdb than an Array(String)
// parameter), and falls back to the array when an id holds a newline. Either way the answer
// must be exact: every stored id found, nothing else.
import { planWrites, type ContactStates, type IngestMessage } from '../../core/ingest';
import { AudienceWriter } from '../../stores/audience-writer';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { boundParams } from '../support/bound-params';

jest.setTimeout(120_000);

const hostile = ['plain', 'quote " and \' apostrophe', 'back\\slash', 'back\\nslash-n', 'tab\there', 'emoji 😀 and ü', '{"json":true}', '[\'a\',\'b\']', 'comma,separated', '\u2028separator', ' spaced '];
const withNewline = 'new\nline';

function eventsMessage(seq: number, datasourceId: string, eventIds: readonly string[]): { seq: number; message: IngestMessage } {
  return {
    seq,
    message: {
      kind: 'events', orgId: 'o', projectId: 'p', datasourceId, receivedAt: '2026-11-27T01:00:00.000Z', failed: 0,
      // Each event carries its contact (an event of an unknown contact is skipped, not stored).
      items: eventIds.map((eventId, i) => ({
        userData: { userId: `user-${i % 7}`, attributes: {} },
        event: { userId: `user-${i % 7}`, eventId, eventType: 'purchase', eventDate: '2026-11-27T00:59:00.000Z', triggers: false, parameters: {} },
      })),
    },
  };
}

async function store(writer: AudienceWriter, messages: Array<{ seq: number; message: IngestMessage }>): Promise<void> {
  const states: ContactStates = new Map();
  await writer.write(planWrites({ messages, states, storedBefore: () => false }), states);
}

const keys = (datasourceId: string, ids: readonly string[]): Array<{ datasourceId: string; eventId: string }> => ids.map((eventId) => ({ datasourceId, eventId }));

describe('stored event ids are looked up exactly (spec 2 §2.2 duplicates)', () => {
  let engine: EmbeddedClickHouse;
  let writer: AudienceWriter;
  const many = Array.from({ length: 20_000 }, (_, i) => `evt-${i}`);
  beforeAll(async () => {
    engine = await openEmbeddedClickHouse('event_keys_lookup');
    writer = new AudienceWriter(engine.ch);
    await store(writer, [
      eventsMessage(1, 'ds-a', [...hostile, withNewline]),
      eventsMessage(2, 'ds-a', many.filter((_, i) => i % 20 === 0)),
      eventsMessage(3, 'ds-b', ['only-in-b']),
    ]);
  });
  afterAll(async () => {
    await engine.close();
  });

  test('§2.2: hostile stored ids are found, near misses and other datasources are not', async () => {
    const nearMisses = ['Plain', 'plain ', 'back\\\\slash', 'back\nslash-n', 'new', 'line', 'quote " and \'', 'only-in-b', 'evt-1'];
    const stored = await writer.storedEventKeys(keys('ds-a', [...hostile, ...nearMisses]));
    expect([...stored].sort()).toEqual(hostile.map((id) => `ds-a:${id}`).sort());
    const inB = await writer.storedEventKeys([...keys('ds-b', ['only-in-b', 'plain']), ...keys('ds-c', ['plain'])]);
    expect([...inB]).toEqual(['ds-b:only-in-b']);
  });

  test('§2.2: an id holding a newline is found exactly (bound as an array), its halves are not', async () => {
    const stored = await writer.storedEventKeys(keys('ds-a', [withNewline, 'new', 'line', 'plain']));
    expect([...stored].sort()).toEqual([`ds-a:${withNewline}`, 'ds-a:plain'].sort());
  });

  test('§2.2: a run-sized lookup (20,000 ids, one in 20 stored) finds exactly the stored ones', async () => {
    const stored = await writer.storedEventKeys(keys('ds-a', many));
    expect(stored.size).toBe(1_000);
    expect(stored.has('ds-a:evt-0')).toBe(true);
    expect(stored.has('ds-a:evt-20')).toBe(true);
    expect(stored.has('ds-a:evt-21')).toBe(false);
  });

  test('the ids of a datasource are bound as one String parameter, as an array only when an id holds a newline', async () => {
    const seen = await boundParams(engine.ch, 'ids', async () => {
      await writer.storedEventKeys(keys('ds-a', ['plain', 'evt-0']));
      await writer.storedEventKeys(keys('ds-a', ['plain', withNewline]));
    });
    expect(seen).toEqual(['plain\nevt-0', ['plain', withNewline]]);
  });
});

describe('the writer\'s inserts skip the insert-time collapse of ReplacingMergeTree (a plan holds each contact and event id once)', () => {
  let engine: EmbeddedClickHouse;
  beforeAll(async () => {
    engine = await openEmbeddedClickHouse('events_insert_settings');
  });
  afterAll(async () => {
    await engine.close();
  });

  test('events, audience and ds_contacts go with optimize_on_insert = 0; a replayed run still reads back once per event, key and contact', async () => {
    const insertRaw = engine.ch.insertRaw as NonNullable<typeof engine.ch.insertRaw>;
    const calls: Array<{ table: string; settings: Record<string, number | string> }> = [];
    const writer = new AudienceWriter({ ...engine.ch, insertRaw: async (table, body, format, settings, columns) => {
      calls.push({ table, settings });
      await insertRaw(table, body, format, settings, columns);
    } });
    const run = [eventsMessage(1, 'ds-a', ['e1', 'e2', 'e3'])];
    await store(writer, run);
    await store(writer, run); // the replay of the same stream messages: another insert of the same rows
    expect(calls.map((c) => [c.table, c.settings]).sort()).toEqual([
      ['audience', { optimize_on_insert: 0 }], ['audience', { optimize_on_insert: 0 }],
      ['ds_contacts', { optimize_on_insert: 0 }], ['ds_contacts', { optimize_on_insert: 0 }],
      ['events', { optimize_on_insert: 0 }], ['events', { optimize_on_insert: 0 }],
    ]);
    const count = async (table: string): Promise<number> => {
      const result = await engine.ch.client.query({ query: `SELECT count() AS n FROM ${engine.ch.table(table)} FINAL`, format: 'JSONEachRow' });
      return Number((await result.json<{ n: number | string }>())[0]?.n);
    };
    expect(await count('events')).toBe(3);
    expect(await count('event_keys')).toBe(3);
    expect(await count('audience')).toBe(3);
    expect(await count('ds_contacts')).toBe(3);
    expect([...(await writer.storedEventKeys(keys('ds-a', ['e1', 'e2', 'e3', 'e4'])))].sort()).toEqual(['ds-a:e1', 'ds-a:e2', 'ds-a:e3']);
  });
});
