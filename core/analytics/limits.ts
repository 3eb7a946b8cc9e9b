// The ceilings of every analytics query (docs/analytics.md "Ceilings"); stores/query-ceilings.ts
// writes them into the statement and names the one a ClickHouse error reports.

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
