// Request ids, one structured log line per request (URL with access_token redacted, never
// the Authorization header), and the request-duration histogram.
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

export function requestObservability(log: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.header('x-request-id');
    req.id = incoming && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    req.log = log.child({ requestId: req.id });
    res.setHeader('X-Request-Id', req.id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      httpRequests.observe({ method: req.method, route: `${req.baseUrl}${route}`, status: String(res.statusCode) }, seconds);
      req.log.info({ method: req.method, url: redactUrl(req.originalUrl), status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    });
    next();
  };
}
