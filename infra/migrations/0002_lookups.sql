-- Number (HLR) lookups, immutable once answered.
CREATE TABLE IF NOT EXISTS {db}.lookups (
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
ORDER BY (org_id, id)
