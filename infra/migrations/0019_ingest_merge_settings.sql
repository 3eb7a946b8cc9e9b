-- Fewer background merges for the ingested events (spec 2 §2): each ingest writer run inserts
-- one part into events (and event_keys through its view), up to 50,000 rows, and merges
-- rewrite every row again at each level of the merge tree. merge_selector_base (ClickHouse's
-- default 5) is the tree's fan-out: a range of parts is merged when it sums to about `base`
-- times its largest part, so a row is rewritten about log_base(parts) times. At 20 that is
-- about half as often (ln 5 / ln 20). The price is more active parts between merges (up to
-- ~19 per level instead of ~4), which FINAL reads and the writer's event-id lookup walk:
-- measured on embedded chdb, the 20,000-id lookup cost the same with 14 parts as with 4.
-- ds_contacts and audience keep the default: their merges were ~0-1 ms CPU per 1,000 contacts
-- in bench:ingest, and the audience search reads them with FINAL. parts_to_delay_insert and
-- parts_to_throw_insert stay at their defaults (1,000 / 3,000 parts), far above this.
ALTER TABLE {db}.events MODIFY SETTING merge_selector_base = 20;
ALTER TABLE {db}.event_keys MODIFY SETTING merge_selector_base = 20
