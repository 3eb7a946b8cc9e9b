// The SQL context every Grammar B condition compiles against. The binder (bound query
// parameters, never client text in the SQL) is core/filters/params.ts, shared with Grammar A.
import type { ParamBinder } from '../params';

/** What every condition compiles against: the binder and the placeholders bound once. */
export interface SqlContext {
  readonly binder: ParamBinder;
  /** `{…:String}`: the project timezone (IANA name). */
  readonly tz: string;
  /** A DateTime64(3) expression of "now" in the project timezone. */
  readonly now: string;
  /** `{…:String}`: the project every query and subquery is scoped to. */
  readonly project: string;
  /** Fully qualified table names (catalogued identifiers, never client text). */
  readonly tables: Tables;
}

export interface Tables {
  readonly audience: string;
  readonly events: string;
}

export function sqlContext(binder: ParamBinder, tables: Tables, project: string, timezone: string, now: Date): SqlContext {
  const tz = binder.bind('String', timezone);
  return { binder, tables, tz, project: binder.bind('String', project), now: `toTimeZone(fromUnixTimestamp64Milli(${binder.bind('Int64', now.getTime())}, 'UTC'), ${tz})` };
}
