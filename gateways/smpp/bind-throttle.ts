// Failed binds throttled per system_id and per peer address (docs/smpp.md "Failed binds"): a
// key (one system_id, one address) with `max` failed binds within the window is locked out for
// the lockout time. While locked, every bind touching the key is refused before its password is
// read (no scrypt, so a flood costs no CPU), a correct password included, and the lockout ends
// by itself. Password checks of one key run at most `max - failures` at a time, so a burst of
// parallel binds cannot start more scrypts than the key has failures left. Per process, in
// memory; the clock is injected (tests drive it without sleeping).

/** Time as the throttle sees it: milliseconds, and a delay (the answer to a throttled bind). */
export interface BindClock {
  now(): number;
  delay(ms: number): Promise<void>;
}

export const SYSTEM_CLOCK: BindClock = {
  now: () => performance.now(),
  delay: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface BindThrottleOptions {
  /** Failed binds are counted over this sliding window. */
  readonly bindFailureWindowMs: number;
  /** Failed binds of one system_id within the window that lock it out; 0: not counted. */
  readonly maxBindFailuresPerSystemId: number;
  /** Failed binds from one peer address within the window that lock it out; 0: not counted. */
  readonly maxBindFailuresPerAddress: number;
  /** How long a lockout lasts. */
  readonly bindLockoutMs: number;
  /** The answer to a bind refused by a lockout, or to the failure that starts one, waits this long. */
  readonly bindRefusalDelayMs: number;
}

export type ThrottleScope = 'system_id' | 'address';

/** Who is binding: the system_id asked for and the peer address it comes from. */
export interface BindSubject {
  readonly systemId: string;
  readonly address: string;
}

export interface Lockout {
  readonly scope: ThrottleScope;
  /** Milliseconds until it ends. */
  readonly remainingMs: number;
}

export type Admission = { readonly kind: 'admitted'; release(): void } | ({ readonly kind: 'locked' } & Lockout);

interface KeyState {
  readonly scope: ThrottleScope;
  readonly max: number;
  /** Times of the failures within the window, oldest first. */
  failures: number[];
  lockedUntil: number;
  /** Password checks running for this key. */
  active: number;
  readonly waiters: Array<() => void>;
}

/** Keys kept at most; beyond, idle ones are dropped first, then the oldest. */
const MAX_KEYS = 100_000;

export class BindThrottle {
  private readonly keys = new Map<string, KeyState>();

  constructor(private readonly options: BindThrottleOptions, readonly clock: BindClock = SYSTEM_CLOCK) {}

  /** The lockout refusing this subject now (system_id first), or undefined. */
  lockedOut(subject: BindSubject): Lockout | undefined {
    const now = this.clock.now();
    for (const key of this.keysOf(subject)) {
      const state = this.keys.get(key);
      if (state && state.lockedUntil > now) return { scope: state.scope, remainingMs: state.lockedUntil - now };
    }
    return undefined;
  }

  /**
   * Waits until a password check of this subject may run (every key below its failures left)
   * and takes its slots; `locked` when a lockout started meanwhile. Call release() once the
   * check is done and recorded.
   */
  async admit(subject: BindSubject): Promise<Admission> {
    for (;;) {
      const locked = this.lockedOut(subject);
      if (locked) return { kind: 'locked', ...locked };
      const states = this.keysOf(subject).map((key) => this.state(key, subject));
      const now = this.clock.now();
      const busy = states.find((s) => s.active >= Math.max(1, s.max - this.recent(s, now)));
      if (!busy) {
        for (const s of states) s.active++;
        let released = false;
        return {
          kind: 'admitted',
          release: () => {
            if (released) return;
            released = true;
            for (const s of states) {
              s.active--;
              // Every waiter looks again: a failure may have locked the key, a success freed it.
              for (const wake of s.waiters.splice(0)) wake();
            }
            this.tidy(this.keysOf(subject));
          },
        };
      }
      await new Promise<void>((resolve) => busy.waiters.push(resolve));
    }
  }

  /**
   * A bind refused for its credentials: counted against the address, and against the system_id
   * when it names an account (`knownSystemId`). Returns the scopes this failure locked out.
   */
  failed(subject: BindSubject, knownSystemId: boolean): ThrottleScope[] {
    const now = this.clock.now();
    const started: ThrottleScope[] = [];
    for (const key of this.keysOf(subject)) {
      const state = this.state(key, subject);
      if (state.scope === 'system_id' && !knownSystemId) continue;
      this.recent(state, now);
      state.failures.push(now);
      if (state.failures.length >= state.max && state.lockedUntil <= now) {
        state.lockedUntil = now + this.options.bindLockoutMs;
        // A new window starts after the lockout: the failures that caused it are spent.
        state.failures = [];
        started.push(state.scope);
      }
    }
    this.tidy(this.keysOf(subject));
    return started;
  }

  /** A bind whose password was right: the system_id's failures are forgotten (not the address's, which may be trying other accounts). */
  succeeded(subject: BindSubject): void {
    const state = this.keys.get(systemIdKey(subject.systemId));
    if (state) state.failures = [];
  }

  /** Keys tracked now (tests: nothing is kept for a subject that never failed). */
  get size(): number {
    return this.keys.size;
  }

  private keysOf(subject: BindSubject): string[] {
    const keys: string[] = [];
    if (this.options.maxBindFailuresPerSystemId > 0) keys.push(systemIdKey(subject.systemId));
    if (this.options.maxBindFailuresPerAddress > 0) keys.push(`address:${subject.address}`);
    return keys;
  }

  private state(key: string, subject: BindSubject): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      const scope: ThrottleScope = key === systemIdKey(subject.systemId) ? 'system_id' : 'address';
      const max = scope === 'system_id' ? this.options.maxBindFailuresPerSystemId : this.options.maxBindFailuresPerAddress;
      state = { scope, max, failures: [], lockedUntil: 0, active: 0, waiters: [] };
      this.keys.set(key, state);
    }
    return state;
  }

  /** Drops the failures older than the window; returns how many are left. */
  private recent(state: KeyState, now: number): number {
    const from = now - this.options.bindFailureWindowMs;
    let drop = 0;
    while (drop < state.failures.length && (state.failures[drop] ?? now) <= from) drop++;
    if (drop > 0) state.failures.splice(0, drop);
    return state.failures.length;
  }

  /** Forgets these keys when they hold nothing (no recent failure, no lockout, no check running); over MAX_KEYS, sweeps them all. */
  private tidy(keys: readonly string[]): void {
    const now = this.clock.now();
    const idle = (s: KeyState): boolean => s.active === 0 && s.waiters.length === 0 && s.lockedUntil <= now && this.recent(s, now) === 0;
    for (const key of keys) {
      const state = this.keys.get(key);
      if (state && idle(state)) this.keys.delete(key);
    }
    if (this.keys.size <= MAX_KEYS) return;
    for (const [key, state] of this.keys) if (idle(state)) this.keys.delete(key);
    // Still too many (failures from that many addresses): the oldest go first, down to 90 % so the sweep is rare.
    for (const [key, state] of this.keys) {
      if (this.keys.size <= MAX_KEYS * 0.9) break;
      if (state.active === 0 && state.waiters.length === 0) this.keys.delete(key);
    }
  }
}

const systemIdKey = (systemId: string): string => `system_id:${systemId}`;
