// App-level guards that run before any router, for every API the app mounts: a URL must be
// well-formed (percent-encoding that decodes to UTF-8), a method the path does not take is a
// 405 with Allow, and a request body must be JSON in UTF-8 (415 otherwise) that decodes
// without repair (400). The body is parsed here, once, so no router can read it leniently.
import { isUtf8 } from 'node:buffer';
import express, { type Express, type NextFunction, type Request, type RequestHandler } from 'express';
import { AppError } from '../../core/errors';
import { pathAnswer, routePattern } from './routes';

/** A percent-escape that decodes to invalid UTF-8, or a `%` not followed by two hex digits, is a 400. */
export function wellFormedUrl(): RequestHandler {
  return (req, _res, next) => {
    // Without a `%` there is no escape to decode (the common case costs one scan).
    if (!req.originalUrl.includes('%')) {
      next();
      return;
    }
    try {
      // The whole raw target: decodeURIComponent throws URIError on any broken escape and on
      // escapes that are not UTF-8 (overlongs, lone surrogates, CESU-8), where URLSearchParams
      // and the query parser would silently substitute U+FFFD.
      decodeURIComponent(req.originalUrl);
      next();
    } catch {
      next(new AppError('MALFORMED_URL', 'the URL has a broken percent-encoding or an escape that is not UTF-8: encode the path and query as UTF-8 percent-escapes'));
    }
  };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

declare module 'express-serve-static-core' {
  interface Request {
    /** The JSON body as received (text, or bytes when body-parser read it): what JSON.parse lost is found there (numbers: core/ingest/numbers.ts). */
    rawBody?: string | Buffer;
  }
}

/** RFC 8259: JSON travels as application/json or a structured-syntax `+json` type, in UTF-8. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/i;

/** Content-Type values most clients send, accepted without parsing. */
const COMMON_JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json;charset=utf-8', 'application/json;charset=UTF-8']);

function declaresBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = Number(headers['content-length'] ?? 0);
  return Number.isFinite(length) && length > 0;
}

/** Why a body's Content-Type is refused, or undefined when it is JSON in UTF-8. */
export function contentTypeProblem(header: string | undefined): string | undefined {
  if (header !== undefined && COMMON_JSON_TYPES.has(header)) return undefined;
  if (!header) return 'the body has no Content-Type: send it as application/json';
  const [type = '', ...params] = header.split(';').map((p) => p.trim());
  if (!JSON_MEDIA_TYPE.test(type)) return `Content-Type ${JSON.stringify(type.slice(0, 100))} is not supported: send the body as application/json`;
  for (const param of params) {
    const [name = '', value = ''] = param.split('=').map((p) => p.trim());
    if (name.toLowerCase() === 'charset' && value.replace(/^"|"$/g, '').toLowerCase() !== 'utf-8') {
      return `charset ${JSON.stringify(value.slice(0, 40))} is not supported: JSON bodies are UTF-8`;
    }
  }
  return undefined;
}

const BOM = 0xfeff;

/** What body-parser attaches to the errors it raises (gateways/http/errors.ts maps them by type). */
function bodyError(err: Error, type: string, body?: string): Error {
  return Object.assign(err, { type, status: 400, statusCode: 400, expose: true, ...(body === undefined ? {} : { body }) });
}

/**
 * The common request — an uncompressed body with a Content-Length within the limit — read and
 * parsed here, with body-parser's outcome for every input (UTF-8 checked without repair, a BOM
 * dropped as its decoder does, non-strict JSON, the same error types) but without its stream
 * pipeline and charset machinery. Returns false for every other request (body-parser reads it).
 */
