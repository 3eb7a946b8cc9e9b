// Per-session throughput limit: a token bucket refilled continuously at `ratePerSecond`,
// holding at most `burst` tokens. A submit_sm that finds it empty is answered ESME_RTHROTTLED.
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Takes one token; false when none is left (the caller answers ESME_RTHROTTLED). */
  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerSecond);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
