// The cost ceilings a store writes into its own statements (audience searches, delivery
// statistics, analysts' SQL), and the ClickHouse errors that report a statement went beyond one.
// In the statement's own SETTINGS, never `clickhouse_settings`: chdb applies those as a
// session-wide SET.
import { ClickHouseError } from '@clickhouse/client';

/** The ceilings of one kind of statement; the optional ones are left out of its SETTINGS when unset. */
export interface QueryCeilings {
  readonly maxExecutionSeconds: number;
  readonly maxMemoryBytes: number;
  readonly maxRowsToRead?: number;
  readonly maxBytesToRead?: number;
  readonly maxResultRows?: number;
  readonly maxResultBytes?: number;
}

const SETTING_OF: ReadonlyArray<readonly [keyof QueryCeilings, string]> = [
  ['maxExecutionSeconds', 'max_execution_time'],
  ['maxRowsToRead', 'max_rows_to_read'],
  ['maxBytesToRead', 'max_bytes_to_read'],
  ['maxResultRows', 'max_result_rows'],
  ['maxResultBytes', 'max_result_bytes'],
  ['maxMemoryBytes', 'max_memory_usage'],
];

/** `max_execution_time = 5, max_rows_to_read = ..., max_memory_usage = ...`: the ceilings set, each a positive integer. */
export function ceilingSettings(c: QueryCeilings): string {
  return SETTING_OF.filter(([key]) => c[key] !== undefined).map(([key, setting]) => {
    const v = c[key] as number;
    if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`${key} must be a positive integer, got ${v}`);
    return `${setting} = ${v}`;
  }).join(', ');
}

/**
 * The typed error ClickHouse answered with: the client's ClickHouseError, or the same class from
 * the copy of @clickhouse/client-common the embedded engine's connection carries (instanceof
 * tells them apart), recognised by its numeric `code` and its `type` name.
 */
export function clickHouseError(err: unknown): ClickHouseError | undefined {
  if (err instanceof ClickHouseError) return err;
  if (!(err instanceof Error) || err.constructor.name !== 'ClickHouseError') return undefined;
  const { code, type } = err as Error & { code?: unknown; type?: unknown };
  return typeof code === 'string' && /^\d+$/.test(code) && (type === undefined || typeof type === 'string') ? err as ClickHouseError : undefined;
}

const n = (v: number | undefined): string => (v ?? 0).toLocaleString('en');

/** The ceiling `err` reports, named as the setting with its value; undefined when it is not a ceiling's error. */
export function exceededCeiling(err: unknown, c: QueryCeilings): string | undefined {
  switch (clickHouseError(err)?.type) {
    case 'TIMEOUT_EXCEEDED': return `max_execution_time (${c.maxExecutionSeconds} s)`;
    case 'TOO_SLOW': return `max_execution_time (${c.maxExecutionSeconds} s, estimated)`;
    case 'MEMORY_LIMIT_EXCEEDED': return `max_memory_usage (${n(c.maxMemoryBytes)} bytes)`;
    case 'TOO_MANY_ROWS': return c.maxRowsToRead === undefined ? undefined : `max_rows_to_read (${n(c.maxRowsToRead)} rows)`;
    case 'TOO_MANY_BYTES': return c.maxBytesToRead === undefined ? undefined : `max_bytes_to_read (${n(c.maxBytesToRead)} bytes)`;
    case 'TOO_MANY_ROWS_OR_BYTES':
      // The result ceilings when the statement has them; else the read ceiling reports it.
      if (c.maxResultRows !== undefined) return `max_result_rows (${n(c.maxResultRows)} rows) or max_result_bytes (${n(c.maxResultBytes)} bytes)`;
      return c.maxRowsToRead === undefined ? undefined : `max_rows_to_read (${n(c.maxRowsToRead)} rows)`;
    default: return undefined;
  }
}
