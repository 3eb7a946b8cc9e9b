// Request ids, one structured log line per request (URL with access_token redacted, never
// the Authorization header), and the request-duration histogram, labelled by route pattern
// (`unmatched` for a request no route serves, so labels stay few whatever clients send).
// Per request this costs an id, a timestamp and one listener: the request's child logger is
// made when something logs through it, and the histogram's children are kept per label set.
import type { Express, Request, RequestHandler, Response } from 'express';
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

const REQUEST_ID = /^[\w.-]{1,100}$/;
const STARTED = Symbol('request start');
const OWN_LOG = Symbol('request logger');

type Observed = Request & { [STARTED]?: bigint; [OWN_LOG]?: Logger };

/** The histogram child of each (method, route, status), so an observation hashes no labels. */
type Observer = { observe(seconds: number): void };
const observers = new Map<string, Observer>();
const MAX_OBSERVERS = 2000;

function observerFor(method: string, route: string, status: string): Observer {
  const key = `${method} ${route} ${status}`;
  let observer = observers.get(key);
  if (!observer) {
    if (observers.size >= MAX_OBSERVERS) observers.clear();
    observer = httpRequests.labels(method, route, status);
    observers.set(key, observer);
  }
  return observer;
}

export function requestObservability(app: Express, log: Logger, routeLabel?: RouteLabel): RequestHandler {
  // `req.log`: a child logger with the request id, made on first use (most requests never log
  // through it); assignable, as before.
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Observed): Logger {
      let own = this[OWN_LOG];
      if (!own) {
        own = log.child({ requestId: this.id });
        this[OWN_LOG] = own;
      }
      return own;
    },
    set(this: Observed, value: Logger) {
      this[OWN_LOG] = value;
    },
  });
  const logsRequests = log.isLevelEnabled('info');

  function finished(this: Response): void {
    const req = this.req as Observed;
    const seconds = Number(process.hrtime.bigint() - (req[STARTED] ?? 0n)) / 1e9;
    // From the original URL: routers rewrite req.url and req.baseUrl while they run, and an
    // error leaving a router restores baseUrl but not req.route (`/transactional/v1unmatched`).
    const url = req.originalUrl;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const route = routeLabel?.(req.method, path) ?? 'unmatched';
    observerFor(req.method, route, String(this.statusCode)).observe(seconds);
    if (logsRequests) req.log.info({ method: req.method, url: redactUrl(url), status: this.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
  }

  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    req.id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    (req as Observed)[STARTED] = process.hrtime.bigint();
    res.on('finish', finished);
    next();
  };
}
