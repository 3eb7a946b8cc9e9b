// A project's opt-out list (DESIGN §4 "Two-way"), under /transactional/v1 with api_sms tokens:
// GET /opt-outs (Grammar A paging `_start`/`_limit`, sorted by number), POST /opt-outs
// `{ "to": "+…" }` (201; the number checked as a send's `to`), DELETE /opt-outs/{number} (204;
// 404 when the number is not opted out). Everything is scoped to the token's project, so another
// organization's token sees none of it and cannot remove it (404). Counters `v1-opt-outs-list`,
// `v1-opt-outs-create`, `v1-opt-outs-delete` (per organization, spec 1 §8).
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError, validationError } from '../../core/errors';
import { DEFAULT_LIMIT, MAX_LIMIT, parseUrl } from '../../core/filters/grammar-a';
import { pagingOf } from '../../core/filters/grammar-a/paging';
import { checkPhoneNumber, type OptOutList } from '../../core/sms';
import { authenticate } from './auth';
import type { HttpDeps } from './deps';
import { rateLimit, type AddressCounter, type OptOutRateLimitCounter } from './rate-limit';
import { sendJson } from './respond';

export const OPT_OUTS_PATH = '/opt-outs';

type AsyncHandler = (req: Request, res: Response) => Promise<void>;
const handle = (fn: AsyncHandler): RequestHandler => (req, res, next) => { fn(req, res).catch(next); };

/** The token's project: api_sms tokens have one (an account-wide token cannot reach this router). */
function projectOf(req: Request): string {
  const project = req.principal.token.projectId;
  if (!project) throw new AppError('NOT_FOUND', 'this token has no project, so no opt-out list');
  return project;
}

function page(req: Request): { start: number; limit: number } {
  const search = new URL(req.originalUrl, 'http://local').searchParams;
  const query = parseUrl(search, { ignore: ['access_token'] });
  if (query.filter.kind === 'and' && query.filter.children.length > 0) throw new AppError('INVALID_FILTER', 'the opt-out list takes no filter: only "_start" and "_limit"');
  if (query.sort.length > 0 || query.group !== undefined) throw new AppError('INVALID_FILTER', 'the opt-out list takes only "_start" and "_limit" (it is sorted by number)');
  const { limit, offset } = pagingOf(query, DEFAULT_LIMIT, MAX_LIMIT);
  return { start: offset, limit };
}

/** A +E.164 number as a send's `to` is checked; a 422 on `to` otherwise. */
function numberOf(body: unknown): string {
  const to = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['to'] : undefined;
  if (typeof to !== 'string' || to.length === 0) throw validationError({ to: ['is required: a phone number in E.164 form, e.g. +4915112345678'] });
  const extra = Object.keys(body as object).filter((k) => k !== 'to');
  if (extra.length > 0) throw validationError(Object.fromEntries(extra.map((k) => [k, ['is not a field of an opt-out']])));
  const phone = checkPhoneNumber(to);
  if (!phone.ok) throw validationError({ to: [phone.message] });
  return phone.normalized;
}

export function optOutsRouter(deps: HttpDeps, optOuts: OptOutList, options: { readonly addresses?: AddressCounter } = {}): Router {
  const { engines, config } = deps;
  const router = Router();
  const auth = authenticate(engines.directory, ['api_sms'], options.addresses ?? config.rateLimits.perMinute);
  const limited = (counter: OptOutRateLimitCounter): RequestHandler[] => [auth, rateLimit(engines.rateLimiter, counter, config.rateLimits.perMinute)];

  router.get(OPT_OUTS_PATH, ...limited('v1-opt-outs-list'), handle(async (req, res) => {
    const entities = await optOuts.list(projectOf(req), page(req));
    res.json({ entities });
  }));

  router.post(OPT_OUTS_PATH, ...limited('v1-opt-outs-create'), handle(async (req, res) => {
    const project = projectOf(req);
    const number = numberOf(req.body);
    const since = new Date().toISOString();
    await optOuts.optOut(project, number, since, 'api');
    sendJson(res, 201, { entity: { number, since, source: 'api' } });
  }));

  router.delete(`${OPT_OUTS_PATH}/:number`, ...limited('v1-opt-outs-delete'), handle(async (req, res) => {
    const project = projectOf(req);
    const raw = String(req.params['number'] ?? '');
    const phone = checkPhoneNumber(raw.trim());
    const removed = phone.ok ? await optOuts.optIn(project, phone.normalized) : false;
    if (!removed) throw new AppError('NOT_FOUND', `${raw.slice(0, 32)} is not on this project's opt-out list`);
    res.status(204).end();
  }));

  return router;
}
