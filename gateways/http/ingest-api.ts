// Ingestion API (spec 2 §4) under `<INGEST_BASE_PATH>/project/{project}/datasource/{datasource}`:
// batched contact upserts, contact deletion, events, the GET /stream probe and the specs.
// A POST body's shape is checked with the batch schema (schemas/ingest.ts, core/ingest/batch.ts),
// then each item on its own (core/ingest/validate.ts: the native rules and the datasource's specs).
// Authentication per spec 2 §5: datasource tokens for their datasource, product tokens with
// ingest scopes for every datasource of their project; anything else the token may not touch
// is a 404. Errors are `{ message }` (spec 2 §7); a 429 has an empty body. Back-pressure: when
// the ingest writer is more than `maxLagSeconds` behind this gateway's publishes, batches are
// refused with 429 and Retry-After (spec 2 §7 allows 429) instead of being accepted for minutes
// of invisibility; the lag is the `ingest_lag_seconds` gauge and the `ingest` detail of /health.
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError, ERRORS } from '../../core/errors';
import { BatchSpecs, unfaithfulByItem, validateContact, validateEvent, type ContactPatch, type Datasource, type EventRecord, type ItemOutcome, type RefusedSpecs, type UnfaithfulNumber } from '../../core/ingest';
import { batchItems } from '../../core/ingest/batch';
import { idProblem } from '../../core/ingest/values';
import type { Organization, Project, RateLimits } from '../../core/accounts';
import type { ContactReader, DatasourceCatalog, IngestAccounts, IngestBus, IngestLag, SpecRecorder, UsageReader } from '../../core/ingest/ports';
import { authenticate } from './auth';
import { rateLimit } from './rate-limit';
import type { ErrorFormatter } from './errors';
import { reportInHealth } from './ops';

declare module 'express-serve-static-core' {
  interface Request {
    datasource: Datasource;
  }
}

/** What the ingestion routes need, built once per process (roles/gateway-http.ts). */
export interface IngestServices {
  readonly accounts: IngestAccounts;
  readonly datasources: DatasourceCatalog;
  readonly specs: SpecRecorder;
  readonly bus: IngestBus;
  readonly usage: UsageReader;
  readonly contacts: ContactReader;
  readonly rateLimiter: RateLimits;
}

/** Bodies are read and checked (JSON, UTF-8, size) once for every API by gateways/http/guards.ts. */
export interface IngestOptions {
  readonly ratePerMinute: number;
  /** Failed authentications per client address: the app's counter, or a per-minute limit. */
  readonly authFailuresPerMinute: Parameters<typeof authenticate>[2];
  /** How long a DELETE waits for the writer before answering anyway (the deletion is durable either way). */
  readonly deleteWaitMs: number;
  /** Past this lag of the ingest writer, POST batches are answered 429 with Retry-After (default DEFAULT_MAX_LAG_SECONDS; 0: never). */
  readonly maxLagSeconds?: number;
}

/**
 * The writer's lag (reception → queryable) past which batches are refused: at the writer's
 * pace the oldest accepted request is then this old and not yet queryable. 10 s keeps the
 * visibility bounded at saturation with room for a short stall (a merge, a restart of the
 * writer) before clients are asked to slow down.
 */
export const DEFAULT_MAX_LAG_SECONDS = 10;

/** Seconds a refused client waits: until the writer should be back under the limit, 1 to 60. */
export const retryAfterSeconds = (lag: IngestLag, maxLagSeconds: number): number => Math.min(60, Math.max(1, Math.ceil(lag.seconds - maxLagSeconds)));

/**
 * Back-pressure on POST batches: while the writer is more than `maxLagSeconds` behind, a 429
 * (empty body, spec 2 §7) with Retry-After and X-RateLimit-Reset at the same moment.
 */
export function writerBehind(bus: IngestBus, maxLagSeconds: number): RequestHandler {
  return (_req, res, next) => {
    const lag = bus.lag();
    if (maxLagSeconds <= 0 || lag.seconds <= maxLagSeconds) {
      next();
      return;
    }
    const wait = retryAfterSeconds(lag, maxLagSeconds);
    res.setHeader('Retry-After', String(wait));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + wait));
    next(new AppError('RATE_LIMITED', `the ingest writer is ${lag.seconds.toFixed(1)} s behind (more than ${maxLagSeconds} s): nothing was stored; retry after ${wait} s (Retry-After)`));
  };
}

