// Audience API (spec 3 §4.2) under /audience/v1/project/{project}: the search with the
// audience filter (Grammar B) and the project's segments. Product tokens with the scope
// `audience:search` for the path's project (spec 2 §5 rules): a missing, malformed, revoked or
// wrong-kind token is a 401; an unknown project, another project's token or a token without
// the scope is a 404 (never 403). Aggregations also need PROJECT_AGGREGATIONS: without it,
// a 400 naming the scope (docs/grammar-b.md). Errors are `{ title, status, detail }`.
// An organization runs at most SEARCHES_IN_FLIGHT_PER_ORG searches at once in this process:
// beyond, a 429 with Retry-After (gateways/http/rate-limit.ts InFlight), so that one organization's
// searches cannot hold the engine for every other one (each statement also has a cost ceiling:
// stores/audience-search.ts).
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../../core/errors';
import {
  parseSearch, saveSegment, SEARCHES_IN_FLIGHT_PER_ORG,
} from '../../core/filters/grammar-b';
import type { RateLimits } from '../../core/accounts';
import type { AudienceAccounts, AudienceSearch, SearchScope, Segment, SegmentBook } from '../../core/filters/grammar-b/ports';
import { authenticate } from './auth';
import { InFlight, rateLimit } from './rate-limit';

export const SEARCH_SCOPE = 'audience:search';
export const AGGREGATIONS_SCOPE = 'PROJECT_AGGREGATIONS';

/** What the audience routes need, built once per process (roles/gateway-http.ts). */
export interface AudienceServices {
  readonly accounts: AudienceAccounts;
  readonly search: AudienceSearch;
  readonly segments: SegmentBook;
  readonly rateLimiter: RateLimits;
  /** Injectable clock for relative dates and cursor expiry. */
  readonly now?: () => Date;
}

/** Bodies are read and checked (JSON, UTF-8, size) once for every API by gateways/http/guards.ts. */
export interface AudienceOptions {
  readonly ratePerMinute: number;
  readonly authFailuresPerMinute: Parameters<typeof authenticate>[2];
}

type AsyncHandler = (req: Request, res: Response) => Promise<void>;
const handle = (fn: AsyncHandler): RequestHandler => (req, res, next) => { fn(req, res).catch(next); };

function segmentView(s: Segment): Record<string, unknown> {
  return { slug: s.slug, name: s.name, root: s.root, createdAt: s.createdAt, updatedAt: s.updatedAt };
}

export function audienceRouter(services: AudienceServices, options: AudienceOptions): Router {
  const router = Router({ mergeParams: true });
  const auth = authenticate(services.accounts, ['product'], options.authFailuresPerMinute);
  const now = services.now ?? ((): Date => new Date());
  const inFlight = new InFlight(SEARCHES_IN_FLIGHT_PER_ORG, 'audience searches');

  // The token must be a product token of this very project carrying the search scope.
  const projectAccess: RequestHandler = (req, _res, next) => {
    const id = String(req.params['project'] ?? '');
    const project = services.accounts.project(id);
    const { token, org } = req.principal;
    if (!project || project.orgId !== org.id || token.projectId !== id || !token.scopes.includes(SEARCH_SCOPE)) {
      next(new AppError('NOT_FOUND', `no project "${id.slice(0, 64)}" for this token: it needs a product token of that project with the scope ${SEARCH_SCOPE}`));
      return;
    }
    next();
  };
  const guarded = (endpoint: string): RequestHandler[] => [auth, projectAccess, rateLimit(services.rateLimiter, `audience-${endpoint}`, options.ratePerMinute)];
  const scopeOf = (req: Request): SearchScope => {
    const project = services.accounts.project(String(req.params['project']));
    return { project: String(req.params['project']), org: req.principal.org.id, timezone: project?.timezone ?? 'UTC', now: now() };
  };

  router.post('/audience/search', ...guarded('search'), handle(async (req, res) => {
    // Taken before the filter is parsed (the costly part of a refusal); held until the search's
    // statements are done, also when the client has gone.
    const release = inFlight.take(req.principal.org.id, res);
    try {
      const request = parseSearch(req.body);
      if (request.kind === 'query' && request.query.aggregations.length > 0 && !req.principal.token.scopes.includes(AGGREGATIONS_SCOPE)) {
        throw new AppError('INVALID_FILTER', `aggregations: need the scope ${AGGREGATIONS_SCOPE}, which this token does not carry (spec 3 §4.2)`);
      }
      res.json(await services.search.search(request, scopeOf(req)));
    } finally {
      release();
    }
  }));

  router.get('/segments', ...guarded('segments'), handle(async (req, res) => {
    const found = await services.segments.list(String(req.params['project']));
    res.json({ entities: found.map(segmentView) });
  }));

  router.post('/segments', ...guarded('segments'), handle(async (req, res) => {
    const project = String(req.params['project']);
    const { segment, created } = await saveSegment(services.segments, project, req.body, now());
    res.status(created ? 201 : 200).json({ entity: segmentView(segment) });
  }));

  router.get('/segments/:slug', ...guarded('segments'), handle(async (req, res) => {
    const segment = await services.segments.get(String(req.params['project']), String(req.params['slug']));
    if (!segment) throw new AppError('NOT_FOUND', `no segment "${String(req.params['slug']).slice(0, 64)}" in this project`);
    res.json({ entity: segmentView(segment) });
  }));

  router.delete('/segments/:slug', ...guarded('segments'), handle(async (req, res) => {
    const removed = await services.segments.remove(String(req.params['project']), String(req.params['slug']));
    if (!removed) throw new AppError('NOT_FOUND', `no segment "${String(req.params['slug']).slice(0, 64)}" in this project`);
    res.status(204).end();
  }));

  return router;
}
