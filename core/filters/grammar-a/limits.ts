// Size limits of Grammar A (spec 3 §8 leaves them open; see docs/grammar-a.md).
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;
/** Conditions (leaves) in one query, both forms. */
export const MAX_CONDITIONS = 200;
/** Values in one list, range or string-array condition. */
export const MAX_LIST_VALUES = 1000;
/** Nesting depth of `and`/`or` groups in the JSON form (the root filter array is depth 1). */
export const MAX_DEPTH = 8;
