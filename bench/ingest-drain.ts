// When bench:ingest's load phase is over for the writer (bench/ingest.ts): every accepted item
// applied. Pure over its inputs (the metrics reader, the clock, the wait) so it can be tested.

export interface WriterState {
  /** Stream messages the writer has applied so far (`ingest_visibility_seconds_count`). */
  readonly applied: number;
  /** The gateway's `ingest_lag_seconds`: age of its oldest published message not applied yet; 0 when everything is applied. */
  readonly lag: number;
}

export interface DrainOptions {
  /** How long the applied count must stay unchanged, with no lag, to call the writer drained. */
  readonly quietMs?: number;
  readonly pollMs?: number;
  /** Gives up when nothing was applied for this long while the lag says messages are waiting. */
  readonly stuckMs?: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Waits until the writer has applied everything: the lag gauge reads 0 and the applied count
 * has not grown for `quietMs`. Returns when the count last grew. A quiet count alone is not
 * enough: one write of a full run (50,000 contacts) can take longer than 2 s, and a phase that
 * ended there left a backlog the next phase met as 429s.
 */
export async function drainWriter(read: () => Promise<WriterState>, options: DrainOptions = {}): Promise<number> {
  const { quietMs = 2000, pollMs = 100, stuckMs = 120_000, now = () => performance.now(), sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) } = options;
  let last = (await read()).applied;
  let changedAt = now();
  for (;;) {
    await sleep(pollMs);
    const state = await read();
    if (state.applied !== last) {
      last = state.applied;
      changedAt = now();
    } else if (now() - changedAt >= quietMs) {
      if (state.lag === 0) return changedAt;
      if (now() - changedAt >= stuckMs) throw new Error(`the ingest writer applied nothing for ${stuckMs} ms while ${state.lag} s behind`);
    }
  }
}
