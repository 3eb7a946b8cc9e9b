// Bound query parameters, shared by Grammar A (core/filters/grammar-a) and Grammar B
// (core/filters/grammar-b): every client value (and every custom attribute or parameter name)
// reaches ClickHouse as `{<prefix>N:Type}` plus an entry in `params`, never as text in the SQL.
export class ParamBinder {
  readonly params: Record<string, unknown> = {};
  private next = 0;

  /** Grammar A binds as `p0, p1, …`; Grammar B (the default) as `b0, b1, …`. */
  constructor(private readonly prefix = 'b') {}

  /** Registers a value and returns its placeholder, e.g. `{b0:String}`. */
  bind(type: string, value: unknown): string {
    const name = `${this.prefix}${this.next}`;
    this.next += 1;
    this.params[name] = value;
    return `{${name}:${type}}`;
  }
}
