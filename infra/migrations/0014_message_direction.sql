-- Two-way (DESIGN "Two-way"): inbound messages are stored in sms_messages beside the messages we
-- send, told apart by `direction`: 'outbound' for every message accepted for sending (the
-- default, so rows written before this migration and rows that arrive through
-- sms_messages_intake, whose view does not name the column, are outbound), 'inbound' for a
-- message received from a handset on a two-way number (written by the history writer from
-- sms.inbound.<token>: `sender` is the handset, `recipient` our number). A message never
-- changes direction, so lists filter on it before FINAL (stores/scoped-query.ts STABLE_COLUMNS).
ALTER TABLE {db}.sms_messages ADD COLUMN IF NOT EXISTS direction LowCardinality(String) DEFAULT 'outbound' AFTER source;

-- The analysts' relation `messages` (POST /analytics/v1/sql, docs/analytics.md) names its
-- columns: it gains `direction` (core/analytics/relations.ts), the rest as in 0013.
CREATE OR REPLACE VIEW {db}.analytics_messages AS
SELECT
  id, project_id, token_id, source, direction, client_id, status, status_code, sender, recipient, normalized_to, country,
  chars_count, messages_count AS segments, encoding, unicode, text, delivered_text, charged,
  toDecimal64(price_per_sms_micros, 6) / 1000000 AS price_per_segment,
  toDecimal64(price_user_micros, 6) / 1000000 AS price,
  currency, created_at, scheduled_at, sent_at, delivered_at, updated_at
FROM {db}.sms_messages FINAL
WHERE org_id = {org:String}
