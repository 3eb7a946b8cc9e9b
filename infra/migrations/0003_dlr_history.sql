-- Status transitions of messages (each one a DLR) and every webhook attempt to deliver them.
CREATE TABLE IF NOT EXISTS {db}.sms_transitions (
  message_id String,
  org_id String,
  project_id String,
  token_id String,
  client_id Nullable(String),
  seq UInt16,
  status LowCardinality(String),
  code Int32,
  event_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (org_id, message_id, seq);

CREATE TABLE IF NOT EXISTS {db}.dlr_attempts (
  message_id String,
  org_id String,
  token_id String,
  seq UInt16,
  status LowCardinality(String),
  attempt UInt32,
  outcome LowCardinality(String),
  response_status Nullable(UInt16),
  latency_ms UInt32,
  error Nullable(String),
  url Nullable(String),
  at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (org_id, message_id, seq, attempt)
