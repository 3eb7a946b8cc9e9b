-- Day rows that answer a group's median without merging histograms (GET /sms/stats,
-- docs/grammar-a.md "Statistics", stores/stats-rollup.ts, stores/message-stats.ts):
--  - median_lo, median_hi: where the lower and the upper middle delivery time of the row lie,
--    as coarse bucket * 64 + sub-bucket (stores/delivery-histogram.ts), computed when the day is
--    summed; 65535 when its sub-buckets did not hold its coarse counts (the reader then merges
--    the histograms as before). Meaningless on rows without delivery_hist.
--  - sms_stats_daily_org: the day rows summed over projects (an account-wide read's groups are
--    one row each when grouped by day and country), with their medians; written with the same
--    generation as the day's rows of sms_stats_daily and made current by the same marker in
--    sms_stats_days. Their sub-buckets are those of sms_stats_daily_fine summed over projects.
--  - sms_stats_days.levels: which levels a generation of a day wrote: 1 by project only (a
--    rollup of an earlier version), 2 by project and over projects. An account-wide read uses a
--    day's rows only at level 2 (else it reads the day's hours), and a pass sums again a day
--    whose current generation has fewer levels, so a rollup of an earlier version running beside
--    this one (an upgrade in progress) never leaves a reader with day rows missing.
-- Every day is summed again by the next pass (the markers are cleared; the hours are kept).
ALTER TABLE {db}.sms_stats_days ADD COLUMN IF NOT EXISTS levels UInt8 DEFAULT 1;
ALTER TABLE {db}.sms_stats_daily ADD COLUMN IF NOT EXISTS median_lo UInt16 DEFAULT 65535 AFTER out_of_range;
ALTER TABLE {db}.sms_stats_daily ADD COLUMN IF NOT EXISTS median_hi UInt16 DEFAULT 65535 AFTER median_lo;

CREATE TABLE IF NOT EXISTS {db}.sms_stats_daily_org (
  org_id String,
  created_at DateTime64(3, 'UTC'),
  generation UInt64,
  direction LowCardinality(String),
  country LowCardinality(String),
  status LowCardinality(String),
  messages UInt64,
  segments UInt64,
  cost_micros Int64,
  delivery_hist Array(UInt32),
  out_of_range UInt64,
  median_lo UInt16,
  median_hi UInt16
) ENGINE = MergeTree
ORDER BY (org_id, created_at, direction, country, status);

TRUNCATE TABLE IF EXISTS {db}.sms_stats_days;
TRUNCATE TABLE IF EXISTS {db}.sms_stats_daily;
TRUNCATE TABLE IF EXISTS {db}.sms_stats_daily_fine;
