// Maps errors to HTTP responses. The SMS API's bodies (spec 1 §7) are the default:
// `{ title, status, detail }` for 400/401/402/404/405/408/413/415/431/500, `{ errors: { fields } }`
// for 422, `{ message, code }` for 429. An API with other error bodies (ingestion: `{ message }`,
// spec 2 §7) registers its own formatter for its path prefix, so errors raised before its router
// runs (malformed URL, 405, 415, unreadable body) still get its shape.
import type { ErrorRequestHandler, Request, Response } from 'express';
import { AppError, ERRORS, isAppError } from '../../core/errors';
import type { Logger } from '../../infra/logger';

export interface ErrorResponse {
  readonly status: number;
  readonly body: unknown;
}

export type ErrorFormatter = (err: AppError) => ErrorResponse;

/** spec 1 §7 bodies. */
export const smsErrorFormat: ErrorFormatter = (err) => {
  const spec = ERRORS[err.code];
  if (err.code === 'VALIDATION_FAILED') return { status: 422, body: { errors: { fields: err.fields ?? {} } } };
  if (err.code === 'RATE_LIMITED') return { status: 429, body: { message: err.message, code: 429 } };
  return { status: spec.status, body: { title: spec.title, status: spec.status, detail: err.message } };
};

/** Error formatters by path prefix; the longest registered prefix of the request path wins. */
export class ErrorFormats {
  private readonly byPrefix = new Map<string, ErrorFormatter>();

  constructor(private readonly fallback: ErrorFormatter = smsErrorFormat) {}

  /** `prefix` is a path such as `/ingest/v1`; it matches itself and everything below it. */
  register(prefix: string, format: ErrorFormatter): void {
    this.byPrefix.set(prefix.replace(/\/+$/, ''), format);
  }

  for(path: string): ErrorFormatter {
    let best: [string, ErrorFormatter] | undefined;
    for (const entry of this.byPrefix) {
      const [prefix] = entry;
      if ((path === prefix || path.startsWith(`${prefix}/`)) && (!best || prefix.length > best[0].length)) best = entry;
    }
    return best?.[1] ?? this.fallback;
  }
}

const defaultFormats = new ErrorFormats();

export function sendError(res: Response, err: AppError, format: ErrorFormatter = smsErrorFormat): void {
  const { status, body } = format(err);
  res.status(status).json(body);
}

/** What body-parser, raw-body, the router and http-errors attach to the errors they raise. */
interface HttpLibraryError extends Error {
  type?: string;
  status?: number;
  expose?: boolean;
}

/**
 * Errors raised by the libraries under Express, translated once into registry codes by their
 * `type` (body-parser) or status (http-errors): bad input is never a 500.
 */
export function fromLibraryError(err: unknown): AppError | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as HttpLibraryError;
  switch (e.type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'the request body is larger than the limit; split or trim it', { cause: err });
    case 'entity.parse.failed':
      return new AppError('MALFORMED_JSON', `the body is not valid JSON: ${e.message}`, { cause: err });
    case 'body.utf8.invalid':
      return new AppError('MALFORMED_BODY', e.message, { cause: err });
    case 'encoding.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'unsupported Content-Encoding: send the body as identity, gzip, deflate or br', { cause: err });
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'unsupported charset: JSON bodies are UTF-8', { cause: err });
    case 'request.size.invalid':
      return new AppError('MALFORMED_BODY', 'the body is shorter or longer than its Content-Length', { cause: err });
    case 'request.aborted':
      return new AppError('MALFORMED_BODY', 'the client closed the request before the body was complete', { cause: err });
    default:
      break;
  }
  // The router marks a path parameter with broken percent-encoding 400 (gateways/http/guards.ts
  // refuses such URLs before routing; this is the safety net).
  if (err instanceof URIError) return new AppError('MALFORMED_URL', 'the URL has a broken percent-encoding', { cause: err });
  // body-parser wraps a stream failure (a corrupt gzip/br body) in an exposed 400: the
  // client's input, never ours.
  if (e.expose === true) {
    if (e.status === 400) return new AppError('MALFORMED_BODY', 'the body cannot be read: corrupt compressed data or a broken transfer', { cause: err });
    if (e.status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'the request body is larger than the limit; split or trim it', { cause: err });
    if (e.status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'unsupported body format: send application/json in UTF-8', { cause: err });
  }
  return undefined;
}

export function errorHandler(log: Logger, formats: ErrorFormats = defaultFormats): ErrorRequestHandler {
  return (err: unknown, req: Request, res, _next) => {
    if (res.headersSent) return;
    const format = formats.for(req.originalUrl.split('?')[0] ?? '/');
    if (isAppError(err)) return sendError(res, err, format);
    const known = fromLibraryError(err);
    if (known) return sendError(res, known, format);
    const requestLog = (req as { log?: Logger }).log ?? log;
    requestLog.error({ err }, 'unhandled error');
    sendError(res, new AppError('INTERNAL', 'internal error; retry with exponential backoff'), format);
  };
}
