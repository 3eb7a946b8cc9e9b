// SMS API v1 (spec 1 §4) under /transactional/v1 with api_sms tokens (one project), and the
// legacy API at the root of the host with account-wide legacy tokens (spec 1 §1, §9): the
// same endpoints and shapes, no webhooks, no SMPP.
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { TokenKind } from '../../core/accounts';
import { AppError } from '../../core/errors';
import { compile, LOOKUP_FIELDS, parseUrl, SMS_FIELDS, type Catalogue, type CompiledQuery } from '../../core/filters/grammar-a';
import { compileStats, type CompiledStats, type StatsSubject } from '../../core/filters/grammar-a/stats';
import { isId } from '../../core/ids';
import { toLookupEntity, type Lookup } from '../../core/lookup';
import { fromMicros } from '../../core/money';
import { toQuoteItemEntity, toQuoteTotal, toSmsEntity, type SmsMessage, type Submitter, type Visibility } from '../../core/sms';
import { authenticate } from './auth';
import type { HttpDeps } from './deps';
import { rateLimit, type AddressCounter, type SmsRateLimitEndpoint } from './rate-limit';
import { sendJson, sendJsonRead } from './respond';

export interface SmsApiOptions {
  readonly tokenKinds: readonly TokenKind[];
  /** v1 under /transactional/v1; legacy at the root (account-wide tokens). */
  readonly flavor: 'v1' | 'legacy';
  /** The app's counter of failed requests per client address (failed authentications count there). */
  readonly addresses?: AddressCounter;
}

type AsyncHandler = (req: Request, res: Response) => Promise<void>;
const handle = (fn: AsyncHandler): RequestHandler => (req, res, next) => { fn(req, res).catch(next); };

function visibility(req: Request): Visibility {
  const { token, org } = req.principal;
  return { orgId: org.id, projectId: token.kind === 'legacy' ? null : token.projectId };
}

function visible(v: Visibility, record: { orgId: string; projectId: string }): boolean {
  return record.orgId === v.orgId && (v.projectId === null || record.projectId === v.projectId);
}

function pathId(req: Request, what: string): string {
  const id = String(req.params['id'] ?? '');
  if (!isId(id)) throw new AppError('INVALID_ID', `"${id.slice(0, 64)}" is not a ${what} id`);
  return id;
}

function listQuery(req: Request, catalogue: Catalogue): CompiledQuery {
  const search = new URL(req.originalUrl, 'http://local').searchParams;
  return compile(parseUrl(search, { ignore: ['access_token'] }), catalogue);
}

/** GET /sms/stats, GET /lookup/stats: the list filter plus `_group` (docs/grammar-a.md, "Statistics"). */
function statsQuery(req: Request, subject: StatsSubject): CompiledStats {
  const search = new URL(req.originalUrl, 'http://local').searchParams;
  return compileStats(parseUrl(search, { ignore: ['access_token'] }), subject);
}

