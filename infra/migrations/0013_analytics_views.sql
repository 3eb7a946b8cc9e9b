-- The relations of analysts' SQL (POST /analytics/v1/sql, docs/analytics.md): one parameterized
-- view per documented relation, each bound to one organization by a query parameter that only
-- the product sets (stores/analytics-sql.ts binds each relation name to its view with the
-- caller's organization, or its project ids for the audience relations). Columns are the
-- documented names and types (core/analytics/relations.ts), not the tables' own, so the tables
-- can change without changing what analysts query. CREATE OR REPLACE: a later release changes a
-- view by a migration that replaces it.
CREATE OR REPLACE VIEW {db}.analytics_messages AS
SELECT
  id, project_id, token_id, source, client_id, status, status_code, sender, recipient, normalized_to, country,
  chars_count, messages_count AS segments, encoding, unicode, text, delivered_text, charged,
  toDecimal64(price_per_sms_micros, 6) / 1000000 AS price_per_segment,
  toDecimal64(price_user_micros, 6) / 1000000 AS price,
  currency, created_at, scheduled_at, sent_at, delivered_at, updated_at
FROM {db}.sms_messages FINAL
WHERE org_id = {org:String};

CREATE OR REPLACE VIEW {db}.analytics_dlrs AS
SELECT message_id, project_id, token_id, client_id, seq, status, code, event_at
FROM {db}.sms_transitions FINAL
WHERE org_id = {org:String};

CREATE OR REPLACE VIEW {db}.analytics_webhook_attempts AS
SELECT message_id, token_id, seq, status, attempt, outcome, response_status, latency_ms, error, url, at
FROM {db}.dlr_attempts FINAL
WHERE org_id = {org:String};

CREATE OR REPLACE VIEW {db}.analytics_lookups AS
SELECT
  id, project_id, token_id, source, status, status_code, country, recipient, normalized_to, subscriber_status,
  network, ported, roaming, charged, toDecimal64(price_micros, 6) / 1000000 AS price, currency, created_at, delivered_at
FROM {db}.lookups FINAL
WHERE org_id = {org:String};

CREATE OR REPLACE VIEW {db}.analytics_contacts AS
SELECT
  project_id, user_id, datasource_ids, first_name, last_name, email, phone_mobile, country_code, tags, client_tags,
  is_subscribed_sms, date_birthday, date_imported, geo_lat, geo_lon,
  attrs_string AS attributes_string, attrs_number AS attributes_number, attrs_bool AS attributes_bool,
  attrs_date AS attributes_date, attrs_array AS attributes_array, attrs_json AS attributes_json,
  bucket, created_at, updated_at
FROM {db}.audience FINAL
WHERE has({projects:Array(String)}, project_id) AND deleted = 0;

CREATE OR REPLACE VIEW {db}.analytics_events AS
SELECT
  project_id, datasource_id, event_type, user_id, event_id, event_date, received_at, source,
  params_string, params_number, params_bool, params_date, params_array, params_json
FROM {db}.events FINAL
WHERE has({projects:Array(String)}, project_id)
