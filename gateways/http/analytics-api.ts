// Analysts' SQL (DESIGN §4 "Analysts", docs/analytics.md): POST /analytics/v1/sql with a product
// token carrying the scope `analytics:read`. Body `{ "query": "SELECT ...", "format": "JSON" |
// "CSV" | "JSONEachRow" | "Parquet" }` (JSON by default); the answer is ClickHouse's output in
// that format. The query reads the documented relations of the token's organization only
// (stores/analytics-sql.ts). A missing, malformed, revoked or wrong-kind token is a 401; a
// product token without the scope a 404 (never 403); errors are `{ title, status, detail }`.
// Rate-limited per organization (counter `analytics-sql`), and at most
// ANALYTICS_IN_FLIGHT_PER_ORG queries of one organization run at once in a process.
import { Router, type RequestHandler } from 'express';
import { ANALYTICS_IN_FLIGHT_PER_ORG, OUTPUT_FORMATS, type OutputFormat } from '../../core/analytics';
import type { Project } from '../../core/accounts';
import { AppError } from '../../core/errors';
import type { AccountDirectory } from '../../stores/account-directory';
import type { AnalyticsResult, AnalyticsScope } from '../../stores/analytics-sql';
import type { RateLimiter } from '../../stores/rate-limiter';
import { authenticate } from './auth';
import { InFlight, rateLimit } from './rate-limit';

export const ANALYTICS_SCOPE = 'analytics:read';
export const ANALYTICS_SQL_PATH = '/analytics/v1/sql';

export interface AnalyticsServices {
  readonly accounts: AccountDirectory;
  readonly sql: { run(query: string, format: OutputFormat, scope: AnalyticsScope): Promise<AnalyticsResult> };
  readonly rateLimiter: RateLimiter;
}

export interface AnalyticsOptions {
  readonly ratePerMinute: number;
  readonly authFailuresPerMinute: Parameters<typeof authenticate>[2];
}

/** `{ query, format? }`, nothing else. */
export function parseAnalyticsBody(body: unknown): { query: string; format: OutputFormat } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('BODY_NOT_OBJECT', 'the body must be a JSON object { "query": "SELECT ...", "format": "JSON" }');
  const record = body as Record<string, unknown>;
  const unknown = Object.keys(record).filter((k) => k !== 'query' && k !== 'format');
  if (unknown.length > 0) throw new AppError('WRONG_SHAPE', `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k.slice(0, 64))).join(', ')}: the body takes "query" and "format"`);
  if (typeof record['query'] !== 'string') throw new AppError('WRONG_SHAPE', 'query: must be a string holding one SELECT');
  const format = record['format'] ?? 'JSON';
  if (typeof format !== 'string' || !Object.hasOwn(OUTPUT_FORMATS, format)) throw new AppError('WRONG_SHAPE', `format: must be one of ${Object.keys(OUTPUT_FORMATS).join(', ')}`);
  return { query: record['query'], format: format as OutputFormat };
}

export function analyticsRouter(services: AnalyticsServices, options: AnalyticsOptions): Router {
  const router = Router();
  const auth = authenticate(services.accounts, ['product'], options.authFailuresPerMinute);
  const inFlight = new InFlight(ANALYTICS_IN_FLIGHT_PER_ORG, 'analytics queries');
  const scoped: RequestHandler = (req, _res, next) => {
    next(req.principal.token.scopes.includes(ANALYTICS_SCOPE) ? undefined : new AppError('NOT_FOUND', `${ANALYTICS_SQL_PATH} needs a product token with the scope ${ANALYTICS_SCOPE}`));
  };
  router.post(ANALYTICS_SQL_PATH, auth, scoped, rateLimit(services.rateLimiter, 'analytics-sql', options.ratePerMinute), (req, res, next) => {
    const run = async (): Promise<void> => {
      const { query, format } = parseAnalyticsBody(req.body);
      const org = req.principal.org;
      const release = inFlight.take(org.id, res);
      try {
        const projectIds = services.accounts.entries<Project>('project.').map(([, p]) => p).filter((p) => p.orgId === org.id).map((p) => p.id);
        const result = await services.sql.run(query, format, { orgId: org.id, projectIds });
        res.status(200).type(OUTPUT_FORMATS[result.format]).send(result.body);
      } finally {
        release();
      }
    };
    run().catch(next);
  });
  return router;
}
