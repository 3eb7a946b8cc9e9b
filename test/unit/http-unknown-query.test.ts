// DESIGN §4 "Unknown query parameters on a POST are a 400": a silently ignored `?dryRun=true`
// sent a real, charged message. In-process over the real app and acceptance core with
// in-memory ports (no engine), for every API the app mounts: the SMS API v1, the legacy API,
// ingestion (its `{ message }` body, spec 2 §7), audience and analytics. The 400 names the
// parameters and nothing is done (nothing charged, queued or called); the parameters a POST
// does take (access_token, spec 1 §5) still pass.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { openApiDocument } from '../../gateways/http/openapi';
import { createLogger } from '../../infra/logger';
import { createHttpApp, SMS_API_BASE, type SmsServices } from '../../gateways/http/app';
import type { AnalyticsServices } from '../../gateways/http/analytics-api';
import type { AudienceServices } from '../../gateways/http/audience-api';
import type { IngestServices } from '../../gateways/http/ingest-api';
import { postQueryNames } from '../../gateways/http/query-guard';
import { routePattern } from '../../gateways/http/routes';
import { DE, LEGACY, SmsWorld, TOKEN } from '../support/sms-world';

/** A service whose every member records that it was reached (and answers "nobody" to authenticate). */
function recorder(touched: string[], name: string): never {
  return new Proxy({}, {
    get: (_target, prop) => {
      if (typeof prop !== 'string' || prop === 'then') return undefined;
      return (..._args: unknown[]) => {
        touched.push(`${name}.${prop}`);
        return undefined;
      };
    },
  }) as never;
}

class World extends SmsWorld {
  /** Members of the ingestion, audience, analytics and lookup services that were reached. */
  readonly touched: string[] = [];

