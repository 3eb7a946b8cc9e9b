// The ingest writer's rows reach the in-process chdb as bytes (ClickHouse.insertRaw, with the
// column list, JSONCompactEachRow) and through the client elsewhere: both paths must store the
// same audience, ds_contacts and events rows for any strings (quotes, backslashes, newlines,
// non-BMP characters), nulls, arrays, maps and times (spec 2 §2: values stored as sent).
import { planWrites, userKey, type ContactStates, type IngestMessage } from '../../core/ingest';
import { migrate, openClickHouse, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { AudienceWriter } from '../../stores/audience-writer';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

jest.setTimeout(120_000);

const hostile = ['plain', 'quote " and \' apostrophe', 'back\\slash', 'new\nline\ttab', 'emoji 😀 and ü', '', '{"json":true}', '\u2028separator'];

function messages(): Array<{ seq: number; message: IngestMessage }> {
  const receivedAt = '2026-11-26T12:00:00.000Z';
  return [
    {
      seq: 1,
      message: {
        kind: 'contacts', orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt, failed: 0,
        contacts: hostile.map((text, i) => ({
          userId: `user ${text} ${i}`,
          attributes: {
            _email: { type: 'string', value: `u${i}@example.com` }, _first_name: { type: 'string', value: text }, _last_name: null,
            _client_tags: { type: 'array', value: [text, 'tag'] }, _is_subscribed_sms: { type: 'boolean', value: i % 2 === 0 },
            _geopoint: { type: 'geopoint', value: { lat: 52.5, lon: 13.4 } }, _date_imported: { type: 'date', value: '2026-11-01T10:00:00.000Z' },
            note: { type: 'string', value: text }, score: { type: 'number', value: i * 1.5 }, vip: { type: 'boolean', value: true },
            seen: { type: 'date', value: '2026-11-02T00:00:00.000Z' }, list: { type: 'array', value: [text] }, blob: { type: 'object', value: { text, n: [1, 2] } },
          },
        })),
      },
    },
    {
      seq: 2,
      message: {
        kind: 'events', orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt, failed: 0,
        items: hostile.map((text, i) => ({
          userData: null,
          event: {
            userId: `user ${text} ${i}`, eventId: `event ${text} ${i}`, eventType: 'purchase', eventDate: '2026-11-26T11:59:00.123Z', triggers: true,
            parameters: { text: { type: 'string', value: text }, amount: { type: 'number', value: i }, ok: { type: 'boolean', value: false }, tags: { type: 'array', value: [text] }, obj: { type: 'object', value: { text } } },
          },
        })),
      },
    },
  ];
}

async function writeAndRead(ch: ClickHouse): Promise<unknown[]> {
  const states: ContactStates = new Map();
  const plan = planWrites({ messages: messages(), states, storedBefore: () => false });
  await new AudienceWriter(ch).write(plan, states);
  const rows: unknown[] = [];
  for (const [table, order] of [['audience', 'user_id'], ['ds_contacts', 'user_id'], ['events', 'event_id'], ['event_keys', 'event_id']] as const) {
    const result = await ch.client.query({ query: `SELECT * FROM ${ch.table(table)} ORDER BY ${order}`, format: 'JSONEachRow' });
    rows.push(...(await result.json<Record<string, unknown>>()).map((r) => ({ table, ...r })));
  }
  return rows;
}

describe('the ingest writer stores the same rows through insertRaw and through the client', () => {
  // One chdb data directory per process: the client path writes to another database of it.
  let raw: EmbeddedClickHouse;
  let client: ClickHouse;
  beforeAll(async () => {
    raw = await openEmbeddedClickHouse('writer_raw');
    const other = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'writer_client', embeddedPath: raw.dir });
    await migrate(other, createLogger('warn'));
    const { insertRaw: _unused, ...withoutRaw } = other;
    client = withoutRaw;
  });
  afterAll(async () => {
    await client.close();
    await raw.close();
  });

  test('audience, ds_contacts, events and event_keys rows are identical for hostile strings, nulls, arrays, maps and times', async () => {
    expect(raw.ch.insertRaw).toBeDefined();
    expect(client.insertRaw).toBeUndefined();
    const viaRaw = await writeAndRead(raw.ch);
    const viaClient = await writeAndRead(client);
    expect(viaRaw.length).toBe(hostile.length * 4);
    expect(viaRaw).toEqual(viaClient);
    const names = viaRaw.filter((r) => (r as { table: string }).table === 'audience').map((r) => (r as { first_name: string }).first_name);
    expect(names.sort()).toEqual([...hostile].sort());
  });

  // The state goes into the row as an object (stores/audience-writer.ts, DS_CONTACTS_INSERT_SETTINGS):
  // the stored text must be the state's JSON exactly, since replays and deletions reload it.
  test('ds_contacts.state holds exactly the JSON text of each written state, on both paths', async () => {
    for (const ch of [raw.ch, client]) {
      await ch.client.command({ query: `TRUNCATE TABLE ${ch.table('ds_contacts')}` });
      const states: ContactStates = new Map();
      const plan = planWrites({ messages: messages(), states, storedBefore: () => false });
      await new AudienceWriter(ch).write(plan, states);
      const result = await ch.client.query({ query: `SELECT user_id, datasource_id, state FROM ${ch.table('ds_contacts')} ORDER BY user_id`, format: 'JSONEachRow' });
      const rows = await result.json<{ user_id: string; datasource_id: string; state: string }>();
      expect(rows).toHaveLength(hostile.length);
      for (const row of rows) {
        const written = states.get(userKey('p', row.user_id))?.get(row.datasource_id);
        expect(written).toBeDefined();
        expect(row.state).toBe(JSON.stringify(written));
      }
      const reloaded: ContactStates = new Map();
      await new AudienceWriter(ch).loadStates(reloaded, rows.map((r) => ({ projectId: 'p', userId: r.user_id })));
      for (const row of rows) expect(reloaded.get(userKey('p', row.user_id))?.get('d')).toEqual(states.get(userKey('p', row.user_id))?.get('d'));
    }
  });
});
