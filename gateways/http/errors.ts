// Maps AppError (core/errors.ts) to the bodies of spec 1 §7: `{ title, status, detail }`
// for 400/401/402/404/413/500, `{ errors: { fields } }` for 422, `{ message, code }` for 429.
import type { ErrorRequestHandler, Response } from 'express';
import { AppError, ERRORS, isAppError } from '../../core/errors';
import type { Logger } from '../../infra/logger';

export function sendError(res: Response, err: AppError): void {
  const spec = ERRORS[err.code];
  if (err.code === 'VALIDATION_FAILED') {
    res.status(422).json({ errors: { fields: err.fields ?? {} } });
  } else if (err.code === 'RATE_LIMITED') {
    res.status(429).json({ message: err.message, code: 429 });
  } else {
    res.status(spec.status).json({ title: spec.title, status: spec.status, detail: err.message });
  }
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) return;
    if (isAppError(err)) return sendError(res, err);
    const parserError = err as BodyParserError;
    if (parserError.type === 'entity.too.large') return sendError(res, new AppError('PAYLOAD_TOO_LARGE', 'the request body is larger than the limit; split or trim it'));
    if (parserError.type === 'entity.parse.failed') return sendError(res, new AppError('MALFORMED_JSON', `the body is not valid JSON: ${parserError.message}`));
    if (parserError.type === 'encoding.unsupported' || parserError.type === 'charset.unsupported') return sendError(res, new AppError('MALFORMED_JSON', 'the body must be UTF-8 JSON'));
    const requestLog = (req as { log?: Logger }).log ?? log;
    requestLog.error({ err }, 'unhandled error');
    sendError(res, new AppError('INTERNAL', 'internal error; retry with exponential backoff'));
  };
}
