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
/** §8 "default 1 to 5 minutes": ours is 5, renewed with every page. */
export const CURSOR_TTL_MS = 5 * 60_000;
export const CUSTOM_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
