// Reads one contact as the ingest writer stored it (GET /stream/contacts/{userId}, beyond
// spec 2 like a CDP's profile API): the datasource's own record, the merged audience record
// across datasources, and the number of its events in this datasource.
import { audienceId, mergeAudience, type DsContactState } from '../core/ingest';
import type { ContactReader, ContactView } from '../core/ingest/ports';
import type { ClickHouse } from '../infra/clickhouse';

export class AudienceReader implements ContactReader {
  constructor(private readonly ch: ClickHouse) {}

  async contact(projectId: string, datasourceId: string, userId: string): Promise<ContactView | null> {
    const states = await this.ch.client.query({
      query: `SELECT datasource_id, state FROM ${this.ch.table('ds_contacts')} FINAL WHERE project_id = {project:String} AND user_id = {user:String}`,
      query_params: { project: projectId, user: userId },
      format: 'JSONEachRow',
    });
    const all = (await states.json<{ datasource_id: string; state: string }>()).map((r) => JSON.parse(r.state) as DsContactState);
    const own = all.find((s) => s.datasourceId === datasourceId);
    if (!own || own.deleted) return null;
    const merged = mergeAudience(all);
    const counted = await this.ch.client.query({
      query: `SELECT count() AS n FROM ${this.ch.table('events')} WHERE project_id = {project:String} AND datasource_id = {ds:String} AND user_id = {user:String}`,
      query_params: { project: projectId, ds: datasourceId, user: userId },
      format: 'JSONEachRow',
    });
    const [row] = await counted.json<{ n: string }>();
    const values = (attrs: Readonly<Record<string, { value: unknown }>>): Record<string, unknown> =>
      Object.fromEntries(Object.entries(attrs).filter(([, a]) => a.value !== null).map(([name, a]) => [name, a.value]));
    return {
      _user_id: userId,
      audienceId: audienceId(projectId, userId),
      attributes: values(own.attributes),
      audience: { datasourceIds: merged?.datasourceIds ?? [], attributes: values(merged?.attributes ?? {}) },
      events: Number(row?.n ?? 0),
      createdAt: own.createdAt,
      updatedAt: own.updatedAt,
    };
  }
}
