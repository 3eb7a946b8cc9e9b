// POST /sms/quote (DESIGN §4 "POST /sms/quote prices without charging") over in-memory fakes of
// the acceptance core's ports: the quote's figures are what a send of the same body charges,
// its refusals are the send's (validation, unknown country price, opt-out, wrong types, empty
// and over-size bulks), and a quote charges, stores, queues and claims nothing. Then the route
// in-process: v1 and legacy, its own rate-limit counter, the token's own organization's prices.
import type { Config } from '../../config';
import type { Organization, Price, Principal, Token } from '../../core/accounts/types';
import { AppError, ERRORS } from '../../core/errors';
import { SmsAcceptance, type Submitter } from '../../core/sms/acceptance';
import type { SmsMessage } from '../../core/sms/message';
import { fromMicros } from '../../core/money';
import { createLogger } from '../../infra/logger';
import { createHttpApp, SMS_API_BASE, type SmsServices } from '../../gateways/http/app';
import type { Engines } from '../../roles/engines';
import { listenLocal, type Listening } from '../support/listen';

const DE = '+4915112345678';
const DE_OPTED_OUT = '+4915199999999';
const US = '+12025550123';
/** Per organization, per country, per segment (micros). */
const PRICES: Record<string, Record<string, number>> = { 'org-1': { DE: 75_000 }, 'org-2': { DE: 50_000, US: 9_000 } };

/** The acceptance core over in-memory ports that record every write. */
class Ports {
  balance = 10_000_000;
  readonly writes: string[] = [];
  readonly queued: SmsMessage[] = [];

  readonly acceptance = new SmsAcceptance({
    prices: {
      price: (orgId: string, _kind: string, country: string): Price | undefined => {
        const micros = PRICES[orgId]?.[country];
        return micros === undefined ? undefined : { country, currency: 'EUR', priceMicros: micros };
      },
    },
    funds: {
      charge: async (_o: string, micros: number) => {
        this.writes.push(`charge ${micros}`);
        if (micros > this.balance) return false;
        this.balance -= micros;
        return true;
      },
      credit: async (_o: string, micros: number) => {
        this.writes.push(`credit ${micros}`);
        this.balance += micros;
      },
      settle: () => { this.writes.push('settle'); },
      isHeld: async () => false,
    },
    states: { putAll: async () => { this.writes.push('states'); }, get: async () => null },
    clientIds: {
      claim: async () => { this.writes.push('claim'); return null; },
      takeOver: async () => false,
      release: async () => { this.writes.push('release'); },
    },
    queue: { enqueue: async (ms: readonly SmsMessage[]) => { this.writes.push('enqueue'); this.queued.push(...ms); } },
    // One answer at hand, one through a promise: both paths of the opt-out check.
    optOuts: { isOptedOut: (_p: string, number: string) => (number === DE_OPTED_OUT.slice(1) || number === DE_OPTED_OUT ? Promise.resolve(true) : false) },
  });
}

const submitter = (orgId = 'org-1', projectId: string | null = 'project-1'): Submitter => ({ orgId, projectId, tokenId: 't1', source: 'http', currency: 'EUR' });
const item = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({ from: 'TestCo', to: DE, text: 'Hello', ...overrides });
const LONG_GSM = 'x'.repeat(161);
const UCS2 = 'Grüße 😀 '.repeat(10);

/** The outcome of a call as data: its value, or the error code, status and fields it threw. */
async function outcome<T>(fn: () => Promise<T>): Promise<{ value: T } | { error: { code: string; status: number; fields?: unknown } }> {
  try {
    return { value: await fn() };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { error: { code: err.code, status: ERRORS[err.code].status, ...(err.fields ? { fields: err.fields } : {}) } };
  }
}

