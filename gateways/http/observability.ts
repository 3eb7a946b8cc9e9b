// Request ids, one structured log line per request (URL with access_token redacted, never
// the Authorization header), and the request-duration histogram, labelled by route pattern
// (`unmatched` for a request no route serves, so labels stay few whatever clients send).
import type { RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import { redactUrl, type Logger } from '../../infra/logger';
import { httpRequests } from '../../infra/metrics';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

/** The route pattern serving `method` on a raw `path` (gateways/http/routes.ts), if any. */
export type RouteLabel = (method: string, path: string) => string | undefined;

export function requestObservability(log: Logger, routeLabel?: RouteLabel): RequestHandler {
  return (req, res, next) => {
    const incoming = req.header('x-request-id');
    req.id = incoming && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    req.log = log.child({ requestId: req.id });
    res.setHeader('X-Request-Id', req.id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // From the original URL: routers rewrite req.url and req.baseUrl while they run, and an
      // error leaving a router restores baseUrl but not req.route (`/transactional/v1unmatched`).
      const path = req.originalUrl.split('?')[0] ?? '/';
      const route = routeLabel?.(req.method, path) ?? 'unmatched';
      httpRequests.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      req.log.info({ method: req.method, url: redactUrl(req.originalUrl), status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    });
    next();
  };
}
