// The "while ingesting" load of bench:audience: a loop that writes what the ingest writer
// writes, at a steady rate, on the engine's main session (the writer's; searches use the read
// lane). Every 200 ms (the writer's BATCH_WAIT_MS) one batch:
//  - contact upserts: the current rows of random existing contacts read back (the writer
//    reads its contacts' states before each batch too) and inserted again with a newer
//    version and updated_at, as JSONCompactEachRow through ClickHouse.insertRaw, the call the
//    writer's rows take (stores/audience-writer.ts);
//  - events of random existing contacts, through the same call: views, clicks, opens and
//    purchases under 400 (the event-group scenario's threshold).
// The attributes and the events the scenarios look at do not change, so every answer read
// while this runs must equal the quiet answer exactly, while FINAL meets what ingestion leaves
// behind: many small parts overlapping the whole key range, merged in the background.
import type { ClickHouse } from '../../infra/clickhouse';

export interface IngestLoad {
  /** Stops the loop after its current batch; resolves with what was written. */
  stop(): Promise<IngestCounts>;
}

export interface IngestCounts {
  readonly seconds: number;
  readonly contacts: number;
  readonly events: number;
  readonly batches: number;
  /** Batches that took longer than their 200 ms slot (the rate then lags). */
  readonly lateBatches: number;
}

const TICK_MS = 200;
const EVENT_COLUMNS = ['project_id', 'datasource_id', 'event_type', 'user_id', 'audience_id', 'event_id', 'event_date', 'received_at', 'source',
  'params_string', 'params_number', 'params_bool', 'params_date', 'params_array', 'params_json', 'version'] as const;
const TYPES = ['view', 'view', 'click', 'open', 'purchase'];

const chTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

export async function startIngestLoad(ch: ClickHouse, project: string, contacts: number, rates: { events: number; contacts: number }): Promise<IngestLoad> {
  const insertRaw = ch.insertRaw;
  if (!insertRaw) throw new Error('the ingest load needs the in-process engine (insertRaw)');
  const columns = (await (await ch.client.query({
    // The writer's columns: MATERIALIZED ones (migration 0021's client_tags_distinct) cannot be inserted.
    query: `SELECT name FROM system.columns WHERE database = {db:String} AND table = 'audience' AND default_kind NOT IN ('MATERIALIZED', 'ALIAS') ORDER BY position`,
    query_params: { db: ch.database }, format: 'JSONEachRow',
  })).json<{ name: string }>()).map((r) => r.name);
  const versionAt = columns.indexOf('version');
  const updatedAt = columns.indexOf('updated_at');
  const list = columns.map((c) => `\`${c}\``).join(', ');
  let stopping = false;
  let version = 1_000_000_000;
  let eventSeq = 0;
  const counts = { contacts: 0, events: 0, batches: 0, lateBatches: 0 };
  const started = performance.now();
  const random = (): string => `u${Math.floor(Math.random() * contacts)}`;

  const batch = async (share: number): Promise<void> => {
    const users = Array.from({ length: Math.round(rates.contacts * share) }, random);
    if (users.length > 0) {
      const current = await (await ch.client.query({
        query: `SELECT ${list} FROM ${ch.table('audience')} FINAL WHERE project_id = {p:String} AND user_id IN {u:Array(String)}`,
        query_params: { p: project, u: users }, format: 'JSONCompactEachRow',
      })).json<unknown[]>();
      const now = chTime(Date.now());
      const lines = current.map((row) => {
        version += 1;
        row[versionAt] = version;
        row[updatedAt] = now;
        return JSON.stringify(row);
      });
      await insertRaw('audience', Buffer.from(`${lines.join('\n')}\n`), 'JSONCompactEachRow', {}, columns);
      counts.contacts += lines.length;
    }
    const n = Math.round(rates.events * share);
    if (n > 0) {
      const now = Date.now();
      const lines: string[] = [];
      for (let i = 0; i < n; i += 1) {
        const user = random();
        const type = TYPES[i % TYPES.length] as string;
        const at = chTime(now - Math.floor(Math.random() * 30 * 86_400_000));
        eventSeq += 1;
        lines.push(JSON.stringify([project, 'ds1', type, user, `a${user.slice(1)}`, `live-${now}-${eventSeq}`, at, chTime(now), 'web',
          { sku: `sku-${i % 1000}` }, type === 'purchase' ? { amount: i % 400 } : {}, {}, {}, {}, {}, 1]));
      }
      await insertRaw('events', Buffer.from(`${lines.join('\n')}\n`), 'JSONCompactEachRow', {}, EVENT_COLUMNS);
      counts.events += n;
    }
    counts.batches += 1;
  };

  const loop = (async () => {
    let last = performance.now();
    while (!stopping) {
      const slotEnd = last + TICK_MS;
      const wait = slotEnd - performance.now();
      if (wait > 0) await new Promise((resolve) => { setTimeout(resolve, wait); });
      const now = performance.now();
      // Write what the elapsed time owes, so a slow batch is caught up by the next one.
      const share = (now - last) / 1000;
      last = now;
      await batch(share);
      if (performance.now() - now > TICK_MS) counts.lateBatches += 1;
    }
  })();

  return {
    stop: async () => {
      stopping = true;
      await loop;
      return { seconds: (performance.now() - started) / 1000, ...counts };
    },
  };
}
