// Authentication (spec 1 §5): `Authorization: Bearer <token>` or `access_token=<token>` in
// the query, exactly one of them and each once (conflicting credentials are a 401: which one
// was meant cannot be known); a missing, malformed, unknown or revoked token, or one of a kind this API does
// not take, is a 401. Failed attempts are counted per client address so that a token
// cannot be guessed at line rate; those responses carry the rate-limit headers too.
import type { Request, RequestHandler } from 'express';
import type { Authenticator, Principal, TokenKind } from '../../core/accounts';
import { AppError } from '../../core/errors';
import { AddressCounter, rateLimitHeaderValues } from './rate-limit';

declare module 'express-serve-static-core' {
  interface Request {
    principal: Principal;
  }
}

/** More than one Authorization field: Node keeps the first in `headers` and drops the others. */
function repeatedAuthorization(raw: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

function tokenOf(req: Request): string | undefined {
  const header = req.headers.authorization;
  // Two headers (even with the same token): which one was meant cannot be known, as with a header and access_token.
  if (header !== undefined && repeatedAuthorization(req.rawHeaders)) {
    throw new AppError('UNAUTHORIZED', 'the Authorization header was sent more than once: send exactly one');
  }
  // The query is parsed (qs) only when the URL has one.
  const query = req.originalUrl.includes('?') ? req.query['access_token'] : undefined;
  if (header !== undefined && query !== undefined) {
    throw new AppError('CONFLICTING_CREDENTIALS', 'a token was sent both in the Authorization header and as access_token: send exactly one');
  }
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new AppError('UNAUTHORIZED', 'malformed Authorization header: use "Authorization: Bearer <token>"');
    return match[1];
  }
  if (Array.isArray(query)) throw new AppError('UNAUTHORIZED', 'access_token was given more than once');
  return typeof query === 'string' && query.length > 0 ? query : undefined;
}

/** `failures` is the app's address counter, or a per-minute limit for a counter of this router's own. */
export function authenticate(directory: Authenticator, kinds: readonly TokenKind[], failures: number | AddressCounter): RequestHandler {
  const counter = typeof failures === 'number' ? new AddressCounter(failures) : failures;
  const countFailure = (req: Request): void => {
    const decision = counter.note(req.ip, true);
    for (const [name, value] of Object.entries(rateLimitHeaderValues(decision))) req.res?.setHeader(name, value);
    if (decision.exceeded) throw new AppError('RATE_LIMITED', 'too many failed authentications from this address; retry after X-RateLimit-Reset');
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
