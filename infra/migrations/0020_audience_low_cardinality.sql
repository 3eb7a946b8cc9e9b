-- The audience search scans the project's rows (docs/grammar-b.md, "Query plan"): every statement
-- reads project_id, and a filter reads whole columns such as country_code, client_tags and the
-- typed attribute maps for every contact of the project. Their values repeat (one project per
-- range of the key, a few dozen countries and tags, a few attribute names per project), so they
-- are stored as dictionary indexes (LowCardinality): measured on 1 M contacts, one part, the
-- attribute-only count read 28 MB instead of 68 MB, project_id 1 byte a row instead of 8
-- (bench/results/audience-2026-11-27*.json). Map keys are attribute names; the values keep
-- their types. Values and their order are unchanged, so every comparison, sort and JSON output
-- is the same; the writer's rows (JSONCompactEachRow) parse into either type.
-- One ALTER, one mutation: rows written before this migration are rewritten in the background
-- and read converted until then. project_id is the sorting key's first column; String and
-- LowCardinality(String) keep the same key values and order, which ClickHouse allows to modify.
ALTER TABLE {db}.audience
  MODIFY COLUMN project_id LowCardinality(String),
  MODIFY COLUMN datasource_ids Array(LowCardinality(String)),
  MODIFY COLUMN country_code LowCardinality(Nullable(String)),
  MODIFY COLUMN client_tags Array(LowCardinality(String)),
  MODIFY COLUMN tags Array(LowCardinality(String)),
  MODIFY COLUMN attrs_string Map(LowCardinality(String), String),
  MODIFY COLUMN attrs_number Map(LowCardinality(String), Float64),
  MODIFY COLUMN attrs_bool Map(LowCardinality(String), Bool),
  MODIFY COLUMN attrs_date Map(LowCardinality(String), DateTime64(3, 'UTC')),
  MODIFY COLUMN attrs_array Map(LowCardinality(String), Array(String)),
  MODIFY COLUMN attrs_json Map(LowCardinality(String), String);

-- Migration 0017's skip indexes, rebuilt: on parts rewritten by the ALTER above, the indexes of
-- columns it did not change (email, phone_mobile) selected every granule afterwards (measured on
-- the benchmark's 1 M contacts: 125 of 125 granules for one e-mail, 1 of 125 before; exact, but a
-- full scan), and MATERIALIZE alone keeps them as they are. CLEAR drops them, MATERIALIZE builds
-- them again from the rows (background mutations, in this order after the ALTER's).
ALTER TABLE {db}.audience CLEAR INDEX idx_email;
ALTER TABLE {db}.audience CLEAR INDEX idx_phone_mobile;
ALTER TABLE {db}.audience CLEAR INDEX idx_client_tags;
ALTER TABLE {db}.audience MATERIALIZE INDEX idx_email;
ALTER TABLE {db}.audience MATERIALIZE INDEX idx_phone_mobile;
ALTER TABLE {db}.audience MATERIALIZE INDEX idx_client_tags;

-- Analysts see the documented types (core/analytics/relations.ts), not the table's: the view of
-- migration 0013 with the changed columns cast back.
CREATE OR REPLACE VIEW {db}.analytics_contacts AS
SELECT
  CAST(project_id AS String) AS project_id, user_id, CAST(datasource_ids AS Array(String)) AS datasource_ids, first_name, last_name, email,
  phone_mobile, CAST(country_code AS Nullable(String)) AS country_code, CAST(tags AS Array(String)) AS tags,
  CAST(client_tags AS Array(String)) AS client_tags, is_subscribed_sms, date_birthday, date_imported, geo_lat, geo_lon,
  CAST(attrs_string AS Map(String, String)) AS attributes_string, CAST(attrs_number AS Map(String, Float64)) AS attributes_number,
  CAST(attrs_bool AS Map(String, Bool)) AS attributes_bool, CAST(attrs_date AS Map(String, DateTime64(3, 'UTC'))) AS attributes_date,
  CAST(attrs_array AS Map(String, Array(String))) AS attributes_array, CAST(attrs_json AS Map(String, String)) AS attributes_json,
  bucket, created_at, updated_at
FROM {db}.audience FINAL
WHERE has({projects:Array(String)}, project_id) AND deleted = 0