describe('DESIGN §4 POST /sms/quote over the acceptance core (in-memory ports)', () => {
  test.each([
    ['a 1-segment GSM-7 text', item()],
    ['a 2-segment GSM-7 text', item({ text: LONG_GSM })],
    ['a UCS-2 text of several segments', item({ text: UCS2, allowUnicode: true })],
    ['a transliterated text', item({ text: '“Café” – naïve' })],
  ])('spec 1 §2.2: the quote of %s is what the send charges and reports (segments, encoding, chars, country, prices)', async (_name, body) => {
    const ports = new Ports();
    const quote = await ports.acceptance.quote(submitter(), body);
    expect(ports.writes).toEqual([]);
    const before = ports.balance;
    const sent = await ports.acceptance.submitOne(submitter(), body);
    expect(quote.items).toHaveLength(1);
    const priced = quote.items[0]?.priced;
    expect({
      messagesCount: priced?.encoded.messagesCount, encoding: priced?.encoded.encoding, charsCount: priced?.encoded.charsCount, deliveredText: priced?.encoded.deliveredText,
      country: priced?.country, pricePerSmsMicros: priced?.price.priceMicros, priceUserMicros: priced?.priceUserMicros, total: quote.totalMicros,
    }).toEqual({
      messagesCount: sent.messagesCount, encoding: sent.encoding, charsCount: sent.charsCount, deliveredText: sent.deliveredText,
      country: sent.country, pricePerSmsMicros: sent.pricePerSmsMicros, priceUserMicros: sent.priceUserMicros, total: before - ports.balance,
    });
  });

  test('spec 1 §4 bulk rules 1-2: a bulk quote reports the errors a bulk send reports (field rules, wrong types, no price, opt-out, repeated clientId) and prices the rest as the send charges them', async () => {
    const body = [
      item({ clientId: 'a' }), item({ to: 'nope' }), item({ text: 42 }), item({ to: US }), item({ to: DE_OPTED_OUT }), item({ text: LONG_GSM, clientId: 'b' }),
      item({ clientId: 'a' }), 'not an object', item({ text: '😀' }), item({ text: 'y'.repeat(153 * 10 + 1) }),
    ];
    const quoted = new Ports();
    const quote = await quoted.acceptance.quote(submitter(), body);
    expect(quoted.writes).toEqual([]);
    const sent = new Ports();
    const result = await sent.acceptance.submitBulk(submitter(), body);
    expect(quote.errors).toEqual(result.errors);
    expect(quote.errors.map((e) => e.index)).toEqual([1, 2, 3, 4, 6, 7, 8, 9]);
    expect(quote.items.map((i) => i.index)).toEqual([0, 5]);
    expect(quote.totalMicros).toBe(10_000_000 - sent.balance);
    expect(quote.items.map((i) => i.priced.priceUserMicros)).toEqual(result.entities.map((m) => m.priceUserMicros));
  });

  test.each([
    ['a field rule broken (422)', item({ to: 'x' })],
    ['a wrong JSON type (400)', item({ allowUnicode: 'yes' })],
    ['no price for the country (422)', item({ to: US })],
    ['an opted-out recipient (422)', item({ to: DE_OPTED_OUT })],
    ['an unknown field (422)', item({ dryRun: true })],
    ['a body that is no object (400)', 'text'],
    ['null (400)', null],
  ])('spec 1 §7: an object body with %s is refused as a single send refuses it; nothing is written', async (_name, body) => {
    const quoted = new Ports();
    const quote = await outcome(() => quoted.acceptance.quote(submitter(), body));
    const sent = new Ports();
    const send = await outcome(() => sent.acceptance.submitOne(submitter(), body));
    expect('error' in send).toBe(true);
    expect(quote).toEqual(send);
    expect(quoted.writes).toEqual([]);
  });

  test.each([
    ['an empty array (422)', []],
    ['101 items (413)', Array.from({ length: 101 }, () => item())],
  ])('spec 1 §4, §8: an array body with %s is refused as a bulk send refuses it', async (_name, body) => {
    const quoted = new Ports();
    const quote = await outcome(() => quoted.acceptance.quote(submitter(), body));
    const send = await outcome(() => new Ports().acceptance.submitBulk(submitter(), body));
    expect('error' in send).toBe(true);
    expect(quote).toEqual(send);
    expect(quoted.writes).toEqual([]);
  });

  test('a quote prices with the organization\'s own price profile; an account-wide (legacy) submitter has no project opt-outs, as its send', async () => {
    const ports = new Ports();
    const other = await ports.acceptance.quote(submitter('org-2'), [item(), item({ to: US })]);
    expect(other.items.map((i) => i.priced.price.priceMicros)).toEqual([50_000, 9_000]);
    const own = await ports.acceptance.quote(submitter('org-1'), [item(), item({ to: US })]);
    expect(own.items.map((i) => i.priced.price.priceMicros)).toEqual([75_000]);
    expect(own.errors.map((e) => e.index)).toEqual([1]);
    const legacy = await ports.acceptance.quote(submitter('org-1', null), item({ to: DE_OPTED_OUT }));
    expect(legacy.items).toHaveLength(1);
    expect(ports.writes).toEqual([]);
  });
});

