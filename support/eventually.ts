// The one polling helper of the test suites: waits for a condition, never for a fixed time.
// The stack is asynchronous (JetStream consumers, Temporal workflows, KV-watch mirrors), so a
// test waits until what it needs is observable; a test that must show something did NOT
// happen waits until the system has observably processed past the point where it would have
// happened (a later stream sequence applied, a consumer's ack floor, a workflow query), then
// asserts.

export interface EventuallyOptions<T> {
  /** What is awaited, named in the timeout's error. */
  readonly what: string;
  /** Give up after this long (default 20 s: the test machine is loaded). */
  readonly timeoutMs?: number;
  /** Between attempts (default 50 ms). */
  readonly intervalMs?: number;
  /** The returned value must satisfy this too (default: anything but `false`). */
  readonly until?: (value: T) => boolean;
}

/**
 * Calls `probe` until it passes, and returns what it returned when it did. It passes when it
 * neither throws nor rejects and its value is not `false` (so an assertion, a boolean check and
 * a read all work), and satisfies `until` when that is given. After `timeoutMs` it throws an
 * error naming `what`, with the last failure (the assertion's message, or the last value).
 */
export async function eventually<T>(probe: () => T | Promise<T>, options: EventuallyOptions<T>): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let failure: string;
    let cause: unknown;
    try {
      const value = await probe();
      if (value !== false && (options.until === undefined || options.until(value))) return value;
      failure = `last value ${describe(value)}`;
    } catch (err) {
      cause = err;
      failure = `last failure: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what}; ${failure}`, { cause });
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function describe(value: unknown): string {
  let text: string;
  try { text = JSON.stringify(value) ?? String(value); } catch { text = String(value); }
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

/**
 * Waits until this machine's clock is past the instant `at` (an ISO date or epoch ms), e.g. a
 * record's createdAt, so that what is created next gets a later millisecond and a newest-first
 * order is strict. The stack runs on this machine's clock.
 */
export async function clockPast(at: string | number): Promise<void> {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  if (Number.isNaN(ms)) throw new Error(`clockPast: not an instant: ${String(at)}`);
  await eventually(() => Date.now() > ms, { what: `the clock past ${new Date(ms).toISOString()}`, intervalMs: 1 });
}
