// When a child of `npm start` that exits on its own is started again, and when the stack gives
// up on it (infra/supervisor.ts for the engines, infra/role-processes.ts for the role
// processes). Pure: the callers pass how long the child ran, this answers what to do next.
//
// The delay doubles from `initialDelayMs` with each exit in a row, up to `maxDelayMs`. An exit
// of a child that ran at least `stableMs` is the first of a new row (it ran fine, then failed
// once: started again after the first delay). A child that exited `giveUpAfter` times in a row,
// each time within `stableMs` of its (re)start, is not started again: the caller stops the stack.

export interface RestartPolicy {
  /** Wait before the first restart of a row. */
  readonly initialDelayMs: number;
  /** The doubling stops here. */
  readonly maxDelayMs: number;
  /** A child that ran this long before it exited starts a new row (the delays start over). */
  readonly stableMs: number;
  /** Restarts in a row (each child exiting within `stableMs`) after which the caller gives up. */
  readonly giveUpAfter: number;
}

/** 0.5 s doubling to 30 s; a minute up resets it; 8 restarts in a row (~92 s of waits) and the stack stops. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 30_000, stableMs: 60_000, giveUpAfter: 8 };

/** What a caller keeps between exits of one child: the exits in the current row (0: none yet). */
export interface RestartState {
  readonly exitsInRow: number;
}

export const INITIAL_RESTART_STATE: RestartState = { exitsInRow: 0 };

export type RestartDecision =
  /** Start it again after `delayMs`; `attempt` counts the restarts of this row (1, 2, …). */
  | { readonly action: 'restart'; readonly delayMs: number; readonly attempt: number; readonly state: RestartState }
  /** `restarts` restarts in a row each exited within `stableMs` of its start: stop the stack. */
  | { readonly action: 'give-up'; readonly restarts: number; readonly state: RestartState };

/** The wait before restart number `attempt` (1-based) of a row. */
export function restartDelay(attempt: number, policy: RestartPolicy): number {
  const doublings = Math.max(0, attempt - 1);
  // 2^doublings overflows to Infinity long after the cap: min keeps it bounded.
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(doublings, 60));
}

/**
 * A child exited on its own after running `ranMs` (from its spawn: a child that failed to come
 * up again ran briefly). Answers whether to start it again, after how long, or to give up.
 */
export function decideRestart(state: RestartState, ranMs: number, policy: RestartPolicy): RestartDecision {
  const exitsInRow = ranMs >= policy.stableMs ? 1 : state.exitsInRow + 1;
  const next: RestartState = { exitsInRow };
  if (exitsInRow > policy.giveUpAfter) return { action: 'give-up', restarts: exitsInRow - 1, state: next };
  return { action: 'restart', delayMs: restartDelay(exitsInRow, policy), attempt: exitsInRow, state: next };
}

/** The give-up's first sentence for `what` (e.g. "the embedded nats-server"), which the caller completes with what to check. */
export function giveUpMessage(what: string, restarts: number, policy: RestartPolicy, lastExit: string): string {
  return `${what} keeps exiting: it was started again ${restarts} ${restarts === 1 ? 'time' : 'times'} in a row and exited each time within ${Math.round(policy.stableMs / 1000)} s (last: ${lastExit}); not starting it again, stopping.`;
}
