// The recent events of one audience contact (the console's contact page): the events table
// (infra/migrations/0005_audience.sql) read by project and audience id, newest first, with
// bound parameters only. Parameters come back as one object, typed maps merged.
import type { ClickHouse } from '../infra/clickhouse';
import { fromClickHouseTime } from './clickhouse-time';

export interface ContactEvent {
  readonly eventId: string;
  readonly eventType: string;
  readonly datasourceId: string;
  readonly eventDate: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

interface EventRow {
  event_id: string;
  event_type: string;
  datasource_id: string;
  event_date: string;
  params_string: Record<string, string>;
  params_number: Record<string, number>;
  params_bool: Record<string, boolean>;
  params_date: Record<string, string>;
  params_array: Record<string, string[]>;
  params_json: Record<string, string>;
}

const MAX_EVENTS = 200;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class ContactEvents {
  constructor(private readonly ch: ClickHouse) {}

  /** The contact's newest `limit` events (at most 200) in the project, across its datasources. */
  async recent(projectId: string, audienceId: string, limit: number): Promise<ContactEvent[]> {
    const client = this.ch.readLane?.() ?? this.ch.client;
    const result = await client.query({
      query: `SELECT event_id, event_type, datasource_id, event_date, params_string, params_number, params_bool, params_date, params_array, params_json
        FROM ${this.ch.table('events')} FINAL WHERE project_id = {project:String} AND audience_id = {audience:String}
        ORDER BY event_date DESC, event_id LIMIT {limit:UInt32}`,
      query_params: { project: projectId, audience: audienceId, limit: Math.max(0, Math.min(MAX_EVENTS, Math.trunc(limit))) },
      format: 'JSONEachRow',
    });
    return (await result.json<EventRow>()).map((r) => ({
      eventId: r.event_id, eventType: r.event_type, datasourceId: r.datasource_id,
      eventDate: fromClickHouseTime(r.event_date),
      parameters: {
        ...r.params_string, ...r.params_number, ...r.params_bool, ...r.params_array,
        ...Object.fromEntries(Object.entries(r.params_date).map(([k, v]) => [k, fromClickHouseTime(v)])),
        ...Object.fromEntries(Object.entries(r.params_json).map(([k, v]) => [k, parseJson(v)])),
      },
    }));
  }
}
