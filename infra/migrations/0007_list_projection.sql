-- Lists read sms_messages without FINAL (stores/scoped-query.ts, docs/grammar-a.md "List query
-- plan"), so a projection can serve them: every column, ordered by the filters nearly every
-- list carries (status, country) and then the list order. A rare status and country on a deep
-- page reads its few ranges instead of 90 days of the organization.
-- ReplacingMergeTree needs to be told what a merge does to projections: rebuild them.
-- MATERIALIZE builds it for rows written before this migration (a background mutation).
ALTER TABLE {db}.sms_messages MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild';
ALTER TABLE {db}.sms_messages ADD PROJECTION IF NOT EXISTS by_status_country (SELECT * ORDER BY org_id, status, country, created_at, id);
ALTER TABLE {db}.sms_messages MATERIALIZE PROJECTION by_status_country
