// The web console at /console (docs/console.md): server-rendered pages over the stores the
// admin CLI uses. Mounted before the API guards (it takes HTML forms, not JSON), it answers
// every path under its base itself, errors included, as HTML.
import { readFileSync } from 'node:fs';
import express, { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { AppError, ERRORS } from '../../../core/errors';
import { AccountConflictError, AccountNotFoundError } from '../../../stores/account-store';
import type { HttpDeps } from '../deps';
import { ConsoleError, type ConsoleRoutes } from './handler';
import { html, notice, page, type PageContext } from './html';
import { clearCookie, csrfProblem, loadSession, readCookie, SESSION_COOKIE } from './session';
import type { ConsoleServices } from './services';
import { signInRoutes } from './sign-in';
import { tokenRoutes } from './pages/tokens';
import { tokenSettingsRoutes } from './pages/token-settings';
import { billingRoutes } from './pages/billing';
import { messageRoutes } from './pages/messages';
import { deadLetterRoutes } from './pages/dead-letters';
import { datasourceRoutes } from './pages/datasources';
import { audienceBuilderRoutes } from './pages/audience-builder';
import { contactRoutes } from './pages/contacts';
import { segmentRoutes } from './pages/segments';
import { optOutRoutes } from './pages/opt-outs';
import { scheduledRoutes } from './pages/scheduled';
import { dashboardRoutes } from './pages/dashboard';
import { projectPath } from '../../../infra/paths';

export const CONSOLE_BASE = '/console';

const asset = (type: string, path: string): { type: string; body: Buffer } => ({ type, body: readFileSync(path) });
const own = (name: string): string => projectPath('gateways', 'http', 'console', 'assets', name);
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

const ASSETS: Readonly<Record<string, { type: string; body: Buffer }>> = {
  'console.css': asset(CSS, own('console.css')),
  'console.js': asset(JS, own('console.js')),
  'builder.js': asset(JS, own('builder.js')),
  'builder.css': asset(CSS, own('builder.css')),
  'dashboard.js': asset(JS, own('dashboard.js')),
  'favicon.svg': asset('image/svg+xml', own('favicon.svg')),
  // The dashboard's charts: uPlot (MIT), served from the installed package, never a CDN.
  'uplot.js': asset(JS, require.resolve('uplot/dist/uPlot.iife.min.js')),
  'uplot.css': asset(CSS, require.resolve('uplot/dist/uPlot.min.css')),
};

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

export function consoleRouter(deps: HttpDeps, services: ConsoleServices, base = CONSOLE_BASE): Router {
  const router = Router();
  router.use((_req, res, next) => { res.set(SECURITY_HEADERS); next(); });
  router.get('/assets/:name', (req, res, next) => {
    const asset = ASSETS[String(req.params['name'])];
    if (!asset) { next(); return; }
    res.set({ 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=3600' }).send(asset.body);
  });
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 100 }));
  router.use(loadSession(services.operators));

  const routes: ConsoleRoutes = { router, base, deps, services };
  signInRoutes(routes);

  // Everything below needs a session; every POST its CSRF token.
  const signedIn: RequestHandler = (req, res, next) => {
    if (req.consoleSession) {
      next();
      return;
    }
    if (readCookie(req, SESSION_COOKIE)) clearCookie(req, res, SESSION_COOKIE, base);
    if (req.method === 'GET') res.redirect(303, `${base}/sign-in`);
    else next(new ConsoleError('CONSOLE_SIGNED_OUT', 'your session has ended: sign in again'));
  };
  router.use(signedIn);
  router.use((req, _res, next) => {
    if (req.method !== 'POST') { next(); return; }
    const problem = csrfProblem(req, req.consoleSession?.csrf);
    next(problem ? new ConsoleError('CONSOLE_FORBIDDEN', problem) : undefined);
  });
  router.get('/', (_req, res) => res.redirect(303, `${base}/dashboard`));
  dashboardRoutes(routes);
  tokenRoutes(routes);
  tokenSettingsRoutes(routes);
  billingRoutes(routes);
  messageRoutes(routes);
  deadLetterRoutes(routes);
  datasourceRoutes(routes);
  audienceBuilderRoutes(routes);
  contactRoutes(routes);
  segmentRoutes(routes);
  optOutRoutes(routes);
  scheduledRoutes(routes);

  router.use((req, _res, next) => next(new ConsoleError('CONSOLE_NOT_FOUND', `nothing at ${req.path.slice(0, 200)} in this organization`)));
  router.use(consoleErrors(deps, base));
  return router;
}

function statusOf(err: unknown): { status: number; title: string; detail: string } {
  if (err instanceof ConsoleError) return { status: err.status, title: err.title, detail: err.message };
  if (err instanceof AccountNotFoundError) return { status: ERRORS.CONSOLE_NOT_FOUND.status, title: 'Not found', detail: 'nothing by that id in this organization' };
  if (err instanceof AccountConflictError) return { status: ERRORS.CONSOLE_CONFLICT.status, title: 'Conflict', detail: err.message };
  if (err instanceof AppError) return { status: err.status, title: err.status === ERRORS.NOT_FOUND.status ? 'Not found' : 'Refused', detail: err.message };
  // Express's own refusals (a path parameter that is not UTF-8, a form the body parser refuses) carry a 4xx status.
  const { type, status } = (err ?? {}) as { type?: string; status?: unknown };
  if (type === 'entity.too.large' || type === 'parameters.too.many') return { status: ERRORS.PAYLOAD_TOO_LARGE.status, title: 'Too large', detail: 'the form is too large' };
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, title: 'Bad request', detail: 'the request cannot be read' };
  return { status: ERRORS.INTERNAL.status, title: 'Error', detail: 'something went wrong; it is logged' };
}

function consoleErrors(deps: HttpDeps, base: string): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next) => {
    const { status, title, detail } = statusOf(err);
    if (status >= 500) (req.log ?? deps.log).error({ err, path: req.path }, 'console error');
    const session = req.consoleSession;
    const ctx: PageContext = session ? { base, email: session.email, csrf: session.csrf } : { base };
    res.status(status).type('html').send(page(ctx, title, html`${notice('error', detail)}<p><a href="${base}/">Back to the console</a></p>`));
  };
}
