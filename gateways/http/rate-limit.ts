// Per-organization, per-endpoint rate limit (spec 1 §8) with the X-RateLimit-* headers on
// every response; counters are shared by all replicas (stores/rate-limiter.ts). Responses no
// endpoint counter covers (failed authentication, unknown routes, 405, 415, malformed
// requests, ops endpoints, the HTTP parser's own refusals) carry the headers of a
// per-client-address counter of failed requests instead (docs/decisions.md).
import type { ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../core/errors';
import type { RateLimits } from '../../core/accounts';

/** The endpoints of the SMS APIs that have a counter; a counter is `<api>-<endpoint>`. */
export const SMS_RATE_LIMIT_ENDPOINTS = [
  'sms-create', 'sms-bulk', 'sms-read', 'sms-list', 'lookup-create', 'lookup-read', 'lookup-list', 'balance', 'sms-prices', 'lookup-prices',
  'sms-stats', 'lookup-stats', 'sms-quote', 'sms-cancel',
] as const;
export type SmsRateLimitEndpoint = (typeof SMS_RATE_LIMIT_ENDPOINTS)[number];
export const SMS_RATE_LIMIT_APIS = ['v1', 'legacy'] as const;

/** Every counter name an organization can be granted its own ceiling for (`admin org rate-limit`). */
/** The audience API's counters (per organization, gateways/http/audience-api.ts). */
export const AUDIENCE_RATE_LIMIT_COUNTERS = ['audience-search', 'audience-segments'] as const;
/** The opt-out list's counters (per organization, gateways/http/opt-outs-api.ts; SMS API v1 only). */
export const OPT_OUT_RATE_LIMIT_COUNTERS = ['v1-opt-outs-list', 'v1-opt-outs-create', 'v1-opt-outs-delete'] as const;
export type OptOutRateLimitCounter = (typeof OPT_OUT_RATE_LIMIT_COUNTERS)[number];
export const RATE_LIMIT_COUNTERS: readonly string[] = [...SMS_RATE_LIMIT_APIS.flatMap((api) => SMS_RATE_LIMIT_ENDPOINTS.map((e) => `${api}-${e}`)), ...AUDIENCE_RATE_LIMIT_COUNTERS, ...OPT_OUT_RATE_LIMIT_COUNTERS];

export function isRateLimitCounter(name: string): boolean {
  return RATE_LIMIT_COUNTERS.includes(name);
}

interface WindowDecision {
  readonly limit: number;
  readonly remaining: number;
  /** Unix time (seconds) of the end of the window. */
  readonly reset: number;
}

const WINDOW_MS = 60_000;
const MAX_TRACKED_ADDRESSES = 10_000;

/**
 * Failed requests per client address, in fixed one-minute windows, in this process (an
 * address has no organization to share a counter with). Authentication refuses an address
 * beyond the limit with 429, so tokens cannot be guessed at line rate.
 */
export class AddressCounter {
  private readonly counts = new Map<string, { windowStart: number; count: number }>();

  constructor(readonly limitPerMinute: number, private readonly clock: () => number = Date.now) {}

  /** Counts one failed request of `address` when `failed`, and returns the window's state. */
  note(address: string | undefined, failed: boolean): WindowDecision & { readonly exceeded: boolean } {
    const now = this.clock();
    const windowStart = now - (now % WINDOW_MS);
    const key = address ?? 'unknown';
    const entry = this.counts.get(key);
    const current = entry && entry.windowStart === windowStart ? entry : { windowStart, count: 0 };
    if (failed) {
      current.count += 1;
      if (this.counts.size >= MAX_TRACKED_ADDRESSES && !this.counts.has(key)) this.counts.clear();
      this.counts.set(key, current);
    }
    return {
      limit: this.limitPerMinute,
      remaining: Math.max(0, this.limitPerMinute - current.count),
      reset: (windowStart + WINDOW_MS) / 1000,
      exceeded: current.count > this.limitPerMinute,
    };
  }
}

const counters = new WeakMap<Express, AddressCounter>();

/** The address counter of an app, for the server-level handlers (gateways/http/server.ts). */
export function bindAddressCounter(app: Express, counter: AddressCounter): void {
  counters.set(app, counter);
}

export function addressCounterOf(app: Express): AddressCounter | undefined {
  return counters.get(app);
}

export function rateLimitHeaderValues(d: WindowDecision): Record<string, string> {
  return { 'X-RateLimit-Limit': String(d.limit), 'X-RateLimit-Remaining': String(d.remaining), 'X-RateLimit-Reset': String(d.reset) };
}

function setRateLimitHeaders(res: Response | ServerResponse, d: WindowDecision): void {
  res.setHeader('X-RateLimit-Limit', String(d.limit));
  res.setHeader('X-RateLimit-Remaining', String(d.remaining));
  res.setHeader('X-RateLimit-Reset', String(d.reset));
}

/** Marks a response for the address counter's headers (set by the middleware, read when its head is written). */
const COUNTED = Symbol('rate-limit headers on this response');

type CountedResponse = ServerResponse & { [COUNTED]?: AddressCounter; req: { ip?: string } };

function hasRateLimitHeader(headers: unknown): boolean {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return false;
  for (const k in headers) if (k.toLowerCase() === 'x-ratelimit-limit') return true;
  return false;
}

const hooked = new WeakSet<object>();

/**
 * spec 1 §8 "on every response": whatever answers (a router, the 404 fallback, Express's
 * automatic OPTIONS, the error handler), a response that no endpoint counter has marked gets the
 * address counter's headers when its head is written. A failed response (≥ 400) counts.
 * Node writes the head through writeHead, also implicitly from end(); the app's response
 * prototype carries the hook once (no closure per request): the middleware only marks the
 * responses it covers (those of the routers mounted after it).
 */
export function rateLimitHeadersOnEveryResponse(app: Express, counter: AddressCounter): RequestHandler {
  const proto = app.response as unknown as ServerResponse;
  if (!hooked.has(proto)) {
    hooked.add(proto);
    const writeHead = proto.writeHead;
    proto.writeHead = function writeHeadWithRateLimit(this: CountedResponse, statusCode: number, a?: unknown, b?: unknown) {
      const marked = this[COUNTED];
      if (marked && !this.hasHeader('X-RateLimit-Limit') && !hasRateLimitHeader(a) && !hasRateLimitHeader(b)) {
        setRateLimitHeaders(this, marked.note(this.req.ip, statusCode >= 400));
      }
      // eslint-disable-next-line prefer-rest-params
      return (writeHead as (...args: unknown[]) => ServerResponse).apply(this, arguments as unknown as unknown[]);
    } as typeof proto.writeHead;
  }
  return (_req, res, next) => {
    (res as unknown as CountedResponse)[COUNTED] = counter;
    next();
  };
}

/** Who a counter belongs to: its id, and the per-endpoint ceilings granted to it. */
export interface RateScope {
  readonly id: string;
  readonly rateLimits?: Readonly<Record<string, number>>;
}

/**
 * `endpoint` names the counter (e.g. `v1-sms-create`); its owner's override wins over the
 * default. Counters belong to the organization (spec 1 §8) unless `scopeOf` says otherwise
 * (the ingestion API counts per datasource, spec 2 §8).
 */
export function rateLimit(limiter: RateLimits, endpoint: string, defaultPerMinute: number, scopeOf: (req: Request) => RateScope = (req) => req.principal.org): RequestHandler {
  return async (req, res, next) => {
    try {
      const scope = scopeOf(req);
      const decision = await limiter.take(scope.id, endpoint, scope.rateLimits?.[endpoint] ?? defaultPerMinute);
      setRateLimitHeaders(res, decision);
      if (!decision.allowed) {
        res.setHeader('Retry-After', String(Math.max(1, decision.reset - Math.floor(Date.now() / 1000))));
        throw new AppError('RATE_LIMITED', `rate limit of ${decision.limit} requests per minute reached for ${endpoint}; retry after X-RateLimit-Reset`);
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Seconds a request refused by an in-flight bound is told to wait: the bounded requests mostly take well under one. */
const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/**
 * At most `limit` requests of one key (an organization) at once, in this process, for requests
 * that hold the engine (audience searches, analysts' SQL): beyond, a 429 with Retry-After, so
 * that one organization cannot hold the engine for every other one.
 */
export class InFlight {
  private readonly running = new Map<string, number>();

  /** `what`: the requests counted, plural, as the 429 names them (e.g. `audience searches`). */
  constructor(readonly limit: number, private readonly what: string) {}

  /**
   * Takes a slot of `key` and returns its release (idempotent); when all are taken, sets
   * Retry-After on `res` and throws RATE_LIMITED.
   */
  take(key: string, res: Response): () => void {
    const n = this.running.get(key) ?? 0;
    if (n >= this.limit) {
      res.setHeader('Retry-After', String(IN_FLIGHT_RETRY_AFTER_SECONDS));
      throw new AppError('RATE_LIMITED', `this organization already runs ${this.limit} ${this.what}, the most it may run at once; retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} s (Retry-After)`);
    }
    this.running.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left <= 0) this.running.delete(key);
      else this.running.set(key, left);
    };
  }
}
