// The admin API (DESIGN §4 "Provisioning over HTTP", docs/operations.md): provisioning for test
// suites and operators under /admin/v1, what the admin CLI does, through the same functions
// (core/provisioning/provisioning.ts). Mounted only when ADMIN_TOKEN is set (every /admin path is
// a 404 otherwise). `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time; anything
// else is a 401 (counted per client address, as failed authentications of the other APIs).
// Errors are `{ title, status, detail }` (a 422 adds `fields`). Every call is one audit log
// line: who (the admin token, never its value), what, the ids, the status.
// A 201/200 answers once this process's account mirror holds the write, so a request that
// follows on the same process (POST /sms with the new token) sees it; other replicas see it
// within milliseconds.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { parseAdminBody, type Authenticator, type Organization, type Price, type PriceKind, type Project, type Token } from '../../core/accounts';
import { tokenView, type Provisioning } from '../../core/provisioning/provisioning';
import { AppError, ERRORS } from '../../core/errors';
import { receiverSecret } from '../../core/sms';
import type { Logger } from '../../infra/logger';
import type { ErrorFormatter } from './errors';
import type { AddressCounter } from './rate-limit';
import { rateLimitHeaderValues } from './rate-limit';
import { sendJson } from './respond';

export { ADMIN_BASE } from '../../schemas/admin';

/** What the serving process reads of the accounts: its mirror (stores/account-directory.ts). */
export interface AdminMirror extends Authenticator {
  org(id: string): Organization | undefined;
  project(id: string): Project | undefined;
  token(id: string): Token | undefined;
  price(orgId: string, kind: PriceKind, country: string): Price | undefined;
  entry<T>(key: string): T | undefined;
}

export interface AdminServices {
  /** ADMIN_TOKEN (config/index.ts: at least 32 characters). */
  readonly token: string;
  readonly provisioning: Provisioning;
  readonly mirror: AdminMirror;
  /** The mirror key of a datasource (stores/datasource-store.ts DATASOURCE_KEYS). */
  readonly datasourceKey: (id: string) => string;
}

export interface AdminOptions {
  readonly failures: AddressCounter;
  readonly log: Logger;
  /** How long a write may take to reach this process's mirror before the answer goes out anyway. */
  readonly mirrorWaitMs?: number;
}

/** `{ title, status, detail }` for every error; a 422 names each field in the detail and adds `fields`. */
export const adminErrorFormat: ErrorFormatter = (err) => {
  const spec = ERRORS[err.code];
  if (err.code === 'VALIDATION_FAILED' && err.fields) {
    const detail = `invalid fields: ${Object.entries(err.fields).map(([field, messages]) => `${field}: ${messages.join('; ')}`).join('; ')}`;
    return { status: spec.status, body: { title: spec.title, status: spec.status, detail, fields: err.fields } };
  }
  return { status: spec.status, body: { title: spec.title, status: spec.status, detail: err.message } };
};

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** The audit record a handler fills in (res.locals.audit) and the finish listener logs. */
interface Audit {
  action: string;
  ids: Record<string, string>;
}

function auditOf(res: Response): Audit {
  const locals = res.locals as { audit?: Audit };
  locals.audit ??= { action: 'unknown', ids: {} };
  return locals.audit;
}

/** One line per admin call, written when the answer is sent (refused calls included). */
function auditTrail(log: Logger): RequestHandler {
  return (req, res, next) => {
    const audit = auditOf(res);
    audit.action = `${req.method} ${req.path}`;
    res.once('finish', () => {
      const who = (res.locals as { admin?: boolean }).admin === true ? 'admin token' : 'unauthenticated';
      (req.log ?? log).info({ audit: 'admin', who, action: audit.action, ...audit.ids, status: res.statusCode }, `admin: ${audit.action} ${res.statusCode}`);
    });
    next();
  };
}

/** The bearer ADMIN_TOKEN, and nothing else: no access_token in the query (it would reach URLs and proxies' logs). */
function adminAuth(expected: string, failures: AddressCounter): RequestHandler {
  const wanted = digest(expected);
  return (req, res, next) => {
    const refuse = (detail: string): void => {
      const decision = failures.note(req.ip, true);
      for (const [name, value] of Object.entries(rateLimitHeaderValues(decision))) res.setHeader(name, value);
      next(decision.exceeded ? new AppError('RATE_LIMITED', 'too many failed authentications from this address; retry after X-RateLimit-Reset') : new AppError('UNAUTHORIZED', detail));
    };
    if (req.originalUrl.includes('?') && req.query['access_token'] !== undefined) {
      refuse('the admin API takes its token in the Authorization header only');
      return;
    }
    const authorization = req.headers.authorization;
    const repeated = req.rawHeaders.filter((_, i) => i % 2 === 0).filter((name) => name.toLowerCase() === 'authorization').length > 1;
    const match = authorization === undefined || repeated ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) {
      refuse('missing or malformed admin token: send "Authorization: Bearer <ADMIN_TOKEN>" once');
      return;
    }
    // Digests of equal length: the comparison takes the same time whatever the given token's length and content.
    if (!timingSafeEqual(digest(match[1]), wanted)) {
      refuse('the admin token is wrong');
      return;
    }
    (res.locals as { admin?: boolean }).admin = true;
    next();
  };
}

type AsyncHandler = (req: Request, res: Response) => Promise<void>;
const handle = (action: string, fn: AsyncHandler): RequestHandler => (req, res, next) => {
  auditOf(res).action = action;
  fn(req, res).catch(next);
};

const param = (req: Request, name: string): string => String(req.params[name] ?? '');

