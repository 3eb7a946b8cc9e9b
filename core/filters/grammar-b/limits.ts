// Limits of Grammar B: spec 3 §8 where it sets them, ours where it is silent (docs/grammar-b.md).
export const FILTER_VERSION = '0.0.1';
export const DEFAULT_LIMIT = 50;
/** Spec 3 §8 leaves the maximum `limit` open. */
export const MAX_LIMIT = 1000;
export const CONTAINS_MIN = 2;
export const CONTAINS_MAX = 128;
export const TEXT_MIN = 1;
/** startswith / endswith / matches-string: §8 sets only the minimum; ours, like contains. */
export const TEXT_MAX = 256;
export const MAX_VALUES = 1000;
export const MAX_NODES = 500;
export const MAX_NESTING = 16;
export const SEGMENT_MAX_DEPTH = 4;
/** Bucket numbers (spec 3 §8): `_bucket` conditions and the filterBucket* restrictions. */
export const BUCKET_MAX = 199;
/** §8 "default 1 to 5 minutes": ours is 5, renewed with every page. */
export const CURSOR_TTL_MS = 5 * 60_000;
export const CUSTOM_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/**
 * The compiled WHERE of a search, in characters (its text is identifiers and placeholders only,
 * so characters are bytes): below ClickHouse's max_query_size (262,144 bytes, the whole
 * statement) with room for the rest of the statement. Values are bound parameters and do not
 * count; nodes and expanded segments do.
 */
export const MAX_FILTER_SQL_CHARS = 200_000;
/**
 * The bound values of a search, URL-encoded: a ClickHouse server receives them as `param_*`
 * in the request URL, which it takes up to 1 MiB (http_max_uri_size); chdb binds them without
 * a limit, and the same rule holds for both.
 */
export const MAX_BOUND_VALUES_BYTES = 786_432;
/** The cost ceiling of every statement of a search (ClickHouse settings, per statement). */
export const QUERY_MAX_EXECUTION_SECONDS = 5;
export const QUERY_MAX_ROWS_TO_READ = 50_000_000;
export const QUERY_MAX_MEMORY_BYTES = 1_073_741_824;
/** Searches of one organization running at once in one gateway process; beyond, a 429. */
export const SEARCHES_IN_FLIGHT_PER_ORG = 2;
