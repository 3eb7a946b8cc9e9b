-- Lists (GET /sms, GET /lookup) read a copy of each history table keyed in the list order:
-- (org_id, created_at, id), the default `_sort` (created_at DESC, id DESC) being that key read
-- backwards. ClickHouse reads such a list in order and stops at the page (no sort of 90 days of
-- an organization), a createdAt range is a primary-key range, and the rows of a page are
-- fetched by key (stores/list-plan.ts, docs/grammar-a.md "List query plan").
-- created_at is the same in every state row of a record (stores/scoped-query.ts STABLE_COLUMNS),
-- so the versions of a record share their key and ReplacingMergeTree(updated_at) keeps the
-- newest, as in the history table. Small granules: a page, and the versions of its rows,
-- are read as 1024-row granules.
-- Fed by a materialized view from every insert into the history table, created before the
-- backfill, so no row is missed while a writer runs (a row copied twice is the same version).
CREATE TABLE IF NOT EXISTS {db}.sms_list (
  id String,
  org_id String,
  project_id String,
  token_id String,
  source LowCardinality(String),
  client_id Nullable(String),
  status LowCardinality(String),
  status_code Nullable(Int32),
  sender String,
  country LowCardinality(String),
  recipient String,
  normalized_to String,
  chars_count UInt32,
  text String,
  delivered_text String,
  messages_count UInt16,
  encoding LowCardinality(String),
  unicode Bool,
  allow_unicode Bool,
  charged Bool,
  price_per_sms_micros Int64,
  price_user_micros Int64,
  currency LowCardinality(String),
  created_at DateTime64(3, 'UTC'),
  charged_at Nullable(DateTime64(3, 'UTC')),
  scheduled_at Nullable(DateTime64(3, 'UTC')),
  sent_at Nullable(DateTime64(3, 'UTC')),
  delivered_at Nullable(DateTime64(3, 'UTC')),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (org_id, created_at, id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.sms_list_mv TO {db}.sms_list AS
SELECT id, org_id, project_id, token_id, source, client_id, status, status_code, sender, country, recipient, normalized_to,
  chars_count, text, delivered_text, messages_count, encoding, unicode, allow_unicode, charged, price_per_sms_micros,
  price_user_micros, currency, created_at, charged_at, scheduled_at, sent_at, delivered_at, updated_at
FROM {db}.sms_messages;

INSERT INTO {db}.sms_list
SELECT id, org_id, project_id, token_id, source, client_id, status, status_code, sender, country, recipient, normalized_to,
  chars_count, text, delivered_text, messages_count, encoding, unicode, allow_unicode, charged, price_per_sms_micros,
  price_user_micros, currency, created_at, charged_at, scheduled_at, sent_at, delivered_at, updated_at
FROM {db}.sms_messages;

CREATE TABLE IF NOT EXISTS {db}.lookups_list (
  id String,
  org_id String,
  project_id String,
  token_id String,
  source LowCardinality(String),
  status LowCardinality(String),
  status_code Nullable(Int32),
  country LowCardinality(String),
  recipient String,
  normalized_to String,
  subscriber_status Nullable(String),
  imsi Nullable(String),
  serving_msc Nullable(String),
  ported Bool,
  roaming Bool,
  network String,
  charged Bool,
  price_micros Int64,
  currency LowCardinality(String),
  created_at DateTime64(3, 'UTC'),
  delivered_at Nullable(DateTime64(3, 'UTC')),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (org_id, created_at, id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.lookups_list_mv TO {db}.lookups_list AS
SELECT id, org_id, project_id, token_id, source, status, status_code, country, recipient, normalized_to, subscriber_status,
  imsi, serving_msc, ported, roaming, network, charged, price_micros, currency, created_at, delivered_at, updated_at
FROM {db}.lookups;

INSERT INTO {db}.lookups_list
SELECT id, org_id, project_id, token_id, source, status, status_code, country, recipient, normalized_to, subscriber_status,
  imsi, serving_msc, ported, roaming, network, charged, price_micros, currency, created_at, delivered_at, updated_at
FROM {db}.lookups;

-- What the list tables replace, and what every insert paid for: the full-row projection of
-- migration 0007 and the versions table of migration 0008 (lists verify versions in the list
-- table by its key now).
ALTER TABLE {db}.sms_messages DROP PROJECTION IF EXISTS by_status_country;
DROP VIEW IF EXISTS {db}.sms_versions_mv;
DROP TABLE IF EXISTS {db}.sms_versions
