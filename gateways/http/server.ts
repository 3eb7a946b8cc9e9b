// The node:http server around the Express app: timeouts so that a client that declares a body
// (or headers) and never sends it cannot hold a connection, and full responses — spec 1 §7 body,
// spec 1 §8 X-RateLimit-* headers — for what Node answers before Express sees a request:
// the HTTP parser's 400/431, the request timeout's 408, and CONNECT.
import { createServer, IncomingMessage, ServerResponse, STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { AppError, type ErrorCode } from '../../core/errors';
import { smsErrorFormat, type ErrorFormatter } from './errors';
import { AddressCounter, addressCounterOf, rateLimitHeaderValues } from './rate-limit';

export interface HttpServerOptions {
  /** All headers of a request must arrive within this time (Node default: 60 s). */
  readonly headersTimeoutMs?: number;
  /** The whole request, body included, must arrive within this time (Node default: 300 s). */
  readonly requestTimeoutMs?: number;
  readonly keepAliveTimeoutMs?: number;
  /** How often Node checks the two timeouts above (Node default: 30 s, which would stretch them). */
  readonly timeoutCheckIntervalMs?: number;
  /** Error bodies of responses written here; no path is known yet, so one format for all. */
  readonly errorFormat?: ErrorFormatter;
}

/** 10 s for headers and 30 s for a 1 MiB body (≥ 35 KB/s) are generous for a server-to-server API. */
export const HTTP_TIMEOUTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000, timeoutCheckIntervalMs: 1_000 } as const;

/** Node's error codes for what its parser and timers refuse, mapped to registry codes. */
function codeFor(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'HEADERS_TOO_LARGE';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'REQUEST_TIMEOUT';
  return 'MALFORMED_REQUEST';
}

const DETAILS: Partial<Record<ErrorCode, string>> = {
  HEADERS_TOO_LARGE: 'the request headers are too large',
  REQUEST_TIMEOUT: 'the request headers or body did not arrive in time',
  MALFORMED_REQUEST: 'the HTTP request is malformed',
  METHOD_NOT_ALLOWED: 'CONNECT is not supported by this server',
};

function rawResponse(code: ErrorCode, format: ErrorFormatter, rateHeaders: Record<string, string>, extra: Record<string, string> = {}): string {
  const { status, body } = format(new AppError(code, DETAILS[code] ?? code));
  const text = JSON.stringify(body);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    Connection: 'close',
    ...rateHeaders,
    ...extra,
  };
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n');
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}\r\n\r\n${text}`;
}

/**
 * The request and response classes of `app`: Node's own, constructed with the app's request and
 * response prototypes. Express gives every request and response those prototypes with
 * Object.setPrototypeOf as it starts handling it; done to objects Node made with its own, that
 * change of shape sent V8 off its fast paths in node:http for the rest of the request (an
 * Express endpoint mounted as ours serves half the requests a second it serves with these
 * classes: `npm run bench:express-shapes`, docs/acceptance.md, "2026-11-24 02:36–04:50 UTC"). Made with them,
 * Express's setPrototypeOf finds the prototype already in place and changes nothing.
 */
export function appMessageClasses(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  function AppRequest(this: IncomingMessage, socket: Socket): void {
    IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, req: IncomingMessage, options?: unknown): void {
    (ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: unknown) => void).call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return { IncomingMessage: AppRequest as unknown as typeof IncomingMessage, ServerResponse: AppResponse as unknown as typeof ServerResponse };
}

export function createHttpServer(app: Express, options: HttpServerOptions = {}): Server {
  const o = { ...HTTP_TIMEOUTS, ...options };
  const format = options.errorFormat ?? smsErrorFormat;
  // The app's counter, so these responses report the same window as the app's own failures.
  const counter = addressCounterOf(app) ?? new AddressCounter(6000);
  const server = createServer({
    keepAliveTimeout: o.keepAliveTimeoutMs,
    headersTimeout: o.headersTimeoutMs,
    requestTimeout: o.requestTimeoutMs,
    connectionsCheckingInterval: o.timeoutCheckIntervalMs,
    ...appMessageClasses(app),
  }, app);

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    // ECONNRESET: nobody to answer. A response already under way must not be corrupted.
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const address = (socket as Duplex & { remoteAddress?: string }).remoteAddress;
    socket.end(rawResponse(codeFor(err), format, rateLimitHeaderValues(counter.note(address, true))));
  });

  // Without a listener Node drops a CONNECT silently; this is no proxy, so it is a 405.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.end(rawResponse('METHOD_NOT_ALLOWED', format, rateLimitHeaderValues(counter.note(req.socket.remoteAddress, true)), { Allow: 'GET, HEAD, OPTIONS, POST' }));
  });

  return server;
}
