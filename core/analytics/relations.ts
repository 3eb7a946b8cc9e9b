// The relations an analyst's SQL may read (POST /analytics/v1/sql, docs/analytics.md): their
// names, and per column its ClickHouse type and meaning. One source for the AST checker (the
// only table names a query may name), the execution (each name bound to its parameterized view
// of infra/migrations/0013_analytics_views.sql; `messages` as 0014_message_direction.sql replaced it), docs/analytics.md and the tests that compare
// this table with the views' columns and with the page.

export interface RelationColumn {
  readonly name: string;
  readonly type: string;
  readonly meaning: string;
}

export interface Relation {
  readonly name: string;
  /** The parameterized view in the product's database that serves it. */
  readonly view: string;
  /** What binds it to the caller: the organization id, or the organization's project ids. */
  readonly boundBy: 'org' | 'projects';
  readonly description: string;
  readonly columns: readonly RelationColumn[];
}

const T = "DateTime64(3, 'UTC')";
const NT = `Nullable(${T})`;
const c = (name: string, type: string, meaning: string): RelationColumn => ({ name, type, meaning });

export const RELATIONS: readonly Relation[] = [
  {
    name: 'messages', view: 'analytics_messages', boundBy: 'org',
    description: 'One row per SMS message of the organization (its latest state), sent through any API (v1, legacy, SMPP).',
    columns: [
      c('id', 'String', 'Message id (UUIDv7, time-ordered).'),
      c('project_id', 'String', 'Project of the token that sent it; empty for the legacy API (organization-wide tokens).'),
      c('token_id', 'String', 'Id of the token that sent it.'),
      c('source', 'LowCardinality(String)', 'How it was sent: `http` (API v1), `legacy`, `smpp`; `carrier` for an inbound message.'),
      c('direction', 'LowCardinality(String)', '`outbound` (sent by the organization) or `inbound` (received from a handset on a two-way number: `sender` is the handset, `recipient` our number; never charged).'),
      c('client_id', 'Nullable(String)', 'The clientId the sender gave, if any.'),
      c('status', 'LowCardinality(String)', 'Current status: `queued`, `scheduled`, `sent`, `buffered`, `delivered`, `failed`, `expired`, `canceled`, `rejected`, `error`, `unknown`, ...'),
      c('status_code', 'Nullable(Int32)', 'Code of the current status (docs: the DLR code table), if any.'),
      c('sender', 'String', 'The `from` (sender id or number).'),
      c('recipient', 'String', 'The `to` as sent by the client.'),
      c('normalized_to', 'String', 'The recipient in E.164 without `+`.'),
      c('country', 'LowCardinality(String)', 'ISO 3166 alpha-2 country of the recipient.'),
      c('chars_count', 'UInt32', 'Characters of the delivered text.'),
      c('segments', 'UInt16', 'SMS segments (messagesCount).'),
      c('encoding', 'LowCardinality(String)', '`GSM-7` or `UCS-2`.'),
      c('unicode', 'Bool', 'Sent as UCS-2.'),
      c('text', 'String', 'The text the client sent.'),
      c('delivered_text', 'String', 'The text as sent to the carrier (after transliteration).'),
      c('charged', 'Bool', 'Whether the price was charged (false once refunded, e.g. `error`).'),
      c('price_per_segment', 'Decimal(18, 6)', 'Price of one segment (pricePerSms), in `currency`.'),
      c('price', 'Decimal(18, 6)', 'Total price of the message (priceUser), in `currency`.'),
      c('currency', 'LowCardinality(String)', 'ISO 4217 currency of the prices.'),
      c('created_at', T, 'When it was accepted.'),
      c('scheduled_at', NT, 'When it is scheduled for, if scheduled.'),
      c('sent_at', NT, 'When the carrier accepted it (submit_sm_resp).'),
      c('delivered_at', NT, 'When it reached a final status.'),
      c('updated_at', T, 'Time of the latest state change.'),
    ],
  },
  {
    name: 'dlrs', view: 'analytics_dlrs', boundBy: 'org',
    description: 'One row per status transition of a message (each one a delivery report), in order (`seq`).',
    columns: [
      c('message_id', 'String', 'The message (`messages.id`).'),
      c('project_id', 'String', 'Project of the message (empty for legacy messages).'),
      c('token_id', 'String', 'Token that sent the message.'),
      c('client_id', 'Nullable(String)', 'The message\'s clientId, if any.'),
      c('seq', 'UInt16', 'Position of this transition in the message\'s history (1, 2, ...).'),
      c('status', 'LowCardinality(String)', 'The status reached (`sent`, `buffered`, `delivered`, `failed`, ...).'),
      c('code', 'Int32', 'The status code (0 when none).'),
      c('event_at', T, 'When the transition happened.'),
    ],
  },
  {
    name: 'webhook_attempts', view: 'analytics_webhook_attempts', boundBy: 'org',
    description: 'One row per attempt to deliver a DLR webhook.',
    columns: [
      c('message_id', 'String', 'The message whose DLR was posted.'),
      c('token_id', 'String', 'Token whose webhook was called.'),
      c('seq', 'UInt16', 'The transition (`dlrs.seq`) the DLR reports.'),
      c('status', 'LowCardinality(String)', 'The DLR status posted.'),
      c('attempt', 'UInt32', 'Attempt number, from 1.'),
      c('outcome', 'LowCardinality(String)', 'Result of the attempt (`delivered`, `failed`, ...).'),
      c('response_status', 'Nullable(UInt16)', 'HTTP status the receiver answered, if any.'),
      c('latency_ms', 'UInt32', 'Duration of the attempt in milliseconds.'),
      c('error', 'Nullable(String)', 'Why it failed (timeout, refused target, ...), if it did.'),
      c('url', 'Nullable(String)', 'The webhook URL called.'),
      c('at', T, 'When the attempt was made.'),
    ],
  },
  {
    name: 'lookups', view: 'analytics_lookups', boundBy: 'org',
    description: 'One row per number (HLR) lookup.',
    columns: [
      c('id', 'String', 'Lookup id.'),
      c('project_id', 'String', 'Project of the token (empty for legacy).'),
      c('token_id', 'String', 'Token that asked.'),
      c('source', 'LowCardinality(String)', 'API it came through.'),
      c('status', 'LowCardinality(String)', 'Lookup status.'),
      c('status_code', 'Nullable(Int32)', 'Status code, if any.'),
      c('country', 'LowCardinality(String)', 'ISO 3166 alpha-2 country of the number.'),
      c('recipient', 'String', 'The number as given.'),
      c('normalized_to', 'String', 'The number in E.164 without `+`.'),
      c('subscriber_status', 'Nullable(String)', 'Subscriber status the HLR answered.'),
      c('network', 'String', 'Network (operator) of the number.'),
      c('ported', 'Bool', 'Number ported to another network.'),
      c('roaming', 'Bool', 'Subscriber roaming.'),
      c('charged', 'Bool', 'Whether the lookup was charged.'),
      c('price', 'Decimal(18, 6)', 'Price charged, in `currency`.'),
      c('currency', 'LowCardinality(String)', 'ISO 4217 currency.'),
      c('created_at', T, 'When it was asked.'),
      c('delivered_at', NT, 'When it was answered.'),
    ],
  },
  {
    name: 'contacts', view: 'analytics_contacts', boundBy: 'projects',
    description: 'The merged audience: one row per (project, _user_id) across datasources, deleted contacts excluded.',
    columns: [
      c('project_id', 'String', 'Project of the contact.'),
      c('user_id', 'String', 'The contact\'s `_user_id`.'),
      c('datasource_ids', 'Array(String)', 'Datasources that wrote this contact.'),
      c('first_name', 'Nullable(String)', '`_first_name`.'),
      c('last_name', 'Nullable(String)', '`_last_name`.'),
      c('email', 'Nullable(String)', '`_email`.'),
      c('phone_mobile', 'Nullable(String)', '`_phone_mobile`.'),
      c('country_code', 'Nullable(String)', '`_country_code`.'),
      c('tags', 'Array(String)', '`_tags`.'),
      c('client_tags', 'Array(String)', '`_client_tags`.'),
      c('is_subscribed_sms', 'Nullable(Bool)', '`_is_subscribed_sms`.'),
      c('date_birthday', 'Nullable(Date32)', '`_date_birthday`.'),
      c('date_imported', NT, '`_date_imported`.'),
      c('geo_lat', 'Nullable(Float64)', 'Latitude of `_geopoint`.'),
      c('geo_lon', 'Nullable(Float64)', 'Longitude of `_geopoint`.'),
      c('attributes_string', 'Map(String, String)', 'Custom string attributes by name.'),
      c('attributes_number', 'Map(String, Float64)', 'Custom number attributes by name.'),
      c('attributes_bool', 'Map(String, Bool)', 'Custom boolean attributes by name.'),
      c('attributes_date', `Map(String, ${T})`, 'Custom date attributes by name.'),
      c('attributes_array', 'Map(String, Array(String))', 'Custom array attributes by name.'),
      c('attributes_json', 'Map(String, String)', 'Custom object attributes by name, as JSON text.'),
      c('bucket', 'UInt8', '`_bucket` (0-199).'),
      c('created_at', T, 'When the contact was first written.'),
      c('updated_at', T, 'When it was last written.'),
    ],
  },
  {
    name: 'events', view: 'analytics_events', boundBy: 'projects',
    description: 'One row per stored event (deduplicated by `_event_id` per datasource); events of deleted contacts are gone.',
    columns: [
      c('project_id', 'String', 'Project of the event.'),
      c('datasource_id', 'String', 'Datasource that wrote it.'),
      c('event_type', 'LowCardinality(String)', '`_event_type`.'),
      c('user_id', 'String', 'The contact\'s `_user_id`.'),
      c('event_id', 'String', '`_event_id`.'),
      c('event_date', T, '`_event_date` (when it happened).'),
      c('received_at', T, 'When it was ingested.'),
      c('source', 'LowCardinality(String)', 'How it was ingested.'),
      c('params_string', 'Map(String, String)', 'String parameters by name.'),
      c('params_number', 'Map(String, Float64)', 'Number parameters by name.'),
      c('params_bool', 'Map(String, Bool)', 'Boolean parameters by name.'),
      c('params_date', `Map(String, ${T})`, 'Date parameters by name.'),
      c('params_array', 'Map(String, Array(String))', 'Array parameters by name.'),
      c('params_json', 'Map(String, String)', 'Object parameters by name, as JSON text.'),
    ],
  },
];

export const RELATION_NAMES: ReadonlySet<string> = new Set(RELATIONS.map((r) => r.name));

/**
 * The tables of the product's database and how the defence-in-depth filter of every analytics
 * query (`additional_table_filters`) binds each to the caller: by organization column, by
 * project column, or not at all (`none`: no row of it is readable from an analytics query).
 */
export const BASE_TABLE_SCOPES: Readonly<Record<string, { readonly column: string; readonly by: 'org' | 'projects' } | 'none'>> = {
  sms_messages: { column: 'org_id', by: 'org' },
  sms_versions: { column: 'org_id', by: 'org' },
  sms_transitions: { column: 'org_id', by: 'org' },
  dlr_attempts: { column: 'org_id', by: 'org' },
  lookups: { column: 'org_id', by: 'org' },
  audience: { column: 'project_id', by: 'projects' },
  events: { column: 'project_id', by: 'projects' },
  ds_contacts: { column: 'project_id', by: 'projects' },
  event_keys: 'none',
  ingest_usage: 'none',
  schema_migrations: 'none',
  sms_messages_intake: 'none',
};
