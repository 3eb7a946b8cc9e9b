// What every console page module is given, and the small helpers they share: the signed-in
// context, async handlers, organization checks (another organization's record is a 404).
import type { Request, RequestHandler, Response, Router } from 'express';
import type { Organization, Token } from '../../../core/accounts/types';
import type { HttpDeps } from '../deps';
import { page, type Html, type PageContext } from './html';
import type { ConsoleServices } from './services';

export class ConsoleError extends Error {
  override readonly name = 'ConsoleError';
  constructor(readonly status: number, readonly title: string, detail: string) {
    super(detail);
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
    if (!session) { next(new ConsoleError(401, 'Signed out', 'sign in first')); return; }
    routes.services.accounts.getOrg(session.orgId)
      .then((org) => fn(req, res, { base: routes.base, email: session.email, orgName: org.name, csrf: session.csrf, org }))
      .catch(next);
  };
}

export function send(res: Response, ctx: Signed, title: string, body: Html, status = 200): void {
  res.status(status).type('html').send(page(ctx, title, body));
}

/** A form field as a trimmed string ('' when absent). */
export function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** The token of the path, when it belongs to the signed-in organization; otherwise a 404. */
export async function ownToken(routes: ConsoleRoutes, ctx: Signed, id: string): Promise<Token> {
  const token = await routes.services.accounts.getToken(id).catch(() => null);
  if (!token || token.orgId !== ctx.org.id) throw new ConsoleError(404, 'Not found', 'no such token in this organization');
  return token;
}
