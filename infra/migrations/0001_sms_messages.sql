-- Messages: one row per state change of a message; ReplacingMergeTree keeps the newest
-- (updated_at) per id. Ordered by (org_id, id): ids are time-ordered (UUIDv7), so an
-- organization's newest messages are adjacent.
CREATE TABLE IF NOT EXISTS {db}.sms_messages (
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
ORDER BY (org_id, id)
