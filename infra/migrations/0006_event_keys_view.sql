-- Every stored event's key is recorded by the same INSERT that stores the event, so the
-- deduplication table can never hold an id whose event row is missing (a crash between two
-- separate inserts could otherwise drop an event on replay). Lightweight DELETEs of events
-- (contact deletion) do not touch event_keys: deduplication stays permanent.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.event_keys_mv TO {db}.event_keys AS
SELECT datasource_id, event_id, version FROM {db}.events
