// The events of an `eventRows` frame (rows serialized once by the gateway, core/ingest/event-rows.ts;
// format 2, and format 1 as gateways at e85495d wrote it) reach ClickHouse as the same rows as the
// earlier format's message of the same events, through
// insertRaw (the in-process chdb) and through the client (a server), for hostile strings (spec 2
// §2: values stored as sent); a replayed frame leaves each event once (spec 2 §2.2: event ids
// deduplicate permanently).
import { decodeIngest, encodeEventRows, planWrites, type ContactStates, type IngestEventsMessage, type WriterMessage } from '../../core/ingest';
import { migrate, openClickHouse, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { AudienceWriter } from '../../stores/audience-writer';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { encodeEventRowsV1 } from '../support/event-rows-v1';

jest.setTimeout(120_000);

const receivedAt = '2026-11-27T08:00:00.000Z';
const header = { orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt };
const hostile = ['plain', 'quote " and \' apostrophe', 'back\\slash', 'new\nline\ttab', 'emoji 😀 and ü', '', '{"json":true}', '\u2028separator', ']\n[,'];

const contacts: WriterMessage = { kind: 'contacts', ...header, failed: 0, contacts: hostile.map((text, i) => ({ userId: `user ${text} ${i}`, attributes: {} })) };
const events: IngestEventsMessage = {
  kind: 'events', ...header, failed: 0,
  items: hostile.map((text, i) => ({
    userData: null,
    event: {
      userId: `user ${text} ${i}`, eventId: `event ${text} ${i}`, eventType: 'purchase', eventDate: '2026-11-27T07:59:00.123Z', triggers: i % 2 === 0,
      parameters: { text: { type: 'string', value: text }, amount: { type: 'number', value: i * 1.5 }, ok: { type: 'boolean', value: false }, tags: { type: 'array', value: [text] },
        when: { type: 'date', value: '2026-11-01T10:00:00.000Z' }, obj: { type: 'object', value: { text } }, at: { type: 'geopoint', value: { lat: 1, lon: 2 } } },
    },
  })),
};
const frame = (): WriterMessage => decodeIngest(encodeEventRows(events, 512 * 1024)[0] as Buffer);
const frameV1 = (): WriterMessage => decodeIngest(encodeEventRowsV1(events));

/** As the ingest writer applies a run (pipelines/ingest-writer.ts); `lookup: false` ignores the stored ids (rows written again whole). */
async function write(ch: ClickHouse, messages: Array<{ seq: number; message: WriterMessage }>, lookup = true): Promise<void> {
  const states: ContactStates = new Map();
  const writer = new AudienceWriter(ch);
  const ids = messages.flatMap(({ message }) => (message.kind === 'eventRows' ? message.items.map((i) => ({ datasourceId: 'd', eventId: i.eventId })) : []));
  const stored = lookup ? await writer.storedEventKeys(ids) : new Set<string>();
  await writer.loadStates(states, hostile.map((text, i) => ({ projectId: 'p', userId: `user ${text} ${i}` })));
  const plan = planWrites({ messages, states, storedBefore: (ds, id) => stored.has(`${ds}:${id}`) });
  await writer.write(plan, states);
}

async function read(ch: ClickHouse): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (const table of ['events', 'event_keys'] as const) {
    const result = await ch.client.query({ query: `SELECT * FROM ${ch.table(table)} FINAL ORDER BY event_id`, format: 'JSONEachRow' });
    rows.push(...(await result.json<Record<string, unknown>>()).map((r) => ({ table, ...r })));
  }
  return rows;
}

describe('eventRows frames store the rows of the earlier format', () => {
  let raw: EmbeddedClickHouse;
  const databases: ClickHouse[] = [];
  /** Another database of the same chdb data directory; without insertRaw when `client` (the server path). */
  const open = async (name: string, client: boolean): Promise<ClickHouse> => {
    const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: name, embeddedPath: raw.dir });
    await migrate(ch, createLogger('warn'));
    databases.push(ch);
    if (!client) return ch;
    const { insertRaw: _unused, ...withoutRaw } = ch;
    return withoutRaw;
  };
  beforeAll(async () => { raw = await openEmbeddedClickHouse('rows_old_raw'); });
  afterAll(async () => {
    for (const ch of databases) await ch.close();
    await raw.close();
  });

  test('events and event_keys rows identical for hostile strings, numbers, maps and times, through insertRaw and the client', async () => {
    const oldRaw = raw.ch;
    const newRaw = await open('rows_new_raw', false);
    const oldClient = await open('rows_old_client', true);
    const newClient = await open('rows_new_client', true);
    const v1Raw = await open('rows_v1_raw', false);
    const v1Client = await open('rows_v1_client', true);
    expect(newRaw.insertRaw).toBeDefined();
    expect(newClient.insertRaw).toBeUndefined();
    for (const [ch, message] of [[oldRaw, events], [newRaw, frame()], [oldClient, events], [newClient, frame()], [v1Raw, frameV1()], [v1Client, frameV1()]] as const) {
      await write(ch, [{ seq: 1, message: contacts }, { seq: 2, message }]);
    }
    const expected = await read(oldRaw);
    expect(expected).toHaveLength(hostile.length * 2);
    expect(await read(newRaw)).toEqual(expected);
    expect(await read(oldClient)).toEqual(expected);
    expect(await read(newClient)).toEqual(expected);
    expect(await read(v1Raw)).toEqual(expected);
    expect(await read(v1Client)).toEqual(expected);
    const texts = (expected as Array<{ table: string; params_string?: { text: string } }>).filter((r) => r.table === 'events').map((r) => r.params_string?.text);
    expect(texts.sort()).toEqual([...hostile].sort());
  });

  test('a frame delivered again (after a crash before its acknowledgement) leaves every event once', async () => {
    const ch = await open('rows_replay', false);
    await write(ch, [{ seq: 1, message: contacts }, { seq: 2, message: frame() }]);
    const once = await read(ch);
    // The replay of the same run: the same frame, the same sequence; the events were stored (and their ids) by the first.
    await write(ch, [{ seq: 1, message: contacts }, { seq: 2, message: frame() }]);
    expect(await read(ch)).toEqual(once);
    // Written again whole (as a run whose insert succeeded but was not seen to): the same rows, collapsed by FINAL.
    await write(ch, [{ seq: 1, message: contacts }, { seq: 2, message: frame() }], false);
    expect(await read(ch)).toEqual(once);
    const count = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('events')} FINAL`, format: 'JSONEachRow' });
    expect((await count.json<{ n: string | number }>()).map((r) => Number(r.n))).toEqual([hostile.length]);
  });
});
