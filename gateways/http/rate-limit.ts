// Per-organization, per-endpoint rate limit (spec 1 §8) with the X-RateLimit-* headers on
// every response; counters are shared by all replicas (stores/rate-limiter.ts).
import type { RequestHandler } from 'express';
import { AppError } from '../../core/errors';
import type { RateLimiter } from '../../stores/rate-limiter';

/** `endpoint` names the counter (e.g. `v1-sms-create`); an organization's override wins over the default. */
export function rateLimit(limiter: RateLimiter, endpoint: string, defaultPerMinute: number): RequestHandler {
  return async (req, res, next) => {
    try {
      const org = req.principal.org;
      const decision = await limiter.take(org.id, endpoint, org.rateLimits?.[endpoint] ?? defaultPerMinute);
      res.setHeader('X-RateLimit-Limit', String(decision.limit));
      res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
      res.setHeader('X-RateLimit-Reset', String(decision.reset));
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
