// Authentication (spec 1 §5): `Authorization: Bearer <token>` or `access_token=<token>` in
// the query; a missing, malformed, unknown or revoked token, or one of a kind this API does
// not take, is a 401. Failed attempts are counted per client address so that a token
// cannot be guessed at line rate; those responses carry the rate-limit headers too.
import type { Request, RequestHandler } from 'express';
import type { Principal, TokenKind } from '../../core/accounts/types';
import { AppError } from '../../core/errors';
import type { AccountDirectory } from '../../stores/account-directory';

declare module 'express-serve-static-core' {
  interface Request {
    principal: Principal;
  }
}

function tokenOf(req: Request): string | undefined {
  const header = req.header('authorization');
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new AppError('UNAUTHORIZED', 'malformed Authorization header: use "Authorization: Bearer <token>"');
    return match[1];
  }
  const query = req.query['access_token'];
  if (Array.isArray(query)) throw new AppError('UNAUTHORIZED', 'access_token was given more than once');
  return typeof query === 'string' && query.length > 0 ? query : undefined;
}

const FAILURE_WINDOW_MS = 60_000;

export function authenticate(directory: AccountDirectory, kinds: readonly TokenKind[], failureLimitPerMinute: number): RequestHandler {
  const failures = new Map<string, { windowStart: number; count: number }>();
  const countFailure = (req: Request): void => {
    const now = Date.now();
    const windowStart = now - (now % FAILURE_WINDOW_MS);
    const key = req.ip ?? 'unknown';
    const entry = failures.get(key);
    const current = entry && entry.windowStart === windowStart ? entry : { windowStart, count: 0 };
    current.count += 1;
    failures.set(key, current);
    if (failures.size > 10_000) failures.clear();
    req.res?.setHeader('X-RateLimit-Limit', String(failureLimitPerMinute));
    req.res?.setHeader('X-RateLimit-Remaining', String(Math.max(0, failureLimitPerMinute - current.count)));
    req.res?.setHeader('X-RateLimit-Reset', String((windowStart + FAILURE_WINDOW_MS) / 1000));
    if (current.count > failureLimitPerMinute) throw new AppError('RATE_LIMITED', 'too many failed authentications from this address; retry after X-RateLimit-Reset');
  };
  return (req, _res, next) => {
    try {
      const value = tokenOf(req);
      if (!value) throw new AppError('UNAUTHORIZED', 'missing token: send "Authorization: Bearer <token>"');
      const principal = directory.authenticate(value);
      if (!principal) throw new AppError('UNAUTHORIZED', 'the token is unknown or revoked');
      if (!kinds.includes(principal.token.kind)) {
        throw new AppError('UNAUTHORIZED', `a ${principal.token.kind} token cannot call this API; use a token of kind ${kinds.join(' or ')}`);
      }
      req.principal = principal;
      next();
    } catch (err) {
      try {
        countFailure(req);
      } catch (limited) {
        next(limited);
        return;
      }
      next(err);
    }
  };
}