describe('DESIGN §4 POST /transactional/v1/sms/quote and legacy POST /sms/quote (in-process app)', () => {
  const org: Organization = { id: 'org-1', name: 'Org', currency: 'EUR', smppEnabled: false, createdAt: '2026-01-01T00:00:00.000Z' };
  const token = (id: string, kind: Token['kind']): Token => ({
    id, kind, name: id, orgId: org.id, projectId: kind === 'legacy' ? '' : 'project-1', datasourceId: null, scopes: [], hash: '00',
    createdAt: '2026-01-01T00:00:00.000Z', revokedAt: null, webhook: null, smpp: null, numbers: [],
  } as Token);
  const principals = new Map<string, Principal>([['sms_good', { token: token('t1', 'api_sms'), org }], ['leg_good', { token: token('t2', 'legacy'), org }]]);
  const counters: string[] = [];
  let ports: Ports;
  let served: Listening;

  beforeAll(async () => {
    ports = new Ports();
    const config = { http: { bodyLimitBytes: 256 * 1024, trustProxy: false }, rateLimits: { perMinute: 1000, bulkPerMinute: 1000 }, ingest: { basePath: '/ingest/v1', ratePerMinute: 1000 }, audience: { basePath: '/audience/v1' } } as unknown as Config;
    const engines = {
      probes: {},
      directory: { authenticate: (value: string) => principals.get(value), prices: () => [] },
      rateLimiter: {
        take: async (_scope: string, endpoint: string) => {
          counters.push(endpoint);
          return { allowed: endpoint !== 'legacy-sms-quote' || counters.filter((c) => c === endpoint).length <= 2, limit: 2, remaining: 0, reset: Math.floor(Date.now() / 60_000) * 60 + 60 };
        },
      },
      balances: { get: async () => ({ currency: 'EUR', availableMicros: ports.balance }) },
    } as unknown as Engines;
    const app = createHttpApp({ config, engines, services: { acceptance: ports.acceptance } as unknown as SmsServices, log: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent') });
    served = await listenLocal(app);
  });
  afterAll(() => served.close());

  const quote = (path: string, body: unknown, bearer = 'sms_good'): Promise<Response> =>
    fetch(`${served.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('an object: 200 { entity, total } with the item\'s figures; counted on v1-sms-quote; nothing written', async () => {
    counters.length = 0;
    const res = await quote(`${SMS_API_BASE}/sms/quote`, item({ text: LONG_GSM, clientId: 'c-1' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      entity: {
        index: 0, clientId: 'c-1', to: DE, normalizedTo: expect.any(String), country: 'DE', charsCount: 161, messagesCount: 2, encoding: 'GSM-7', unicode: false,
        deliveredText: LONG_GSM, pricePerSms: 0.075, priceUser: 0.15, currency: 'EUR',
      },
      total: { messages: 1, messagesCount: 2, price: 0.15, currency: 'EUR', available: fromMicros(ports.balance), covered: true },
    });
    expect(counters).toEqual(['v1-sms-quote']);
    expect(ports.writes).toEqual([]);
  });

  test('an array: 200 { entities, errors, total }; the bulk\'s per-item errors; total.covered false when the balance does not cover it', async () => {
    const saved = ports.balance;
    ports.balance = 100_000;
    const res = await quote(`${SMS_API_BASE}/sms/quote`, [item(), item({ to: US }), item({ text: LONG_GSM })]);
    ports.balance = saved;
    expect(res.status).toBe(200);
    const body = await res.json() as { entities: Array<{ index: number }>; errors: unknown[]; total: unknown };
    expect(body.entities.map((e) => e.index)).toEqual([0, 2]);
    expect(body.errors).toEqual([{ index: 1, clientId: null, fields: { to: [expect.stringContaining('no price')] } }]);
    expect(body.total).toEqual({ messages: 2, messagesCount: 3, price: 0.225, currency: 'EUR', available: 0.1, covered: false });
    expect(ports.writes).toEqual([]);
  });

  test('hostile bodies get a send\'s statuses: empty array 422, 101 items 413, a wrapper object 422, wrong types 400, a string 400, ?dryRun 400', async () => {
    const statuses = [];
    for (const body of [[], Array.from({ length: 101 }, () => item()), { items: [item()] }, item({ to: 15112345678 }), 'hello']) {
      statuses.push((await quote(`${SMS_API_BASE}/sms/quote`, body)).status);
    }
    statuses.push((await quote(`${SMS_API_BASE}/sms/quote?dryRun=false`, item())).status);
    expect(statuses).toEqual([422, 413, 422, 400, 400, 400]);
    expect(ports.writes).toEqual([]);
  });

  test('legacy API: POST /sms/quote with a legacy token, counted on legacy-sms-quote (429 beyond its limit, not sharing v1\'s)', async () => {
    counters.length = 0;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await quote('/sms/quote', item(), 'leg_good')).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await quote(`${SMS_API_BASE}/sms/quote`, item())).status).toBe(200);
    expect(counters).toEqual(['legacy-sms-quote', 'legacy-sms-quote', 'legacy-sms-quote', 'v1-sms-quote']);
    expect((await quote(`${SMS_API_BASE}/sms/quote`, item(), 'leg_good')).status).toBe(401);
    expect(ports.writes).toEqual([]);
  });
});
