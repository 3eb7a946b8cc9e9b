// The ceilings of every analytics query (docs/analytics.md "Ceilings"), and the ClickHouse error
// types that say a query went beyond one: the store maps the typed error to the ceiling's name.

export interface AnalyticsCeilings {
  readonly maxExecutionSeconds: number;
  readonly maxRowsToRead: number;
  readonly maxBytesToRead: number;
  readonly maxResultRows: number;
  readonly maxResultBytes: number;
  readonly maxMemoryBytes: number;
}

export const DEFAULT_ANALYTICS_CEILINGS: AnalyticsCeilings = {
  maxExecutionSeconds: 10,
  maxRowsToRead: 100_000_000,
  maxBytesToRead: 10 * 1024 ** 3,
  maxResultRows: 100_000,
  maxResultBytes: 64 * 1024 ** 2,
  maxMemoryBytes: 1024 ** 3,
};

/** The longest query text taken, in characters (ClickHouse's max_query_size is 256 KiB for the whole statement). */
export const MAX_QUERY_CHARS = 100_000;

/** Analytics queries one organization may run at once in one gateway process; beyond, a 429. */
export const ANALYTICS_IN_FLIGHT_PER_ORG = 2;

export const OUTPUT_FORMATS = {
  JSON: 'application/json; charset=utf-8',
  JSONEachRow: 'application/x-ndjson; charset=utf-8',
  CSV: 'text/csv; charset=utf-8',
  Parquet: 'application/vnd.apache.parquet',
} as const;
export type OutputFormat = keyof typeof OUTPUT_FORMATS;

const n = (v: number): string => v.toLocaleString('en');

/** ClickHouse error type → the ceiling it reports, named as the setting with its value. */
export const CEILING_OF_ERROR: Readonly<Record<string, (c: AnalyticsCeilings) => string>> = {
  TIMEOUT_EXCEEDED: (c) => `max_execution_time (${c.maxExecutionSeconds} s)`,
  TOO_SLOW: (c) => `max_execution_time (${c.maxExecutionSeconds} s, estimated)`,
  TOO_MANY_ROWS: (c) => `max_rows_to_read (${n(c.maxRowsToRead)} rows)`,
  TOO_MANY_BYTES: (c) => `max_bytes_to_read (${n(c.maxBytesToRead)} bytes)`,
  TOO_MANY_ROWS_OR_BYTES: (c) => `max_result_rows (${n(c.maxResultRows)} rows) or max_result_bytes (${n(c.maxResultBytes)} bytes)`,
  MEMORY_LIMIT_EXCEEDED: (c) => `max_memory_usage (${n(c.maxMemoryBytes)} bytes)`,
};

/** The SETTINGS clause of every analytics query: the ceilings, then readonly (last: it forbids changing settings after it). */
export function ceilingSettings(c: AnalyticsCeilings): string {
  const whole = (v: number, name: string): number => {
    if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`${name} must be a positive integer, got ${v}`);
    return v;
  };
  return [
    `max_execution_time = ${whole(c.maxExecutionSeconds, 'maxExecutionSeconds')}`,
    `max_rows_to_read = ${whole(c.maxRowsToRead, 'maxRowsToRead')}`,
    `max_bytes_to_read = ${whole(c.maxBytesToRead, 'maxBytesToRead')}`,
    `max_result_rows = ${whole(c.maxResultRows, 'maxResultRows')}`,
    `max_result_bytes = ${whole(c.maxResultBytes, 'maxResultBytes')}`,
    `result_overflow_mode = 'throw'`,
    `read_overflow_mode = 'throw'`,
    `timeout_overflow_mode = 'throw'`,
    `max_memory_usage = ${whole(c.maxMemoryBytes, 'maxMemoryBytes')}`,
    // 64-bit integers as JSON strings, as a ClickHouse server does by default (chdb does not): exact beyond 2^53.
    'output_format_json_quote_64bit_integers = 1',
  ].join(', ');
}
