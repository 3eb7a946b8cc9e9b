// Console sessions over HTTP: the session cookie (HttpOnly, SameSite=Strict, Path=/console,
// Secure behind TLS), the signed-in session on each request, and the CSRF check of every POST
// (the session's token in a hidden field, compared in constant time, and a same-origin check).
import type { Request, RequestHandler, Response } from 'express';
import { sameText, type ConsoleSession } from '../../../core/console/operators';

export const SESSION_COOKIE = 'console_session';
/** Before sign-in: the double-submit token of the sign-in form. */
export const SIGN_IN_COOKIE = 'console_signin';

export interface SessionSource {
  session(cookie: string): Promise<ConsoleSession | null>;
}

declare module 'express-serve-static-core' {
  interface Request {
    consoleSession?: ConsoleSession;
  }
}

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

export function setCookie(req: Request, res: Response, name: string, value: string, base: string, maxAgeSeconds: number): void {
  const secure = req.secure ? '; Secure' : '';
  res.append('Set-Cookie', `${name}=${value}; Path=${base}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`);
}

export function clearCookie(req: Request, res: Response, name: string, base: string): void {
  setCookie(req, res, name, '', base, 0);
}

/** Sets req.consoleSession when the cookie names a live session. */
export function loadSession(sessions: SessionSource): RequestHandler {
  return (req, _res, next) => {
    const cookie = readCookie(req, SESSION_COOKIE);
    if (!cookie) {
      next();
      return;
    }
    sessions.session(cookie).then((session) => {
      if (session) req.consoleSession = session;
      next();
    }, next);
  };
}

/**
 * A browser's cross-site POST says so (Sec-Fetch-Site) or names another Origin; a request with
 * neither (older clients, `Origin: null`) is left to the token check.
 */
function sameOrigin(req: Request): boolean {
  const site = req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = req.header('origin');
  if (!origin || origin === 'null') return true;
  try {
    return new URL(origin).host === req.header('host');
  } catch {
    return false;
  }
}

/** Why a changing request is refused, or undefined when its CSRF token matches `expected`. */
export function csrfProblem(req: Request, expected: string | undefined): string | undefined {
  if (!sameOrigin(req)) return 'the request comes from another origin';
  const sent = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>)['_csrf'] : undefined;
  if (typeof sent !== 'string' || !expected || !sameText(sent, expected)) return 'the form has no valid CSRF token: reload the page and try again';
  return undefined;
}
