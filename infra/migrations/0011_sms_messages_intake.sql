-- The door through which accepted messages reach sms_messages without being decoded by the
-- history writer: it inserts the bytes of each sms.accepted batch as they are on the bus (the
-- messages' JSON, keys as in core/sms/message.ts) into this Null table, and the view below
-- turns each row into sms_messages' columns. Inserting into sms_messages feeds its projection
-- and sms_versions as any insert does. A row missing an identifying field or a time fails the
-- whole insert (the writer then isolates the stream message that holds it). A nullable time is
-- parsed only when present (ClickHouse would otherwise parse the empty value under a NULL).
CREATE TABLE IF NOT EXISTS {db}.sms_messages_intake (
  id String,
  orgId String,
  projectId String,
  tokenId String,
  source String,
  clientId Nullable(String),
  status String,
  statusCode Nullable(Int32),
  `from` String,
  country String,
  `to` String,
  normalizedTo String,
  charsCount UInt32,
  text String,
  deliveredText String,
  messagesCount UInt16,
  encoding String,
  unicode Bool,
  allowUnicode Bool,
  charged Bool,
  pricePerSmsMicros Int64,
  priceUserMicros Int64,
  currency String,
  createdAt String,
  chargedAt Nullable(String),
  scheduledAt Nullable(String),
  sentAt Nullable(String),
  deliveredAt Nullable(String),
  updatedAt String
) ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.sms_messages_intake_mv TO {db}.sms_messages AS
SELECT
  if(throwIf(empty(id) OR empty(orgId) OR empty(projectId) OR empty(tokenId) OR empty(source) OR empty(status) OR empty(currency),
             'sms_messages_intake: a message without id, orgId, projectId, tokenId, source, status or currency') = 0, id, '') AS id,
  orgId AS org_id,
  projectId AS project_id,
  tokenId AS token_id,
  source,
  clientId AS client_id,
  status,
  statusCode AS status_code,
  `from` AS sender,
  country,
  `to` AS recipient,
  normalizedTo AS normalized_to,
  charsCount AS chars_count,
  text,
  deliveredText AS delivered_text,
  messagesCount AS messages_count,
  encoding,
  unicode,
  allowUnicode AS allow_unicode,
  charged,
  pricePerSmsMicros AS price_per_sms_micros,
  priceUserMicros AS price_user_micros,
  currency,
  parseDateTime64BestEffort(createdAt, 3, 'UTC') AS created_at,
  if(isNull(chargedAt), NULL, parseDateTime64BestEffort(ifNull(chargedAt, '1970-01-01'), 3, 'UTC')) AS charged_at,
  if(isNull(scheduledAt), NULL, parseDateTime64BestEffort(ifNull(scheduledAt, '1970-01-01'), 3, 'UTC')) AS scheduled_at,
  if(isNull(sentAt), NULL, parseDateTime64BestEffort(ifNull(sentAt, '1970-01-01'), 3, 'UTC')) AS sent_at,
  if(isNull(deliveredAt), NULL, parseDateTime64BestEffort(ifNull(deliveredAt, '1970-01-01'), 3, 'UTC')) AS delivered_at,
  parseDateTime64BestEffort(updatedAt, 3, 'UTC') AS updated_at
FROM {db}.sms_messages_intake
