-- Delivery statistics from a rollup of closed hours (GET /sms/stats, docs/grammar-a.md
-- "Statistics", stores/message-stats.ts). Three tables:
--  - sms_stats_touched: per (organization, hour of created_at), the last time (server clock) a
--    row of sms_messages for that hour arrived. Fed by the view below from every insert, so a
--    late status change of an old message marks its hour.
--  - sms_stats_hourly: per hour and generation, the newest state of the hour's messages summed
--    by the dimensions of the statistics (project, direction, country, status), with the exact
--    delivery times as a quantileExactInclusive state. Written by pipelines/stats-rollup.ts,
--    never by a view: a view sees inserted rows, not the state each message ends in.
--  - sms_stats_hours: which generation of an hour is current and which touch it saw. A reader
--    uses an hour of the rollup only when no row arrived for it after that touch. Otherwise the
--    hour is read from sms_messages FINAL, as every hour not rolled yet.
-- Rows of superseded generations are ignored by readers and deleted by the job.
CREATE TABLE IF NOT EXISTS {db}.sms_stats_touched (
  org_id String,
  hour DateTime64(3, 'UTC'),
  touched_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = AggregatingMergeTree
ORDER BY (org_id, hour);

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.sms_stats_touched_mv TO {db}.sms_stats_touched AS
SELECT org_id, toStartOfHour(created_at) AS hour, max(now64(3, 'UTC')) AS touched_at
FROM {db}.sms_messages
GROUP BY org_id, hour;

-- The hours already stored, touched now: created after the view, so no row is missed (a row
-- seen by both is harmless: readers take the newest touch).
INSERT INTO {db}.sms_stats_touched
SELECT org_id, toStartOfHour(created_at) AS hour, now64(3, 'UTC') AS touched_at
FROM {db}.sms_messages
GROUP BY org_id, hour;

CREATE TABLE IF NOT EXISTS {db}.sms_stats_hourly (
  org_id String,
  -- The hour's start, named like the column of sms_messages so that the time buckets of
  -- `_group` (toStartOfDay(created_at), ...) apply to both tables unchanged.
  created_at DateTime64(3, 'UTC'),
  generation UInt64,
  project_id String,
  direction LowCardinality(String),
  country LowCardinality(String),
  status LowCardinality(String),
  messages UInt64,
  segments UInt64,
  cost_micros Int64,
  -- createdAt -> deliveredAt in ms of the delivered messages. A value outside 0 .. 2^32-1 ms
  -- cannot be held: it is counted in out_of_range and a reader that meets one reads FINAL.
  delivery_ms AggregateFunction(quantileExactInclusive(0.5), UInt32),
  out_of_range UInt64
) ENGINE = MergeTree
ORDER BY (org_id, created_at, project_id, direction, country, status);

CREATE TABLE IF NOT EXISTS {db}.sms_stats_hours (
  org_id String,
  hour DateTime64(3, 'UTC'),
  generation UInt64,
  -- The newest touch of the hour when the generation was computed.
  touched_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(generation)
ORDER BY (org_id, hour)
