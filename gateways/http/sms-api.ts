// SMS API v1 (spec 1 §4) and, with legacy tokens, the legacy API at the root of the host.
import { Router, type RequestHandler } from 'express';
import type { TokenKind } from '../../core/accounts/types';
import { fromMicros } from '../../core/money';
import { authenticate } from './auth';
import type { HttpDeps } from './app';
import { rateLimit } from './rate-limit';

export interface SmsApiOptions {
  readonly tokenKinds: readonly TokenKind[];
  /** v1 under /transactional/v1; legacy at the root (account-wide tokens). */
  readonly flavor: 'v1' | 'legacy';
}

export function smsApiRouter(deps: HttpDeps, options: SmsApiOptions): Router {
  const { engines, config } = deps;
  const router = Router();
  const auth = authenticate(engines.directory, options.tokenKinds, config.rateLimits.perMinute);
  const limited = (endpoint: string, perMinute = config.rateLimits.perMinute): RequestHandler[] => [auth, rateLimit(engines.rateLimiter, `${options.flavor}-${endpoint}`, perMinute)];

  router.get('/organization/account', ...limited('balance'), async (req, res) => {
    const balance = await engines.balances.get(req.principal.org.id);
    res.json({ entity: { currency: balance?.currency ?? req.principal.org.currency, available: fromMicros(balance?.availableMicros ?? 0) } });
  });

  for (const kind of ['sms', 'lookup'] as const) {
    router.get(`/${kind}/price-profile/me/countries`, ...limited(`${kind}-prices`), (req, res) => {
      const prices = engines.directory.prices(req.principal.org.id, kind);
      res.json({ entities: prices.map((p) => ({ country: p.country, currency: p.currency, price: fromMicros(p.priceMicros) })) });
    });
  }
  return router;
}
