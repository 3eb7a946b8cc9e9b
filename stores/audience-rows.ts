// Audience rows (infra/migrations/0005_audience.sql) as the contacts of the search response
// (docs/grammar-b.md): native attributes under their `_` names, custom attributes by UID.
import { fromClickHouseTimeOrNull } from './clickhouse-time';

export interface ContactRow {
  user_id: string;
  audience_id: string;
  datasource_ids: string[];
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  phone_mobile?: string | null;
  country_code?: string | null;
  client_tags?: string[];
  tags?: string[];
  is_subscribed_sms?: boolean | null;
  date_birthday?: string | null;
  date_imported?: string | null;
  geo_lat?: number | null;
  geo_lon?: number | null;
  bucket?: number;
  attrs_string?: Record<string, string>;
  attrs_number?: Record<string, number>;
  attrs_bool?: Record<string, boolean>;
  attrs_date?: Record<string, string>;
  attrs_array?: Record<string, string[]>;
  attrs_json?: Record<string, string>;
}

export const ESSENTIAL_COLUMNS = 'user_id, audience_id, datasource_ids';
export const FULL_COLUMNS = `${ESSENTIAL_COLUMNS}, first_name, last_name, email, phone_mobile, country_code, client_tags, tags, is_subscribed_sms,
  date_birthday, date_imported, geo_lat, geo_lon, bucket, attrs_string, attrs_number, attrs_bool, attrs_date, attrs_array, attrs_json`;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function contactEntity(r: ContactRow, all: boolean): Record<string, unknown> {
  const essential = { _user_id: r.user_id, _audience_id: r.audience_id, _datasource_ids: r.datasource_ids };
  if (!all) return essential;
  const custom: Record<string, unknown> = {
    ...r.attrs_string, ...r.attrs_number, ...r.attrs_bool, ...r.attrs_array,
    ...Object.fromEntries(Object.entries(r.attrs_date ?? {}).map(([k, v]) => [k, fromClickHouseTimeOrNull(v)])),
    ...Object.fromEntries(Object.entries(r.attrs_json ?? {}).map(([k, v]) => [k, parseJson(v)])),
  };
  return {
    ...custom,
    ...essential,
    _first_name: r.first_name ?? null,
    _last_name: r.last_name ?? null,
    _email: r.email ?? null,
    _phone_mobile: r.phone_mobile ?? null,
    _country_code: r.country_code ?? null,
    _client_tags: r.client_tags ?? [],
    _tags: r.tags ?? [],
    _is_subscribed_sms: r.is_subscribed_sms ?? null,
    _date_birthday: r.date_birthday ?? null,
    _date_imported: fromClickHouseTimeOrNull(r.date_imported ?? null),
    _geopoint: r.geo_lat === null || r.geo_lat === undefined || r.geo_lon === null || r.geo_lon === undefined ? null : { latitude: r.geo_lat, longitude: r.geo_lon },
    _bucket: r.bucket ?? 0,
  };
}
