-- Undoes the list tables that a migration 0009 (list_tables, withdrawn the same day: slower
-- lists than the plan on sms_messages) created in data dirs that ran it, and restores what it
-- dropped. On a dir that never ran it, every statement is a no-op (the backfill copies only
-- into an empty sms_versions). The projection is not re-materialized: parts written before
-- this migration are read from the table itself (correct, slower) until merges rebuild them.
DROP VIEW IF EXISTS {db}.sms_list_mv;
DROP TABLE IF EXISTS {db}.sms_list;
DROP VIEW IF EXISTS {db}.lookups_list_mv;
DROP TABLE IF EXISTS {db}.lookups_list;
ALTER TABLE {db}.sms_messages ADD PROJECTION IF NOT EXISTS by_status_country (SELECT * ORDER BY org_id, status, country, created_at, id);

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
WHERE (SELECT count() FROM {db}.sms_versions) = 0
