// Bound query parameters: every client value (and every custom attribute or parameter name)
// reaches ClickHouse as `{pN:Type}` plus an entry in `params`, never as text in the SQL.
export class ParamBinder {
  readonly params: Record<string, unknown> = {};
  private next = 0;

  constructor(private readonly prefix = 'b') {}

  /** Registers a value and returns its placeholder, e.g. `{b0:String}`. */
  bind(type: string, value: unknown): string {
    const name = `${this.prefix}${this.next}`;
    this.next += 1;
    this.params[name] = value;
    return `{${name}:${type}}`;
  }
}

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