function readIdentityJson(req: Request, next: NextFunction, limit: number): boolean {
  const headers = req.headers;
  const encoding = headers['content-encoding'];
  if (headers['transfer-encoding'] !== undefined || (encoding !== undefined && encoding.toLowerCase() !== 'identity')) return false;
  const declared = headers['content-length'];
  const length = declared === undefined ? NaN : Number(declared);
  if (!Number.isSafeInteger(length) || length <= 0 || length > limit) return false;
  const chunks: Buffer[] = [];
  let received = 0;
  let done = false;
  const fail = (err: Error): void => {
    if (done) return;
    done = true;
    next(err);
  };
  req.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  });
  req.on('aborted', () => fail(bodyError(new Error('request aborted'), 'request.aborted')));
  req.on('error', (err: Error) => fail(bodyError(err, 'request.aborted')));
  req.on('end', () => {
    if (done) return;
    done = true;
    const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
    if (received !== length) {
      next(bodyError(new Error('request size did not match content length'), 'request.size.invalid'));
      return;
    }
    if (!isUtf8(buf)) {
      next(bodyError(new Error('the body is not valid UTF-8 (invalid bytes, overlong forms or encoded surrogates)'), 'body.utf8.invalid'));
      return;
    }
    let text = buf.toString('utf8');
    if (text.charCodeAt(0) === BOM) text = text.slice(1);
    req.rawBody = text;
    try {
      (req as Request & { _body?: boolean })._body = true;
      // A body of a BOM alone decodes to nothing, which body-parser reads as {} (as before).
      req.body = text.length === 0 ? {} : (JSON.parse(text) as unknown);
    } catch (err) {
      next(bodyError(err instanceof Error ? err : new SyntaxError(String(err)), 'entity.parse.failed', text));
      return;
    }
    next();
  });
  return true;
}

export interface RouteGuardOptions {
  readonly bodyLimitBytes: number;
  /**
   * Whether the POST route `pattern` takes no body (its operation declares no requestBody:
   * query-guard.ts PostQueryNames.bodiless): such a POST sent without a body (no Content-Type,
   * Content-Length 0 or none, as Twilio-style clients send it) is not read as JSON.
   */
  readonly bodiless?: (pattern: string) => boolean;
}

/**
 * OPTIONS answered 204 with Allow, and 405 with Allow for a path that exists under another
 * method; for a request with a body on an
 * existing route, 415 unless JSON in UTF-8, then the body parsed strictly (an empty body is a
 * 400, except on a POST that takes none: options.bodiless). A path no route
 * matches falls through to the 404 (its body is never read).
 */
export function routeGuard(app: Express, options: RouteGuardOptions): RequestHandler {
  const json = express.json({
    limit: options.bodyLimitBytes,
    strict: false,
    // The Content-Type was checked above; body-parser only reads and decodes.
    type: () => true,
    verify: (req, _res, buf) => {
      // body-parser reads an empty body as {}: an empty body is not JSON (400, not 422).
      if (buf.length === 0) throw Object.assign(new Error('the body is empty'), { type: 'entity.parse.failed' });
      // iconv would replace invalid bytes with U+FFFD and the message would go out altered.
      if (!isUtf8(buf)) throw Object.assign(new Error('the body is not valid UTF-8 (invalid bytes, overlong forms or encoded surrogates)'), { type: 'body.utf8.invalid' });
      (req as Request).rawBody = buf;
    },
  });
  return (req, res, next) => {
    const path = req.path;
    const answer = pathAnswer(app, path);
    if (answer.allowed.length === 0) {
      next();
      return;
    }
    const method = req.method;
    if (method === 'OPTIONS' && !answer.anyMethod && !answer.explicit.has(method)) {
      // The same Allow as a 405 (Express's automatic answer leaves OPTIONS itself out).
      res.setHeader('Allow', answer.allowHeader);
      res.status(204).end();
      return;
    }
    if (!answer.anyMethod && !answer.allowed.includes(method)) {
      res.setHeader('Allow', answer.allowHeader);
      next(new AppError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path.slice(0, 200)}; allowed: ${answer.allowHeader}`));
      return;
    }
    if (!BODY_METHODS.has(method)) {
      next();
      return;
    }
    const declared = declaresBody(req.headers);
    if (!declared && method === 'POST' && options.bodiless) {
      const pattern = routePattern(app, method, path);
      if (pattern !== undefined && options.bodiless(pattern)) {
        next();
        return;
      }
    }
    const problem = declared ? contentTypeProblem(req.header('content-type')) : undefined;
    if (problem) {
      next(new AppError('UNSUPPORTED_MEDIA_TYPE', problem));
      return;
    }
    // Also with `Content-Length: 0`, so that an empty body is a 400 "not JSON".
    if (!readIdentityJson(req, next, options.bodyLimitBytes)) json(req, res, next);
  };
}
