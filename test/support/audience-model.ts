// Contacts and events as the Grammar B tests think of them (spec 2 §2.1, §2.2), and their rows
// in the tables of infra/migrations/0005_audience.sql, inserted directly (the tests own the
// chdb; the ingest writer is not involved).
import type { ClickHouse } from '../../infra/clickhouse';

export type AttrValue =
  | { readonly t: 'string'; readonly v: string }
  | { readonly t: 'number'; readonly v: number }
  | { readonly t: 'bool'; readonly v: boolean }
  | { readonly t: 'date'; readonly v: string }
  | { readonly t: 'array'; readonly v: readonly string[] }
  | { readonly t: 'json'; readonly v: unknown };

export interface ModelContact {
  readonly project: string;
  readonly userId: string;
  readonly audienceId: string;
  readonly datasourceIds: readonly string[];
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly email: string | null;
  readonly phoneMobile: string | null;
  readonly countryCode: string | null;
  readonly clientTags: readonly string[];
  readonly isSubscribedSms: boolean | null;
  /** YYYY-MM-DD */
  readonly dateBirthday: string | null;
  /** ISO 8601 UTC with milliseconds */
  readonly dateImported: string | null;
  readonly geo: { readonly lat: number; readonly lon: number } | null;
  readonly bucket: number;
  readonly attrs: Readonly<Record<string, AttrValue>>;
}

export interface ModelEvent {
  readonly project: string;
  readonly userId: string;
  readonly audienceId: string;
  readonly datasourceId: string;
  readonly eventId: string;
  readonly type: string;
  readonly eventDate: string;
  readonly receivedAt: string;
  readonly source: string;
  readonly params: Readonly<Record<string, AttrValue>>;
}

export function contact(fields: Partial<ModelContact> & { userId: string }): ModelContact {
  return {
    project: 'p1', audienceId: `aud-${fields.userId}`, datasourceIds: ['ds1'], firstName: null, lastName: null, email: null, phoneMobile: null,
    countryCode: null, clientTags: [], isSubscribedSms: null, dateBirthday: null, dateImported: null, geo: null, bucket: 0, attrs: {}, ...fields,
  };
}

export function universalSearch(c: ModelContact): string {
  return [c.userId, c.email, c.phoneMobile, c.firstName, c.lastName].filter((s): s is string => s !== null && s !== '').join(' ').toLowerCase();
}

const chTime = (iso: string): string => iso.replace('T', ' ').replace('Z', '');

function maps(attrs: Readonly<Record<string, AttrValue>>, prefix: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {
    [`${prefix}_string`]: {}, [`${prefix}_number`]: {}, [`${prefix}_bool`]: {}, [`${prefix}_date`]: {}, [`${prefix}_array`]: {}, [`${prefix}_json`]: {},
  };
  for (const [k, a] of Object.entries(attrs)) {
    const map = out[`${prefix}_${a.t}`] as Record<string, unknown>;
    map[k] = a.t === 'date' ? chTime(a.v) : a.t === 'json' ? JSON.stringify(a.v) : a.v;
  }
  return out;
}

export function contactRow(c: ModelContact, version = 1, deleted = false): Record<string, unknown> {
  return {
    project_id: c.project, user_id: c.userId, audience_id: c.audienceId, version, deleted: deleted ? 1 : 0, datasource_ids: c.datasourceIds,
    first_name: c.firstName, last_name: c.lastName, email: c.email, phone_mobile: c.phoneMobile, country_code: c.countryCode,
    client_tags: c.clientTags, tags: [], is_subscribed_sms: c.isSubscribedSms, date_birthday: c.dateBirthday,
    date_imported: c.dateImported === null ? null : chTime(c.dateImported), geo_lat: c.geo?.lat ?? null, geo_lon: c.geo?.lon ?? null,
    ...maps(c.attrs, 'attrs'), bucket: c.bucket, universal_search: universalSearch(c),
    created_at: '2026-01-01 00:00:00.000', updated_at: '2026-01-01 00:00:00.000',
  };
}

export function eventRow(e: ModelEvent): Record<string, unknown> {
  return {
    project_id: e.project, datasource_id: e.datasourceId, event_type: e.type, user_id: e.userId, audience_id: e.audienceId, event_id: e.eventId,
    event_date: chTime(e.eventDate), received_at: chTime(e.receivedAt), source: e.source, ...maps(e.params, 'params'), version: 1,
  };
}

export async function insertModel(ch: ClickHouse, contacts: readonly ModelContact[], events: readonly ModelEvent[]): Promise<void> {
  if (contacts.length > 0) await ch.client.insert({ table: ch.table('audience'), values: contacts.map((c) => contactRow(c)), format: 'JSONEachRow' });
  if (events.length > 0) await ch.client.insert({ table: ch.table('events'), values: events.map(eventRow), format: 'JSONEachRow' });
}
