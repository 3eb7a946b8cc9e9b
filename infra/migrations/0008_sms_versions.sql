-- The versions of each message (org_id, id, updated_at), fed from every insert into
-- sms_messages, in small granules: the list plan verifies that a candidate row is the newest
-- version of its message (stores/scoped-query.ts) by reading a few hundred ids spread over
-- 90 days; here that reads 256-row granules of three columns instead of 8192-row granules of
-- the table. Created before the backfill, so no row is missed (a row seen twice is harmless:
-- readers take max(updated_at)).
CREATE TABLE IF NOT EXISTS {db}.sms_versions (
  org_id String,
  id String,
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (org_id, id)
SETTINGS index_granularity = 256;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.sms_versions_mv TO {db}.sms_versions AS
SELECT org_id, id, updated_at FROM {db}.sms_messages;

INSERT INTO {db}.sms_versions SELECT org_id, id, updated_at FROM {db}.sms_messages
