// sortField / sortAsc (spec 3 §2.3): native scalar attributes only, as a non-null key so that
// keyset cursors compare tuples exactly; ties broken by _user_id in the same direction.
// Absent values sort as '' (text) or before every value (numbers and dates).
import { invalid, quote } from './problems';

export interface SortKey {
  readonly field: string;
  readonly asc: boolean;
  /** SQL of the key over fixed identifiers. */
  readonly sql: string;
  readonly type: 'String' | 'Float64';
}

const text = (column: string): { sql: string; type: 'String' } => ({ sql: `ifNull(${column}, '')`, type: 'String' });

export const SORT_FIELDS: Readonly<Record<string, { sql: string; type: 'String' | 'Float64' }>> = {
  _user_id: { sql: 'user_id', type: 'String' },
  _audience_id: { sql: 'audience_id', type: 'String' },
  _first_name: text('first_name'),
  _last_name: text('last_name'),
  _email: text('email'),
  _phone_mobile: text('phone_mobile'),
  _country_code: text('country_code'),
  _bucket: { sql: 'toFloat64(bucket)', type: 'Float64' },
  _is_subscribed_sms: { sql: 'toFloat64(ifNull(toInt8(is_subscribed_sms), -1))', type: 'Float64' },
  _date_birthday: { sql: 'toFloat64(ifNull(toInt32(date_birthday), -1000000))', type: 'Float64' },
  _date_imported: { sql: 'toFloat64(ifNull(toUnixTimestamp64Milli(date_imported), -1e15))', type: 'Float64' },
};

export function parseSort(field: unknown, asc: unknown): SortKey {
  const name = typeof field === 'string' ? field : '_user_id';
  const def = SORT_FIELDS[name];
  if (!def) throw invalid('sortField', `cannot sort by ${quote(name)}; sortable: ${Object.keys(SORT_FIELDS).join(', ')}`);
  return { field: name, asc: asc !== false, ...def };
}
