-- Messages sent through the legacy API have no project: its tokens are organization-wide (spec 1
-- §1), so the acceptance path stores them with projectId '' (core/sms/acceptance.ts), as their
-- status changes and lookups always were. The intake view of 0011 refused such a row, and with
-- it the whole sms.accepted stream message: the history writer terminated it after five failed
-- inserts, and the message's accepted version never reached sms_messages. The view now takes an
-- empty projectId from a legacy message only; every other source still needs one. MODIFY QUERY
-- replaces the view's query in one step, so no insert passes between an old and a new view.
ALTER TABLE {db}.sms_messages_intake_mv MODIFY QUERY
SELECT
  if(throwIf(empty(id) OR empty(orgId) OR (empty(projectId) AND source != 'legacy') OR empty(tokenId) OR empty(source) OR empty(status) OR empty(currency),
             'sms_messages_intake: a message without id, orgId, projectId (legacy messages have none), tokenId, source, status or currency') = 0, id, '') AS id,
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