export function adminRouter(services: AdminServices, options: AdminOptions): Router {
  const { provisioning, mirror } = services;
  const waitMs = options.mirrorWaitMs ?? 5000;
  const router = Router();
  router.use(auditTrail(options.log), adminAuth(services.token, options.failures));

  /** Until this process's mirror shows the write (a bounded wait: the write itself is durable already). */
  const visible = async (what: string, seen: () => boolean): Promise<void> => {
    const deadline = Date.now() + waitMs;
    while (!seen()) {
      if (Date.now() > deadline) {
        options.log.warn({ what }, 'admin: the account mirror of this process did not show the write in time; answering anyway');
        return;
      }
      await new Promise<void>((resolve) => { setTimeout(resolve, 5); });
    }
  };
  const ids = (res: Response, found: Record<string, string>): void => { Object.assign(auditOf(res).ids, found); };

  router.post('/organizations', handle('organization.create', async (req, res) => {
    const body = parseAdminBody('AdminOrganizationCreate', req.body);
    const org = await provisioning.createOrganization({ name: body.name, ...(body.currency ? { currency: body.currency } : {}), ...(body.smppEnabled !== undefined ? { smppEnabled: body.smppEnabled } : {}) });
    ids(res, { organization: org.id });
    await visible('organization', () => mirror.org(org.id) !== undefined);
    sendJson(res, 201, { entity: org });
  }));

  router.post('/organizations/:org/projects', handle('project.create', async (req, res) => {
    ids(res, { organization: param(req, 'org') });
    const body = parseAdminBody('AdminProjectCreate', req.body);
    const project = await provisioning.createProject(param(req, 'org'), body.name);
    ids(res, { project: project.id });
    await visible('project', () => mirror.project(project.id) !== undefined);
    sendJson(res, 201, { entity: project });
  }));

  router.post('/organizations/:org/tokens', handle('token.create', async (req, res) => {
    ids(res, { organization: param(req, 'org') });
    const body = parseAdminBody('AdminTokenCreate', req.body);
    const created = await provisioning.createToken({
      orgId: param(req, 'org'), kind: body.kind, projectId: body.project ?? null, datasourceId: body.datasource ?? null, scopes: body.scopes ?? [], ...(body.name ? { name: body.name } : {}),
    });
    // The id only: the value is in the answer, once, and in no log.
    ids(res, { tokenId: created.token.id, kind: created.token.kind, ...(created.token.projectId ? { project: created.token.projectId } : {}), ...(created.token.datasourceId ? { datasource: created.token.datasourceId } : {}) });
    await visible('token', () => mirror.authenticate(created.value) !== undefined);
    sendJson(res, 201, { entity: { ...tokenView(created.token), value: created.value } });
  }));

  router.put('/organizations/:org/balance', handle('balance.set', async (req, res) => {
    ids(res, { organization: param(req, 'org') });
    const body = parseAdminBody('AdminBalanceSet', req.body);
    sendJson(res, 200, { entity: await provisioning.setBalance(param(req, 'org'), body.amount, body.currency) });
  }));

  router.post('/organizations/:org/balance/top-up', handle('balance.top-up', async (req, res) => {
    ids(res, { organization: param(req, 'org') });
    const body = parseAdminBody('AdminTopUp', req.body);
    sendJson(res, 200, { entity: await provisioning.topUp(param(req, 'org'), body.amount) });
  }));

  router.post('/organizations/:org/prices', handle('price.set', async (req, res) => {
    ids(res, { organization: param(req, 'org') });
    const body = parseAdminBody('AdminPriceSet', req.body);
    const price = await provisioning.setPrice(param(req, 'org'), { kind: body.kind, country: body.country, price: body.price, ...(body.currency ? { currency: body.currency } : {}) });
    const kind = body.kind as PriceKind;
    ids(res, { kind, country: price.country });
    await visible('price', () => {
      const seen = mirror.price(param(req, 'org'), kind, price.country);
      return seen?.priceMicros === price.priceMicros && seen.currency === price.currency;
    });
    sendJson(res, 200, { entity: { kind, country: price.country, currency: price.currency, price: price.priceMicros / 1_000_000 } });
  }));

  router.put('/organizations/:org/tokens/:token/webhook', handle('webhook.set', async (req, res) => {
    ids(res, { organization: param(req, 'org'), tokenId: param(req, 'token') });
    const body = parseAdminBody('AdminWebhookSet', req.body);
    const updated = await provisioning.setWebhook(param(req, 'org'), param(req, 'token'), body.url, body.secret);
    const webhook = updated.webhook;
    if (!webhook) throw new AppError('INTERNAL', 'the webhook was not stored; retry');
    await visible('webhook', () => {
      const seen = mirror.token(updated.id)?.webhook;
      return seen?.url === webhook.url && seen.secret === webhook.secret;
    });
    sendJson(res, 200, { entity: { token: updated.id, url: webhook.url, secret: receiverSecret(webhook) } });
  }));

  router.post('/organizations/:org/projects/:project/datasources', handle('datasource.create', async (req, res) => {
    ids(res, { organization: param(req, 'org'), project: param(req, 'project') });
    const body = parseAdminBody('AdminDatasourceCreate', req.body);
    const datasource = await provisioning.createDatasource(param(req, 'org'), param(req, 'project'), { name: body.name, ...(body.strict !== undefined ? { strict: body.strict } : {}) });
    ids(res, { datasource: datasource.id });
    await visible('datasource', () => mirror.entry(services.datasourceKey(datasource.id)) !== undefined);
    sendJson(res, 201, { entity: datasource });
  }));

  return router;
}
