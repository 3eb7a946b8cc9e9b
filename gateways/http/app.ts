// The Express application: ops endpoints, the SMS API v1 under /transactional/v1 and the
// legacy API at the root of the host (spec 1 §1, §9), with one error mapping for all.
import express, { type Express } from 'express';
import { AppError } from '../../core/errors';
import { ErrorFormats, errorHandler } from './errors';
import { routeGuard, wellFormedUrl } from './guards';
import { requestObservability } from './observability';
import { opsRouter } from './ops';
import { knownQueryParameters, postQueryNames, type PostQueryNames } from './query-guard';
import { openApiDocument } from './openapi';
import { AddressCounter, bindAddressCounter, rateLimitHeadersOnEveryResponse } from './rate-limit';
import { routePattern } from './routes';
import { smsApiRouter } from './sms-api';
import { optOutsRouter } from './opt-outs-api';
import type { HttpDeps } from './deps';
import { ingestErrorFormat, ingestRouter } from './ingest-api';
import { audienceRouter } from './audience-api';
import { analyticsRouter, type AnalyticsServices } from './analytics-api';
import { ADMIN_BASE, adminErrorFormat, adminRouter, type AdminServices } from './admin-api';
import { CONSOLE_BASE, consoleRouter } from './console/router';
import { weakEtag } from './respond';

export type { HttpDeps, HttpEngines, SmsServices } from './deps';

export const SMS_API_BASE = '/transactional/v1';

export { weakEtag } from './respond';

/**
 * `analytics`: the analysts' SQL services (POST /analytics/v1/sql, docs/analytics.md), mounted when given.
 * `admin`: the admin API at /admin/v1 (gateways/http/admin-api.ts), mounted when given (ADMIN_TOKEN set).
 */
export function createHttpApp(deps: HttpDeps & { readonly analytics?: AnalyticsServices; readonly admin?: AdminServices }): Express {
  const app = express();
  app.disable('x-powered-by');
  // X-Forwarded-For names the client (the address counters, the console sign-in throttle) only
  // from the proxies TRUST_PROXY names; by default the TCP peer is the client, so a local process
  // cannot pick its own address (config/index.ts).
  app.set('trust proxy', deps.config.http.trustProxy);
  app.set('query parser', 'extended');
  // Express's default weak ETag is a SHA-1 of every body, POST answers included; a CRC-32 with
  // the length is as good a weak validator for 304s, at a fraction of the cost.
  app.set('etag', weakEtag);
  // Failed requests per client address: the X-RateLimit-* of responses no endpoint counter covers.
  const addresses = new AddressCounter(deps.config.rateLimits.perMinute);
  bindAddressCounter(app, addresses);
  // Error bodies per API: spec 1 §7 by default; an API with its own (ingestion: spec 2 §7)
  // registers a formatter for its prefix, e.g. errorFormats.register('/ingest/v1', ingestErrorFormat).
  const errorFormats = new ErrorFormats();
  app.use(requestObservability(app, deps.log, (method, path) => routePattern(app, method, path)));
  // The console takes HTML forms and answers every path under its base itself: before the API guards.
  if (deps.console) app.use(CONSOLE_BASE, consoleRouter(deps, deps.console));
  // Generic guards for every router below, including ones mounted later (gateways/http/guards.ts).
  app.use(rateLimitHeadersOnEveryResponse(app, addresses));
  app.use(wellFormedUrl());
  // Unknown query parameters on a POST: 400 before the body is read (what each POST takes is
  // read from the served document, on the first POST with a query; the legacy API mirrors the SMS API v1).
  const document = () => openApiDocument({ ingest: deps.config.ingest.basePath, audience: deps.config.audience.basePath }, { admin: deps.admin !== undefined });
  let posts: PostQueryNames | undefined;
  const postTable = (): PostQueryNames => (posts ??= postQueryNames(document(), { [SMS_API_BASE]: '' }));
  app.use(knownQueryParameters(app, postTable));
  // A POST whose operation declares no requestBody (the cancel) takes an empty body.
  app.use(routeGuard(app, { bodyLimitBytes: deps.config.http.bodyLimitBytes, bodiless: (pattern) => postTable().bodiless.has(pattern) }));
  // The SMS API v1 first among the routers: its prefix overlaps no other router's paths, and the
  // hot endpoints then skip matching the ops, OpenAPI, ingestion and audience layers.
  app.use(SMS_API_BASE, smsApiRouter(deps, { tokenKinds: ['api_sms'], flavor: 'v1', addresses }));
  if (deps.services.optOuts) app.use(SMS_API_BASE, optOutsRouter(deps, deps.services.optOuts, { addresses }));
  app.use(opsRouter(deps.engines.probes));
  app.get('/openapi.json', (_req, res) => { res.json(document()); });
  errorFormats.register(deps.config.ingest.basePath, ingestErrorFormat);
  if (deps.ingest) {
    app.use(`${deps.config.ingest.basePath}/project/:project/datasource/:datasource`, ingestRouter(deps.ingest, {
      ratePerMinute: deps.config.ingest.ratePerMinute, maxLagSeconds: deps.config.ingest.maxLagSeconds,
      authFailuresPerMinute: addresses, deleteWaitMs: 5000,
    }));
  }
  if (deps.audience) app.use(`${deps.config.audience.basePath}/project/:project`, audienceRouter(deps.audience, { ratePerMinute: deps.config.rateLimits.perMinute, authFailuresPerMinute: addresses }));
  if (deps.analytics) app.use(analyticsRouter(deps.analytics, { ratePerMinute: deps.config.rateLimits.perMinute, authFailuresPerMinute: addresses }));
  // Off (no ADMIN_TOKEN): nothing is mounted, so every /admin path is the 404 of no route.
  errorFormats.register(ADMIN_BASE, adminErrorFormat);
  if (deps.admin) app.use(ADMIN_BASE, adminRouter(deps.admin, { failures: addresses, log: deps.log }));
  app.use('/', smsApiRouter(deps, { tokenKinds: ['legacy'], flavor: 'legacy', addresses }));
  app.use((req, _res, next) => next(new AppError('NOT_FOUND', `no route for ${req.method} ${req.path}`)));
  app.use(errorHandler(deps.log, errorFormats));
  return app;
}
