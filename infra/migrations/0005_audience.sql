-- Ingestion (spec 2) and the audience filter (spec 3 §2.3): written only by the ingest
-- writer (roles/ingest-writer.ts), in batches, in the order of the INGEST stream. `version`
-- is the writer's ordering key (stream sequence × 1000 + item index), so a replayed batch
-- writes the same rows again and ReplacingMergeTree keeps one.
--
-- Custom attributes and event parameters live in one typed map per JSON type; a name is in
-- exactly one of them per row. Native attributes (names starting with `_`) are typed columns.

-- One row per contact per datasource: the datasource's own record, with every attribute
-- that datasource ever wrote and the version of that write (a cleared attribute keeps a
-- null entry, so the audience merge knows when it was cleared). `state` is JSON text owned
-- by core/ingest/merge.ts.
CREATE TABLE IF NOT EXISTS {db}.ds_contacts (
  project_id String,
  user_id String,
  datasource_id String,
  version UInt64,
  deleted UInt8,
  state String,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, user_id, datasource_id);

-- The audience: one record per (project, _user_id) across datasources, each attribute the
-- latest write of any live datasource (DESIGN §5). Read with FINAL (or argMax by version).
CREATE TABLE IF NOT EXISTS {db}.audience (
  project_id String,
  user_id String,
  audience_id String,
  version UInt64,
  deleted UInt8,
  datasource_ids Array(String),
  first_name Nullable(String),
  last_name Nullable(String),
  email Nullable(String),
  phone_mobile Nullable(String),
  country_code Nullable(String),
  client_tags Array(String),
  tags Array(String),
  is_subscribed_sms Nullable(Bool),
  date_birthday Nullable(Date32),
  date_imported Nullable(DateTime64(3, 'UTC')),
  geo_lat Nullable(Float64),
  geo_lon Nullable(Float64),
  attrs_string Map(String, String),
  attrs_number Map(String, Float64),
  attrs_bool Map(String, Bool),
  attrs_date Map(String, DateTime64(3, 'UTC')),
  attrs_array Map(String, Array(String)),
  attrs_json Map(String, String),
  bucket UInt8,
  universal_search String,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, user_id);

-- Events: append-only, one row per accepted non-duplicate event. Ordered for the common
-- Grammar B filter (project, event type, contact, time). Rows of a deleted contact are
-- removed with a lightweight DELETE by the writer.
CREATE TABLE IF NOT EXISTS {db}.events (
  project_id String,
  datasource_id String,
  event_type LowCardinality(String),
  user_id String,
  audience_id String,
  event_id String,
  event_date DateTime64(3, 'UTC'),
  received_at DateTime64(3, 'UTC'),
  source LowCardinality(String),
  params_string Map(String, String),
  params_number Map(String, Float64),
  params_bool Map(String, Bool),
  params_date Map(String, DateTime64(3, 'UTC')),
  params_array Map(String, Array(String)),
  params_json Map(String, String),
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, event_type, user_id, event_date, datasource_id, event_id);

-- Every `_event_id` ever stored per datasource: the permanent deduplication key (spec 2 §2.2).
-- Kept when a contact is deleted, so a replayed event of a deleted contact stays a duplicate.
CREATE TABLE IF NOT EXISTS {db}.event_keys (
  datasource_id String,
  event_id String,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (datasource_id, event_id);

-- Per-minute usage per datasource and endpoint, for GET /stream (spec 2 §4).
CREATE TABLE IF NOT EXISTS {db}.ingest_usage (
  datasource_id String,
  endpoint LowCardinality(String),
  minute DateTime('UTC'),
  requests UInt64,
  accepted UInt64,
  failed UInt64,
  duplicates UInt64,
  skipped UInt64
) ENGINE = SummingMergeTree
ORDER BY (datasource_id, endpoint, minute)
