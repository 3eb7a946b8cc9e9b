-- List pages newest first (the default order of GET /sms and GET /lookup) read time slices of
-- created_at (stores/scoped-query.ts); a minmax index lets each slice read only its granules.
-- created_at is the same in every state row of a record, so the index is exact under FINAL.
-- MATERIALIZE builds it for rows written before this migration (a background mutation).
ALTER TABLE {db}.sms_messages ADD INDEX IF NOT EXISTS idx_created_at created_at TYPE minmax GRANULARITY 1;
ALTER TABLE {db}.sms_messages MATERIALIZE INDEX idx_created_at;
ALTER TABLE {db}.lookups ADD INDEX IF NOT EXISTS idx_created_at created_at TYPE minmax GRANULARITY 1;
ALTER TABLE {db}.lookups MATERIALIZE INDEX idx_created_at