/**
 * `{ message }` bodies of spec 2 §7, and a 429 has no body. An over-size body is a 413 (with
 * the same `{ message }` body): a 400 would tell a client nothing it can fix by splitting.
 */
export const ingestErrorFormat: ErrorFormatter = (err) => {
  if (err.code === 'RATE_LIMITED') return { status: 429, body: undefined };
  return { status: ERRORS[err.code].status, body: { message: err.message } };
};

type Scope = 'ingest:write' | 'ingest:read';
type AsyncHandler = (req: Request, res: Response) => Promise<void>;
const handle = (fn: AsyncHandler): RequestHandler => (req, res, next) => { fn(req, res).catch(next); };

export function ingestRouter(services: IngestServices, options: IngestOptions): Router {
  const router = Router({ mergeParams: true });
  const auth = authenticate(services.accounts, ['datasource', 'product'], options.authFailuresPerMinute);
  const maxLagSeconds = options.maxLagSeconds ?? DEFAULT_MAX_LAG_SECONDS;
  const behind = writerBehind(services.bus, maxLagSeconds);
  reportInHealth('ingest', () => {
    const lag = services.bus.lag();
    return { writerLagSeconds: Number(lag.seconds.toFixed(3)), unappliedRequests: lag.unapplied, maxLagSeconds, refusing: maxLagSeconds > 0 && lag.seconds > maxLagSeconds };
  });

  /** The datasource of the path, if this token may use it with `scopes` (any of them); else 404. */
  const datasourceFor = (scopes: readonly Scope[]): RequestHandler => (req, _res, next) => {
    const { token } = req.principal;
    const datasource = services.datasources.datasource(String(req.params['datasource']));
    const allowed = datasource !== undefined && datasource.projectId === req.params['project'] && datasource.orgId === token.orgId && (
      token.kind === 'datasource' ? token.datasourceId === datasource.id : token.projectId === datasource.projectId && scopes.some((s) => token.scopes.includes(s)));
    if (!allowed) {
      next(new AppError('NOT_FOUND', 'no such project or datasource for this token: check both ids (they are shown with the datasource) and the token\'s datasource or scopes'));
      return;
    }
    req.datasource = datasource;
    next();
  };

  /** Per datasource, per endpoint (spec 2 §8), shared by all replicas through the KV counters. */
  const gate = (endpoint: string): RequestHandler => rateLimit(services.rateLimiter, `ingest-${endpoint}`, options.ratePerMinute, (req) => req.datasource);

  const answer = (res: Response, outcomes: readonly ItemOutcome[]): void => {
    const successful = outcomes.filter((o) => o.status === 'success').length;
    res.status(successful === 0 ? 422 : 202).json({ entity: { successful, failed: outcomes.length - successful, items: outcomes } });
  };

  const header = (req: Request): { orgId: string; projectId: string; datasourceId: string; receivedAt: string } => ({
    orgId: req.datasource.orgId, projectId: req.datasource.projectId, datasourceId: req.datasource.id, receivedAt: new Date(req.receivedAt).toISOString(),
  });

  const stamp: RequestHandler = (req, _res, next) => { req.receivedAt = Date.now(); next(); };

  /**
   * Validates the batch, records the names it introduces, and, if the spec store refused some
   * at the datasource's cap, validates it again with those refused (items using one fail).
   */
  const validated = async <T>(req: Request, pass: (specs: BatchSpecs, numbers: Map<number, UnfaithfulNumber[]>) => T & { specs: BatchSpecs }): Promise<T> => {
    const numbers = numbersOf(req);
    const first = pass(new BatchSpecs(services.datasources.specView(req.datasource)), numbers);
    const refused = await record(services, req.datasource, first.specs);
    // The names granted in the first pass are recorded; the second pass introduces no others.
    return refused ? pass(new BatchSpecs(services.datasources.specView(req.datasource), refused), numbers) : first;
  };

  router.post('/stream/contacts', stamp, auth, datasourceFor(['ingest:write']), gate('contacts'), behind, handle(async (req, res) => {
    const items = batchItems(req.body);
    const { outcomes, contacts } = await validated(req, (specs, numbers) => {
      const pass = { specs, outcomes: [] as ItemOutcome[], contacts: [] as ContactPatch[] };
      items.forEach((item, index) => {
        const result = validateContact(item, specs, numbers.get(index));
        pass.outcomes.push(result.outcome);
        if (result.patch) pass.contacts.push(result.patch);
      });
      return pass;
    });
    const failed = items.length - contacts.length;
    await services.bus.publish(contacts.length > 0
      ? { kind: 'contacts', ...header(req), contacts, failed }
      : { kind: 'rejected', ...header(req), endpoint: 'contacts', failed });
    answer(res, outcomes);
  }));

  router.post('/stream/events', stamp, auth, datasourceFor(['ingest:write']), gate('events'), behind, handle(async (req, res) => {
    const items = batchItems(req.body);
    const receivedIso = new Date(req.receivedAt).toISOString();
    const { outcomes, accepted } = await validated(req, (specs, numbers) => {
      const pass = { specs, outcomes: [] as ItemOutcome[], accepted: [] as Array<{ event: EventRecord; userData: ContactPatch | null }> };
      items.forEach((item, index) => {
        const result = validateEvent(item, specs, req.receivedAt, receivedIso, numbers.get(index));
        pass.outcomes.push(result.outcome);
        if (result.event) pass.accepted.push({ event: result.event, userData: result.userData });
      });
      return pass;
    });
    const failed = items.length - accepted.length;
    await services.bus.publish(accepted.length > 0
      ? { kind: 'events', ...header(req), items: accepted, failed }
      : { kind: 'rejected', ...header(req), endpoint: 'events', failed });
    answer(res, outcomes);
  }));

  router.delete('/stream/contacts/:userId', stamp, auth, datasourceFor(['ingest:write']), gate('delete'), handle(async (req, res) => {
    const userId = String(req.params['userId']);
    const problem = idProblem(userId);
    if (problem) throw new AppError('WRONG_SHAPE', `userId ${problem}`);
    const seq = await services.bus.publish({ kind: 'delete', ...header(req), userId });
    // Durable from here; waiting makes "gone from every query" true when the 204 arrives (DESIGN §5).
    await services.bus.waitApplied(seq, options.deleteWaitMs);
    res.status(204).end();
  }));

  router.get('/stream/contacts/:userId', stamp, auth, datasourceFor(['ingest:read', 'ingest:write']), gate('contact'), handle(async (req, res) => {
    const userId = String(req.params['userId']);
    const problem = idProblem(userId);
    if (problem) throw new AppError('WRONG_SHAPE', `userId ${problem}`);
    const contact = await services.contacts.contact(req.datasource.projectId, req.datasource.id, userId);
    if (!contact) throw new AppError('NOT_FOUND', `no contact "${userId}" in this datasource (written contacts appear within about a second)`);
    res.json({ entity: contact });
  }));

  router.get('/stream', stamp, auth, datasourceFor(['ingest:read', 'ingest:write']), gate('stream'), handle(async (req, res) => {
    const ds = req.datasource;
    const org = services.accounts.org(ds.orgId) as Organization;
    const project = services.accounts.project(ds.projectId) as Project | undefined;
    res.json({
      organization: { id: org.id, name: org.name },
      project: { id: ds.projectId, name: project?.name ?? null },
      datasource: { id: ds.id, name: ds.name, strict: ds.strict, createdAt: ds.createdAt },
      usage: await services.usage.recent(ds.id),
    });
  }));

  router.get('/stream/specs/attributes', stamp, auth, datasourceFor(['ingest:read', 'ingest:write']), gate('specs'), (req, res) => {
    res.json({ entities: services.datasources.attributes(req.datasource.id).map(({ name, type, source }) => ({ name, type, source })) });
  });

  router.get('/stream/specs/events', stamp, auth, datasourceFor(['ingest:read', 'ingest:write']), gate('specs'), (req, res) => {
    res.json({
      entities: services.datasources.eventTypes(req.datasource.id).map((e) => ({
        eventType: e.eventType, source: e.source, parameters: e.parameters.map(({ name, type, source }) => ({ name, type, source })),
      })),
    });
  });

  return router;
}

/** Records the names the batch introduced; returns those refused at the datasource's caps, if any. */
async function record(services: IngestServices, datasource: Datasource, specs: BatchSpecs): Promise<RefusedSpecs | null> {
  const news = specs.news;
  if (news.attributes.size + news.eventTypes.size + news.parameters.size === 0) return null;
  return services.specs.recordInferred(datasource.id, news);
}

/** Numbers of the body JSON.parse changed (core/ingest/numbers.ts), by item index. */
function numbersOf(req: Request): Map<number, UnfaithfulNumber[]> {
  const raw = req.rawBody;
  if (raw === undefined) return new Map();
  return unfaithfulByItem(typeof raw === 'string' ? raw : raw.toString('utf8'));
}

declare module 'express-serve-static-core' {
  interface Request {
    receivedAt: number;
  }
}
