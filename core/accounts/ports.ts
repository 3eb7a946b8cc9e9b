// What the gateways need from accounts, balances and rate limits, as interfaces: the
// NATS-backed stores (stores/account-directory.ts, balance-ledger.ts, rate-limiter.ts)
// implement them; HTTP handlers take these, never the stores.
import type { Balance, Price, PriceKind, Principal } from './types';

export interface Authenticator {
  /** The principal of a token value, or undefined when it is unknown or revoked. */
  authenticate(value: string): Principal | undefined;
}

export interface PriceList {
  prices(orgId: string, kind: PriceKind): Price[];
}

export interface BalanceReader {
  get(orgId: string): Promise<Balance | null>;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Unix time (seconds) at which the window resets. */
  readonly reset: number;
}

/** Fixed-window counters shared by every replica. */
export interface RateLimits {
  /** Counts one request of `scope` on `endpoint` against `limit` per window. */
  take(scope: string, endpoint: string, limit: number): Promise<RateDecision>;
}
