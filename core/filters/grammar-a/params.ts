// Bound query parameters: every client value reaches ClickHouse as `{pN:Type}` plus an
// entry in `params`, never as text inside the SQL string.
export class ParamBinder {
  readonly params: Record<string, unknown> = {};
  private next = 0;

  /** Registers a value and returns its placeholder, e.g. `{p0:String}`. */
  bind(type: string, value: unknown): string {
    const name = `p${this.next}`;
    this.next += 1;
    this.params[name] = value;
    return `{${name}:${type}}`;
  }
}