export function smsApiRouter(deps: HttpDeps, options: SmsApiOptions): Router {
  const { engines, config, services } = deps;
  const router = Router();
  const auth = authenticate(engines.directory, options.tokenKinds, options.addresses ?? config.rateLimits.perMinute);
  const limited = (endpoint: SmsRateLimitEndpoint, perMinute = config.rateLimits.perMinute): RequestHandler[] => [auth, rateLimit(engines.rateLimiter, `${options.flavor}-${endpoint}`, perMinute)];
  // Bodies arrive parsed: the app's route guard (gateways/http/guards.ts) checked the
  // Content-Type (415) and decoded the JSON strictly (400) before any router runs.
  const source = options.flavor === 'legacy' ? 'legacy' : 'http';
  const submitter = (req: Request): Submitter => {
    const v = visibility(req);
    return { orgId: v.orgId, projectId: v.projectId, tokenId: req.principal.token.id, source, currency: req.principal.org.currency };
  };

  router.get('/organization/account', ...limited('balance'), handle(async (req, res) => {
    const balance = await engines.balances.get(req.principal.org.id);
    res.json({ entity: { currency: balance?.currency ?? req.principal.org.currency, available: fromMicros(balance?.availableMicros ?? 0) } });
  }));

  for (const kind of ['sms', 'lookup'] as const) {
    router.get(`/${kind}/price-profile/me/countries`, ...limited(`${kind}-prices`), (req, res) => {
      const prices = engines.directory.prices(req.principal.org.id, kind);
      res.json({ entities: prices.map((p) => ({ country: p.country, currency: p.currency, price: fromMicros(p.priceMicros) })) });
    });
  }

  router.post('/sms', ...limited('sms-create'), handle(async (req, res) => {
    const message = await services.acceptance.submitOne(submitter(req), req.body);
    sendJson(res, 201, { entity: toSmsEntity(message) });
  }));

  router.post('/sms/bulk', ...limited('sms-bulk', config.rateLimits.bulkPerMinute), handle(async (req, res) => {
    const result = await services.acceptance.submitBulk(submitter(req), req.body);
    sendJson(res, 201, { entities: result.entities.map(toSmsEntity), errors: result.errors });
  }));

  // DESIGN §4: what POST /sms (an object) or POST /sms/bulk (an array) would do with this body,
  // checked and priced by the acceptance core's own step; nothing charged, queued or claimed.
  router.post('/sms/quote', ...limited('sms-quote'), handle(async (req, res) => {
    const quote = await services.acceptance.quote(submitter(req), req.body);
    const { org } = req.principal;
    const balance = await engines.balances.get(org.id);
    const total = toQuoteTotal(quote, balance?.currency ?? org.currency, balance?.availableMicros ?? 0);
    const items = quote.items.map((i) => toQuoteItemEntity(i.index, i.priced));
    res.json(quote.single ? { entity: items[0], total } : { entities: items, errors: quote.errors, total });
  }));

  router.get('/sms', ...limited('sms-list'), handle(async (req, res) => {
    const compiled = listQuery(req, SMS_FIELDS);
    if (compiled.group) {
      res.json({ entities: await services.messageHistory.groupCounts(visibility(req), compiled) });
      return;
    }
    const messages = await services.messageHistory.list(visibility(req), compiled);
    res.json({ entities: messages.map(toSmsEntity) });
  }));

  router.get('/sms/stats', ...limited('sms-stats'), handle(async (req, res) => {
    res.json({ entities: await services.stats.sms(visibility(req), statsQuery(req, 'sms'), req.principal.org.currency) });
  }));

  const visibleMessage = async (req: Request): Promise<SmsMessage> => {
    const id = pathId(req, 'message');
    const v = visibility(req);
    const current: SmsMessage | null = await services.states.get(id);
    const message = current && visible(v, current) ? current : current ? null : await services.messageHistory.get(v, id);
    if (!message) throw new AppError('NOT_FOUND', `message ${id} does not exist or is not visible to this token`);
    return message;
  };

  // DESIGN §4 Scheduling: a scheduled message canceled while it waits (refunded, a `canceled`
  // DLR); 409 once it left, 404 for an id the token does not see. v1 only: the legacy API has no
  // scheduled sends (spec 1 §1: its request details are not shown; it keeps its fields).
  const scheduledCancel = services.scheduledCancel;
  if (options.flavor === 'v1' && scheduledCancel) {
    router.post('/sms/:id/cancel', ...limited('sms-cancel'), handle(async (req, res) => {
      const id = pathId(req, 'message');
      res.json({ entity: toSmsEntity(await scheduledCancel.cancel(visibility(req), id)) });
    }));
  }

  router.get('/sms/:id', ...limited('sms-read'), handle(async (req, res) => {
    sendJsonRead(req, res, { entity: toSmsEntity(await visibleMessage(req)) });
  }));

  // Beyond the spec: every status transition of a message and each webhook attempt to deliver
  // it as a DLR (DESIGN §4: "every attempt is recorded and queryable"). docs/lifecycle.md.
  router.get('/sms/:id/dlrs', ...limited('sms-read'), handle(async (req, res) => {
    const message = await visibleMessage(req);
    const [entities, workflow] = await Promise.all([services.dlrHistory.forMessage(message.orgId, message.id), services.dlrHistory.workflowOf(message.id)]);
    res.json({ entities, workflow });
  }));

  router.post('/lookup', ...limited('lookup-create'), handle(async (req, res) => {
    const v = visibility(req);
    const lookup = await services.lookups.run({ orgId: v.orgId, projectId: v.projectId, tokenId: req.principal.token.id, source }, req.body);
    res.status(201).json({ entity: toLookupEntity(lookup) });
  }));

  router.get('/lookup', ...limited('lookup-list'), handle(async (req, res) => {
    const compiled = listQuery(req, LOOKUP_FIELDS);
    if (compiled.group) {
      res.json({ entities: await services.lookupHistory.groupCounts(visibility(req), compiled) });
      return;
    }
    const lookups = await services.lookupHistory.list(visibility(req), compiled);
    res.json({ entities: lookups.map(toLookupEntity) });
  }));

  router.get('/lookup/stats', ...limited('lookup-stats'), handle(async (req, res) => {
    res.json({ entities: await services.stats.lookups(visibility(req), statsQuery(req, 'lookup'), req.principal.org.currency) });
  }));

  router.get('/lookup/:id', ...limited('lookup-read'), handle(async (req, res) => {
    const id = pathId(req, 'lookup');
    const v = visibility(req);
    const current: Lookup | null = await services.lookupStore.get(id);
    const lookup = current && visible(v, current) ? current : current ? null : await services.lookupHistory.get(v, id);
    if (!lookup) throw new AppError('NOT_FOUND', `lookup ${id} does not exist or is not visible to this token`);
    sendJsonRead(req, res, { entity: toLookupEntity(lookup) });
  }));

  return router;
}
