// What every console page module is given, and the small helpers they share: the signed-in
// context, async handlers, organization checks (another organization's record is a 404).
import type { Request, RequestHandler, Response, Router } from 'express';
import type { Organization, Token } from '../../../core/accounts';
import { ERRORS, type ErrorCode } from '../../../core/errors';
import type { HttpDeps } from '../deps';
import { page, type Html, type PageAssets, type PageContext } from './html';
import type { ConsoleServices } from './services';

/** A console code of the error registry; the page shows its title and answers its status. */
export type ConsoleErrorCode = Extract<ErrorCode, `CONSOLE_${string}`>;

export class ConsoleError extends Error {
  override readonly name = 'ConsoleError';
  constructor(readonly code: ConsoleErrorCode, detail: string) {
    super(detail);
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  get title(): string {
    return ERRORS[this.code].title;
  }
}

export interface ConsoleRoutes {
  readonly router: Router;
  readonly base: string;
  readonly deps: HttpDeps;
  readonly services: ConsoleServices;
}

export interface Signed extends PageContext {
  readonly org: Organization;
  readonly csrf: string;
}

type Handler = (req: Request, res: Response, ctx: Signed) => Promise<void>;

/** An async page handler with the signed-in context (the router let only sessions through). */
export function signed(routes: ConsoleRoutes, fn: Handler): RequestHandler {
  return (req, res, next) => {
    const session = req.consoleSession;
    if (!session) { next(new ConsoleError('CONSOLE_SIGNED_OUT', 'sign in first')); return; }
    routes.services.accounts.getOrg(session.orgId)
      .then((org) => fn(req, res, { base: routes.base, email: session.email, orgName: org.name, csrf: session.csrf, org }))
      .catch(next);
  };
}

export function send(res: Response, ctx: Signed, title: string, body: Html, status = 200, assets: PageAssets = {}): void {
  res.status(status).type('html').send(page(ctx, title, body, assets));
}

/** A form field as a trimmed string ('' when absent). */
export function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** A query parameter as a string ('' when absent or repeated). */
export function queryParam(req: Request, name: string): string {
  const value = req.query[name];
  return typeof value === 'string' ? value : '';
}

/** The token of the path, when it belongs to the signed-in organization; otherwise a 404. */
export async function ownToken(routes: ConsoleRoutes, ctx: Signed, id: string): Promise<Token> {
  const token = await routes.services.accounts.getToken(id).catch(() => null);
  if (!token || token.orgId !== ctx.org.id) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such token in this organization');
  return token;
}
