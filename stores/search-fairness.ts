// Fair share of the audience search between organizations (docs/decisions.md "audience search
// fairness between organizations"): each organization's recent search cost (the elapsed time of
// its statements, decayed with a half-life), and which organization is "heavy": over its equal
// share of the recent cost while another organization is searching too. A heavy organization's
// statements run apart, one at a time, at a lower CPU priority (stores/audience-search.ts); alone,
// an organization is never heavy, however much it searches. Pure: the clock is injected.

export interface FairnessSettings {
  /** Half-life of an organization's counted cost, in seconds (AUDIENCE_COST_HALF_LIFE_SECONDS). */
  readonly halfLifeSeconds: number;
  /** An organization with a statement running or finished within this many seconds is searching (AUDIENCE_ACTIVE_SECONDS). */
  readonly activeSeconds: number;
  /** Below this decayed cost in milliseconds an organization is never heavy (AUDIENCE_HEAVY_MIN_COST_MS). */
  readonly minCostMs: number;
}

interface Account {
  /** Decayed cost at `at`, in milliseconds of statements. */
  cost: number;
  at: number;
  /** When its last statement started or finished. */
  seen: number;
  running: number;
}

export class SearchCosts {
  private readonly accounts = new Map<string, Account>();

  constructor(private readonly settings: FairnessSettings, private readonly clock: () => number = Date.now) {
    if (!(settings.halfLifeSeconds > 0) || !(settings.activeSeconds > 0) || !(settings.minCostMs >= 0)) {
      throw new RangeError(`fairness settings out of range: ${JSON.stringify(settings)}`);
    }
  }

  private account(org: string, now: number): Account {
    let a = this.accounts.get(org);
    if (a === undefined) {
      a = { cost: 0, at: now, seen: now, running: 0 };
      this.accounts.set(org, a);
    }
    return a;
  }

  private decayed(a: Account, now: number): number {
    return a.cost * 2 ** (-(now - a.at) / (this.settings.halfLifeSeconds * 1000));
  }

  private active(a: Account, now: number): boolean {
    return a.running > 0 || now - a.seen <= this.settings.activeSeconds * 1000;
  }

  /** A statement of `org` starts: it is searching until activeSeconds after its last one ends. */
  started(org: string): void {
    const now = this.clock();
    const a = this.account(org, now);
    a.running += 1;
    a.seen = now;
  }

  /** A statement of `org` that `started` ended after `elapsedMs`. */
  finished(org: string, elapsedMs: number): void {
    const now = this.clock();
    const a = this.account(org, now);
    a.cost = this.decayed(a, now) + Math.max(0, elapsedMs);
    a.at = now;
    a.seen = now;
    a.running = Math.max(0, a.running - 1);
    this.forgetIdle(now);
  }

  /** The decayed cost of `org` now, in milliseconds. */
  cost(org: string): number {
    const a = this.accounts.get(org);
    return a === undefined ? 0 : this.decayed(a, this.clock());
  }

  /**
   * Whether `org` is over its equal share of the recent cost of the organizations searching now,
   * another one among them, and at least at minCostMs.
   */
  heavy(org: string): boolean {
    const now = this.clock();
    const mine = this.accounts.get(org);
    if (mine === undefined) return false;
    const cost = this.decayed(mine, now);
    if (cost < this.settings.minCostMs) return false;
    let others = 0;
    let total = cost;
    for (const [name, a] of this.accounts) {
      if (name === org || !this.active(a, now)) continue;
      others += 1;
      total += this.decayed(a, now);
    }
    return others > 0 && cost > total / (others + 1);
  }

  /** Organizations idle for ten half-lives (cost below 1/1000 of what it was) are dropped. */
  private forgetIdle(now: number): void {
    const idle = Math.max(this.settings.halfLifeSeconds * 10, this.settings.activeSeconds) * 1000;
    for (const [name, a] of this.accounts) {
      if (a.running === 0 && now - a.seen > idle) this.accounts.delete(name);
    }
  }
}
