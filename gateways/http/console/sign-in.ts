// Sign-in and sign-out. The sign-in form carries a double-submit token (a SameSite=Strict
// cookie and the same value in the form), so another site cannot sign a browser in to its own
// account; failures are throttled per client address; a successful sign-in starts a new session.
import type { Request } from 'express';
import { newOpaque, SESSION_HOURS } from '../../../core/console/operators';
import { ConsoleError, field, type ConsoleRoutes } from './handler';
import { html, notice, page } from './html';
import { clearCookie, csrfProblem, readCookie, SESSION_COOKIE, setCookie, SIGN_IN_COOKIE } from './session';

const FAILURES_PER_MINUTE = 10;

/** Failed sign-ins per client address in the current minute. */
class FailureCounter {
  private minute = 0;
  private readonly counts = new Map<string, number>();

  private roll(): void {
    const minute = Math.floor(Date.now() / 60_000);
    if (minute !== this.minute) { this.minute = minute; this.counts.clear(); }
  }

  blocked(address: string): boolean {
    this.roll();
    return (this.counts.get(address) ?? 0) >= FAILURES_PER_MINUTE;
  }

  fail(address: string): void {
    this.roll();
    this.counts.set(address, (this.counts.get(address) ?? 0) + 1);
  }
}

export function signInRoutes(routes: ConsoleRoutes): void {
  const { router, base, services } = routes;
  const failures = new FailureCounter();
  const form = (token: string, email = '', problem?: string): string => page({ base }, 'Sign in', html`
${problem ? notice('error', problem) : ''}
<form method="post" action="${base}/sign-in" class="card narrow">
<input type="hidden" name="_csrf" value="${token}">
<label>Email <input type="email" name="email" value="${email}" required autocomplete="username" autofocus></label>
<label>Password <input type="password" name="password" required autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>
<p class="hint">Operators are created with <code>npm run admin -- operator create --org ID --email EMAIL</code>; <code>npm start</code> prints one for the demo organization.</p>`);
  const freshForm = (req: Request, res: import('express').Response, status: number, email?: string, problem?: string): void => {
    const token = newOpaque();
    setCookie(req, res, SIGN_IN_COOKIE, token, base, 3600);
    res.status(status).type('html').send(form(token, email, problem));
  };

  router.get('/sign-in', (req, res) => {
    if (req.consoleSession) { res.redirect(303, `${base}/dashboard`); return; }
    freshForm(req, res, 200);
  });

  router.post('/sign-in', (req, res, next) => {
    const problem = csrfProblem(req, readCookie(req, SIGN_IN_COOKIE));
    if (problem) { next(new ConsoleError('CONSOLE_FORBIDDEN', problem)); return; }
    const address = req.ip ?? 'unknown';
    if (failures.blocked(address)) { freshForm(req, res, 429, field(req, 'email'), 'too many failed sign-ins from this address: wait a minute'); return; }
    const email = field(req, 'email');
    const password = typeof (req.body as Record<string, unknown>)['password'] === 'string' ? String((req.body as Record<string, unknown>)['password']) : '';
    services.operators.verify(email, password).then(async (operator) => {
      if (!operator) {
        failures.fail(address);
        freshForm(req, res, 401, email, 'the email or the password is wrong');
        return;
      }
      const old = readCookie(req, SESSION_COOKIE);
      if (old) await services.operators.endSession(old);
      const { cookie } = await services.operators.startSession(operator);
      clearCookie(req, res, SIGN_IN_COOKIE, base);
      setCookie(req, res, SESSION_COOKIE, cookie, base, SESSION_HOURS * 3600);
      req.log?.info({ operator: operator.id, org: operator.orgId }, 'console sign-in');
      res.redirect(303, `${base}/dashboard`);
    }).catch(next);
  });

  router.post('/sign-out', (req, res, next) => {
    const cookie = readCookie(req, SESSION_COOKIE);
    const problem = csrfProblem(req, req.consoleSession?.csrf);
    if (problem || !cookie) { next(new ConsoleError('CONSOLE_FORBIDDEN', problem ?? 'not signed in')); return; }
    services.operators.endSession(cookie).then(() => {
      clearCookie(req, res, SESSION_COOKIE, base);
      res.redirect(303, `${base}/sign-in`);
    }).catch(next);
  });
}
