// Which column answers which key (storage: infra/migrations/0005_audience.sql). Identifiers
// here are the only names that reach SQL text; custom attribute and parameter names are
// bound map keys. Types decide which operators apply (spec 3 §2.4 rule 4 and the table).

/** `birthday` is a DATE kept as a calendar day (Date32) and the only one with an anniversary index. */
export type FieldType = 'string' | 'strings' | 'number' | 'bool' | 'date' | 'birthday' | 'geo' | 'custom';

export interface NativeField {
  readonly type: FieldType;
  /** SQL expression over fixed identifiers only. */
  readonly sql: string;
  readonly nullable: boolean;
  /** range-date-dayversary applies (event created-at only, §2.4). */
  readonly dayversary?: boolean;
  /** The expression reads the contact row joined into an event subquery. */
  readonly needsContact?: boolean;
  /** A list's distinct values stored beside it (a MATERIALIZED column, not in `SELECT *`): what the terms aggregation reads. */
  readonly distinct?: string;
}

const col = (type: FieldType, sql: string, nullable = true): NativeField => ({ type, sql, nullable });

export const NATIVE_ATTRIBUTES: Readonly<Record<string, NativeField>> = {
  _user_id: col('string', 'user_id', false),
  _audience_id: col('string', 'audience_id', false),
  _datasource_ids: col('strings', 'datasource_ids', false),
  _first_name: col('string', 'first_name'),
  _last_name: col('string', 'last_name'),
  _email: col('string', 'email'),
  _phone_mobile: col('string', 'phone_mobile'),
  _country_code: col('string', 'country_code'),
  // Stored as sent (duplicates kept); client_tags_distinct: migration 0021.
  _client_tags: { ...col('strings', 'client_tags', false), distinct: 'client_tags_distinct' },
  _tags: col('strings', 'tags', false),
  _is_subscribed_sms: col('bool', 'is_subscribed_sms'),
  _date_birthday: col('birthday', 'date_birthday'),
  _date_imported: col('date', 'date_imported'),
  _geopoint: col('geo', 'geo'),
  _universal_search: col('string', 'universal_search', false),
  _bucket: col('number', 'bucket', false),
};

/** The MATERIALIZED columns of the audience that aggregations read: a subquery over the audience must name them (`SELECT *` leaves them out). */
export const MATERIALIZED_ATTRIBUTE_COLUMNS: readonly string[] = Object.values(NATIVE_ATTRIBUTES).flatMap((f) => (f.distinct === undefined ? [] : [f.distinct]));

/** Native event attributes of spec 3 §2.3; `e` is the events row, `a` the contact joined in. */
export const NATIVE_EVENT_ATTRIBUTES: Readonly<Record<string, NativeField>> = {
  'created-at': { type: 'date', sql: 'e.event_date', nullable: false, dayversary: true },
  'received-at': col('date', 'e.received_at', false),
  'event-source': col('string', 'e.source', false),
  'event-type': col('string', 'e.event_type', false),
  'audience-id': col('string', 'e.audience_id', false),
  'audience-ids': col('strings', '[e.audience_id]', false),
  'audience-ds-ids': { type: 'strings', sql: 'a.datasource_ids', nullable: false, needsContact: true },
  // No categories or target groups exist yet (docs/grammar-b.md): always an empty list.
  'audience-categories': col('strings', 'CAST([], \'Array(String)\')', false),
  'audience-target-groups': col('strings', 'CAST([], \'Array(String)\')', false),
  'ds-contact-id': col('string', 'e.user_id', false),
  'ds-id': col('string', 'e.datasource_id', false),
  'ds-event-id': col('string', 'e.event_id', false),
};

/** The typed maps of custom attributes (audience) and event parameters (events). */
export interface CustomMaps {
  readonly string: string;
  readonly number: string;
  readonly bool: string;
  readonly date: string;
  readonly array: string;
  readonly json: string;
}

const maps = (prefix: string): CustomMaps => ({
  string: `${prefix}_string`, number: `${prefix}_number`, bool: `${prefix}_bool`, date: `${prefix}_date`, array: `${prefix}_array`, json: `${prefix}_json`,
});
export const ATTRIBUTE_MAPS = maps('attrs');
export const PARAMETER_MAPS = maps('e.params');

/** Which field types each base operator applies to; `custom` means "typed by the operator". */
export const OPERATOR_TYPES: Readonly<Record<string, readonly FieldType[]>> = {
  'match-all': ['string', 'strings', 'number', 'bool', 'date', 'birthday', 'geo', 'custom'],
  'match-none': ['string', 'strings', 'number', 'bool', 'date', 'birthday', 'geo', 'custom'],
  exists: ['string', 'strings', 'number', 'bool', 'date', 'birthday', 'geo', 'custom'],
  'matches-bool': ['bool', 'custom'],
  contains: ['string', 'strings', 'custom'],
  startswith: ['string', 'strings', 'custom'],
  endswith: ['string', 'strings', 'custom'],
  'matches-string': ['string', 'strings', 'custom'],
  'matches-number': ['number', 'custom'],
  'range-number': ['number', 'custom'],
  'matches-date': ['date', 'birthday', 'custom'],
  'range-date': ['date', 'birthday', 'custom'],
  'range-date-relative': ['date', 'birthday', 'custom'],
  'range-date-anniversary': ['birthday'],
  'range-date-dayversary': ['date'],
  'range-date-timeversary': ['date', 'birthday', 'custom'],
  'geopoint-distance': ['geo'],
};
