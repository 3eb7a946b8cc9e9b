// The ingested events (spec 2 §2) merge with a wider fan-out (migration 0019:
// merge_selector_base = 20 instead of ClickHouse's 5 on events and event_keys), so each row is
// rewritten by fewer background merges; ds_contacts and audience keep the default. What must not change: a replayed run still reads
// back once under FINAL (ReplacingMergeTree by version, as before), and parts still merge.
import { planWrites, type ContactStates, type IngestMessage } from '../../core/ingest';
import { AudienceWriter } from '../../stores/audience-writer';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

jest.setTimeout(120_000);

const INGEST_TABLES = ['events', 'event_keys', 'ds_contacts', 'audience'];

function run(seq: number): Array<{ seq: number; message: IngestMessage }> {
  return [
    {
      seq,
      message: {
        kind: 'contacts', orgId: 'o', projectId: 'p', datasourceId: 'ds-merge', receivedAt: '2026-11-27T03:00:00.000Z', failed: 0,
        contacts: [0, 1, 2].map((i) => ({ userId: `user-${i}`, attributes: { plan: { type: 'string', value: 'gold' }, _email: { type: 'string', value: `u${i}@example.com` } } })),
      },
    },
    {
      seq: seq + 1,
      message: {
        kind: 'events', orgId: 'o', projectId: 'p', datasourceId: 'ds-merge', receivedAt: '2026-11-27T03:00:01.000Z', failed: 0,
        items: [0, 1, 2].map((i) => ({
          userData: { userId: `user-${i}`, attributes: {} },
          event: { userId: `user-${i}`, eventId: `evt-${i}`, eventType: 'purchase', eventDate: '2026-11-27T02:59:00.000Z', triggers: false, parameters: { n: { type: 'number', value: i } } },
        })),
      },
    },
  ];
}

describe('ingested events merge with a wider fan-out, same rules (migration 0019, spec 2 §2)', () => {
  let engine: EmbeddedClickHouse;
  beforeAll(async () => { engine = await openEmbeddedClickHouse('ingest_merge_settings'); });
  afterAll(() => engine.close());

  const query = async <T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> =>
    (await engine.ch.client.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<T>();

  test('events and event_keys carry merge_selector_base = 20; ds_contacts, audience and ingest_usage keep the default', async () => {
    const rows = await query<{ name: string; create_table_query: string }>(
      'SELECT name, create_table_query FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)} ORDER BY name',
      { db: 'ingest_merge_settings', names: [...INGEST_TABLES, 'ingest_usage'] },
    );
    const base = Object.fromEntries(rows.map((r) => [r.name, /merge_selector_base = (\d+)/.exec(r.create_table_query)?.[1] ?? 'default']));
    expect(base).toEqual({ audience: 'default', ds_contacts: 'default', event_keys: '20', events: '20', ingest_usage: 'default' });
  });

  test('a run written twice reads back once per key under FINAL, and the parts it made merge', async () => {
    const writer = new AudienceWriter(engine.ch);
    // The same run again, as a replay after a crash writes it: same versions, same rows.
    for (let i = 0; i < 2; i += 1) {
      const states: ContactStates = new Map();
      await writer.write(planWrites({ messages: run(10), states, storedBefore: () => false }), states);
    }
    const counts = async (): Promise<Record<string, number>> => Object.fromEntries(await Promise.all(INGEST_TABLES.map(async (t) => {
      const [row] = await query<{ n: string }>(`SELECT count() AS n FROM ${engine.ch.table(t)} FINAL`);
      return [t, Number(row?.n)] as const;
    })));
    expect(await counts()).toEqual({ events: 3, event_keys: 3, ds_contacts: 3, audience: 3 });

    // 25 more single-row parts of event_keys (27 in all; sum / largest > 20): background merges
    // still pick them up, without an OPTIMIZE (seen: 11 active parts left after a minute).
    for (let i = 0; i < 25; i += 1) {
      await engine.ch.client.insert({ table: engine.ch.table('event_keys'), values: [{ datasource_id: 'ds-other', event_id: `x-${i}`, version: i }], format: 'JSONEachRow' });
    }
    const activeParts = async (): Promise<number> => Number((await query<{ n: string }>(
      "SELECT count() AS n FROM system.parts WHERE database = 'ingest_merge_settings' AND table = 'event_keys' AND active",
    ))[0]?.n);
    const deadline = Date.now() + 60_000;
    let parts = await activeParts();
    while (parts >= 20 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      parts = await activeParts();
    }
    expect(parts).toBeLessThan(20);
    expect(await counts()).toEqual({ events: 3, event_keys: 28, ds_contacts: 3, audience: 3 });
  });
});
