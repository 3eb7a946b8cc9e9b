-- Skip indexes for the audience filter's selective conditions (docs/grammar-b.md, "Query plan"):
-- an e-mail or phone number compared exactly (matches-string), a client tag few contacts carry
-- (matches-string on _client_tags: has / hasAny / hasAll). Searches read `audience FINAL`; skip
-- indexes apply under FINAL in exact mode (use_skip_indexes_if_final_exact_mode, written in each
-- search statement's own SETTINGS), which also reads the ranges of other parts holding the keys
-- of a selected range, so a newer version that does not match never leaves an older one that
-- does as the answer. Conditions every granule satisfies (a country, a frequent tag) skip
-- nothing. No n-gram index on universal_search: at 8,192 rows per granule every 3-gram of
-- digits is in every granule, so a phone-number substring skipped nothing (measured).
-- MATERIALIZE builds them for rows written before this migration (background mutations).
ALTER TABLE {db}.audience ADD INDEX IF NOT EXISTS idx_email email TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE {db}.audience ADD INDEX IF NOT EXISTS idx_phone_mobile phone_mobile TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE {db}.audience ADD INDEX IF NOT EXISTS idx_client_tags client_tags TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE {db}.audience MATERIALIZE INDEX idx_email;
ALTER TABLE {db}.audience MATERIALIZE INDEX idx_phone_mobile;
ALTER TABLE {db}.audience MATERIALIZE INDEX idx_client_tags