  override app(): ReturnType<typeof createHttpApp> {
    const { config, engines } = this.appParts();
    const services = {
      acceptance: this.acceptance,
      lookups: recorder(this.touched, 'lookups'),
    } as unknown as SmsServices;
    // Every other API's services only record: the guard must answer before any of them is reached.
    const accounts = { authenticate: () => undefined } as unknown;
    const ingest = { ...(recorder(this.touched, 'ingest') as object), accounts, datasources: recorder(this.touched, 'datasources'), bus: recorder(this.touched, 'bus'), rateLimiter: recorder(this.touched, 'ingestLimiter') } as unknown as IngestServices;
    const audience = { accounts, search: recorder(this.touched, 'search'), segments: recorder(this.touched, 'segments'), rateLimiter: recorder(this.touched, 'audienceLimiter') } as unknown as AudienceServices;
    const analytics = { accounts, sql: recorder(this.touched, 'sql'), rateLimiter: recorder(this.touched, 'analyticsLimiter') } as unknown as AnalyticsServices;
    return createHttpApp({ config, engines, services, ingest, audience, analytics, log: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent') });
  }
}

describe('DESIGN §4: unknown query parameters on a POST are a 400 naming them; nothing is done', () => {
  let world: World;
  let app: ReturnType<typeof createHttpApp>;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    world = new World();
    app = world.app();
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const send = (path: string, body: unknown, bearer: string | null = TOKEN): Promise<Response> =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) }, body: JSON.stringify(body) });
  const item = { from: 'TestCo', to: DE, text: 'Hello' };
  const nothingDone = (before: { balance: number; queued: number }): void => {
    expect({ balance: world.balance, queued: world.queued.length, touched: world.touched }).toEqual({ ...before, touched: [] });
  };
  const snapshot = (): { balance: number; queued: number } => ({ balance: world.balance, queued: world.queued.length });

  test.each([
    ['SMS API v1, POST /sms', `${SMS_API_BASE}/sms`, item, TOKEN],
    ['SMS API v1, POST /sms/bulk', `${SMS_API_BASE}/sms/bulk`, [item], TOKEN],
    ['SMS API v1, POST /lookup', `${SMS_API_BASE}/lookup`, { to: DE }, TOKEN],
    ['legacy API, POST /sms', '/sms', item, LEGACY],
    ['legacy API, POST /sms/bulk', '/sms/bulk', [item], LEGACY],
    ['legacy API, POST /lookup', '/lookup', { to: DE }, LEGACY],
    ['audience API, POST search', '/audience/v1/project/p1/audience/search', { filter: {} }, 'prod'],
    ['audience API, POST segments', '/audience/v1/project/p1/segments', { slug: 's', name: 'S', root: {} }, 'prod'],
    ['analytics, POST /analytics/v1/sql', '/analytics/v1/sql', { query: 'SELECT 1' }, 'prod'],
  ])('%s?dryRun=true → 400 { title, status, detail } naming dryRun; nothing charged, queued or called', async (_name, path, body, bearer) => {
    const before = snapshot();
    const res = await send(`${path}?dryRun=true`, body, bearer);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ title: 'Bad Request', status: 400, detail: expect.stringContaining('"dryRun"') });
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(res.headers.get(name)).toMatch(/^\d+$/);
    nothingDone(before);
  });

  test.each(['contacts', 'events'])('ingestion API (spec 2 §7 body), POST /stream/%s?dryRun=true → 400 { message } naming dryRun; nothing published', async (endpoint) => {
    const before = snapshot();
    const res = await send(`/ingest/v1/project/p1/datasource/d1/stream/${endpoint}?dryRun=true`, [{ _user_id: 'u1' }], 'ds');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message: expect.stringContaining('"dryRun"') });
    nothingDone(before);
  });

  test('every unknown name is listed once, also beside an allowed access_token; the detail says what the endpoint takes', async () => {
    const before = snapshot();
    const res = await fetch(`${base}${SMS_API_BASE}/sms?access_token=${TOKEN}&dryRun=1&force=yes&dryRun=2&validate[x]=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(item) });
    expect(res.status).toBe(400);
    const { detail } = await res.json() as { detail: string };
    expect(detail).toContain('"dryRun", "force", "validate[x]"');
    expect(detail).toContain('takes access_token');
    expect(detail.match(/dryRun/g)).toHaveLength(1);
    nothingDone(before);
  });

  test('spec 1 §5: access_token, which every POST takes, still passes (v1 and legacy send; the other APIs reach authentication: 401)', async () => {
    const v1 = await fetch(`${base}${SMS_API_BASE}/sms?access_token=${TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(item) });
    expect(v1.status).toBe(201);
    const legacy = await fetch(`${base}/sms/bulk?access_token=${LEGACY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([item]) });
    expect(legacy.status).toBe(201);
    expect(world.queued.splice(0)).toHaveLength(2);
    const ingest = await fetch(`${base}/ingest/v1/project/p1/datasource/d1/stream/events?access_token=nope`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
    expect(ingest.status).toBe(401);
    expect(await ingest.json()).toEqual({ message: expect.any(String) });
    const analytics = await fetch(`${base}/analytics/v1/sql?access_token=nope`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"SELECT 1"}' });
    expect(analytics.status).toBe(401);
    // A bare "?" carries no parameter.
    expect((await send(`${SMS_API_BASE}/sms?`, item)).status).toBe(201);
    world.queued.splice(0);
  });

  test('the guard is for POSTs: a GET keeps its own query handling (GET /organization/account ignores its query, as before)', async () => {
    const res = await fetch(`${base}${SMS_API_BASE}/organization/account?dryRun=true`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
  });

  test('the table is read from /openapi.json: every POST route of the app has its entry (v1, legacy mirror, ingestion, audience, analytics), each taking access_token', () => {
    const taken = postQueryNames(openApiDocument({ ingest: '/ingest/v1', audience: '/audience/v1' }), { [SMS_API_BASE]: '' });
    const paths = [
      `${SMS_API_BASE}/sms`, `${SMS_API_BASE}/sms/bulk`, `${SMS_API_BASE}/lookup`, '/sms', '/sms/bulk', '/lookup',
      '/ingest/v1/project/p/datasource/d/stream/contacts', '/ingest/v1/project/p/datasource/d/stream/events',
      '/audience/v1/project/p/audience/search', '/audience/v1/project/p/segments', '/analytics/v1/sql',
    ];
    for (const path of paths) {
      const pattern = routePattern(app, 'POST', path) ?? '(no route)';
      expect({ path, pattern, names: [...(taken.byRoute.get(pattern) ?? [])] }).toEqual({ path, pattern, names: ['access_token'] });
    }
    expect([...taken.everywhere]).toEqual(['access_token']);
  });
});
