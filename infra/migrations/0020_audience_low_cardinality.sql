-- The audience search scans the project's rows (docs/grammar-b.md, "Query plan"): every statement
-- reads project_id, and most filters compare a whole column such as country_code for every
-- contact of the project. Both repeat a few values (one project per range of the key, a few
-- dozen countries), so they are stored as dictionary indexes (LowCardinality): measured on the
-- benchmark's 1 M contacts, one part, the attribute-only count (country, tag, custom score) read
-- 51 MB instead of 68 MB and took 45 instead of 55 ms (fastest of 21). Values and their order are
-- unchanged, so every comparison, sort and JSON output is the same, and the writer's rows
-- (JSONCompactEachRow) parse into either type at the same cost (100,000 contacts in 500-row
-- inserts: 4.5 against 4.4 s CPU). Not converted: the tag and datasource lists and the attribute
-- maps' keys, which read faster the same way (the count 38 ms with them) but cost the writer
-- +20 % (lists) and +50 % (lists and map keys) CPU per insert and 2-4x per merge.
-- One ALTER, one mutation: rows written before this migration are rewritten in the background
-- and read converted until then. project_id is the sorting key's first column; String and
-- LowCardinality(String) keep the same key values and order, which ClickHouse allows to modify.
ALTER TABLE {db}.audience
  MODIFY COLUMN project_id LowCardinality(String),
  MODIFY COLUMN country_code LowCardinality(Nullable(String));

-- Migration 0017's skip indexes stay valid on the rewritten parts (one e-mail: 1 of 125 granules
-- before and after, test/integration/audience-low-cardinality.test.ts). Converting the lists and
-- map keys as well left the e-mail and phone indexes selecting every granule until CLEAR INDEX
-- and MATERIALIZE INDEX rebuilt them: a later migration that converts them must rebuild them.

-- Analysts see the documented types (core/analytics/relations.ts), not the table's: the view of
-- migration 0013 with the changed columns cast back.
CREATE OR REPLACE VIEW {db}.analytics_contacts AS
SELECT
  CAST(project_id AS String) AS project_id, user_id, datasource_ids, first_name, last_name, email, phone_mobile,
  CAST(country_code AS Nullable(String)) AS country_code, tags, client_tags,
  is_subscribed_sms, date_birthday, date_imported, geo_lat, geo_lon,
  attrs_string AS attributes_string, attrs_number AS attributes_number, attrs_bool AS attributes_bool,
  attrs_date AS attributes_date, attrs_array AS attributes_array, attrs_json AS attributes_json,
  bucket, created_at, updated_at
FROM {db}.audience FINAL
WHERE has({projects:Array(String)}, project_id) AND deleted = 0
