// Recent usage of a datasource for GET /stream (spec 2 §4): requests and accepted, failed,
// duplicate and skipped items per endpoint over the last hour and the last day, from the
// per-minute counters the ingest writer keeps (table ingest_usage).
import type { UsageCounts, UsageReader, UsageWindow } from '../core/ingest/ports';
import type { ClickHouse } from '../infra/clickhouse';

const ENDPOINTS = ['contacts', 'events', 'delete'] as const;
const zero: UsageCounts = { requests: 0, accepted: 0, failed: 0, duplicates: 0, skipped: 0 };

interface Row {
  endpoint: string;
  window: 'hour' | 'day';
  requests: string;
  accepted: string;
  failed: string;
  duplicates: string;
  skipped: string;
}

export class IngestUsage implements UsageReader {
  constructor(private readonly ch: ClickHouse) {}

  async recent(datasourceId: string, now = Date.now()): Promise<{ lastHour: UsageWindow; lastDay: UsageWindow }> {
    const result = await this.ch.client.query({
      query: `SELECT endpoint, if(minute >= {hour:DateTime}, 'hour', 'day') AS window,
                sum(requests) AS requests, sum(accepted) AS accepted, sum(failed) AS failed, sum(duplicates) AS duplicates, sum(skipped) AS skipped
              FROM ${this.ch.table('ingest_usage')}
              WHERE datasource_id = {ds:String} AND minute >= {day:DateTime}
              GROUP BY endpoint, window`,
      query_params: { ds: datasourceId, hour: Math.floor((now - 3600_000) / 1000), day: Math.floor((now - 86_400_000) / 1000) },
      format: 'JSONEachRow',
    });
    const empty = (): UsageWindow => ({ contacts: { ...zero }, events: { ...zero }, delete: { ...zero } });
    const lastHour = empty();
    const lastDay = empty();
    for (const row of await result.json<Row>()) {
      const endpoint = ENDPOINTS.find((e) => e === row.endpoint);
      if (!endpoint) continue;
      const counts: UsageCounts = { requests: Number(row.requests), accepted: Number(row.accepted), failed: Number(row.failed), duplicates: Number(row.duplicates), skipped: Number(row.skipped) };
      const add = (into: UsageWindow): void => {
        const c = into[endpoint];
        into[endpoint] = { requests: c.requests + counts.requests, accepted: c.accepted + counts.accepted, failed: c.failed + counts.failed, duplicates: c.duplicates + counts.duplicates, skipped: c.skipped + counts.skipped };
      };
      add(lastDay);
      if (row.window === 'hour') add(lastHour);
    }
    return { lastHour, lastDay };
  }
}
