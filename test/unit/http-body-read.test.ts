// The route guard reads an uncompressed body with a Content-Length itself (gateways/http/guards.ts
// readIdentityJson) and leaves every other body to body-parser: the same body sent both ways —
// with a Content-Length, and chunked (body-parser's path) — gets the same answer, status and body.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Config } from '../../config';
import type { Organization, Price, Principal, Token } from '../../core/accounts/types';
import { SmsAcceptance } from '../../core/sms/acceptance';
import { createLogger } from '../../infra/logger';
import { createHttpApp, type SmsServices } from '../../gateways/http/app';
import { createHttpServer } from '../../gateways/http/server';
import type { Engines } from '../../roles/engines';

const TOKEN = 'sms_good';
const org: Organization = { id: 'org-1', name: 'Org', currency: 'EUR', smppEnabled: false, createdAt: '2026-01-01T00:00:00.000Z' };
const token = {
  id: 't1', kind: 'api_sms', name: 't1', orgId: org.id, projectId: 'project-1', datasourceId: null, scopes: [], hash: '00',
  createdAt: '2026-01-01T00:00:00.000Z', revokedAt: null, webhook: null, smpp: null, numbers: [],
} as unknown as Token;

function app(): ReturnType<typeof createHttpApp> {
  const acceptance = new SmsAcceptance({
    prices: { price: (_o: string, _k: string, country: string): Price | undefined => (country === 'DE' ? { country, currency: 'EUR', priceMicros: 75_000 } : undefined) },
    funds: { charge: async () => true, credit: async () => undefined, settle: () => undefined, isHeld: async () => false },
    states: { putAll: async () => undefined, get: async () => null },
    clientIds: { claim: async () => null, takeOver: async () => false, release: async () => undefined },
    queue: { enqueue: async () => undefined },
    optOuts: { isOptedOut: () => false },
    now: () => new Date('2026-01-01T00:00:00.000Z'),
  });
  const principals = new Map<string, Principal>([[TOKEN, { token, org }]]);
  const config = { http: { bodyLimitBytes: 64 * 1024 }, rateLimits: { perMinute: 1000, bulkPerMinute: 1000 }, ingest: { basePath: '/ingest/v1', ratePerMinute: 1000 } } as unknown as Config;
  const engines = {
    probes: {},
    directory: { authenticate: (value: string) => principals.get(value), prices: () => [] },
    rateLimiter: { take: async () => ({ allowed: true, limit: 1000, remaining: 999, reset: 4_000_000_000 }) },
    balances: { get: async () => ({ currency: 'EUR', availableMicros: 1 }) },
  } as unknown as Engines;
  return createHttpApp({ config, engines, services: { acceptance } as unknown as SmsServices, log: createLogger('silent') });
}

const ITEM = JSON.stringify({ from: 'TestCo', to: '+4915112345678', text: 'Hello' });
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const BODIES: ReadonlyArray<readonly [string, Buffer]> = [
  ['a valid item', utf8(ITEM)],
  ['a valid item after a BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(ITEM)])],
  ['a BOM alone', Buffer.from([0xef, 0xbb, 0xbf])],
  ['whitespace only', utf8('   \n')],
  ['null', utf8('null')],
  ['a number', utf8('42')],
  ['a string', utf8('"hello"')],
  ['an array', utf8('[]')],
  ['broken JSON', utf8('{"from": ')],
  ['trailing garbage', utf8(`${ITEM}x`)],
  ['invalid UTF-8', Buffer.concat([utf8('{"from":"'), Buffer.from([0xc3, 0x28]), utf8('"}')])],
  ['an encoded surrogate', Buffer.concat([utf8('{"text":"'), Buffer.from([0xed, 0xa0, 0x80]), utf8('"}')])],
  ['valid multi-byte text', utf8(JSON.stringify({ from: 'TestCo', to: '+4915112345678', text: 'café 😀', allowUnicode: true }))],
  ['a wrong type', utf8(JSON.stringify({ from: 'TestCo', to: 4915112345678, text: 'Hello' }))],
  ['over the limit', utf8(JSON.stringify({ from: 'TestCo', to: '+4915112345678', text: 'x'.repeat(70 * 1024) }))],
];

/** Answer without the per-request fields (request id, message id). */
async function answer(res: Response): Promise<{ status: number; type: string | null; body: unknown }> {
  const text = await res.text();
  let body: unknown = text;
  try { body = JSON.parse(text) as unknown; } catch { /* not JSON: compared as text */ }
  const strip = (v: unknown): unknown => (v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'id' && k !== 'requestId').map(([k, x]) => [k, strip(x)])) : v);
  return { status: res.status, type: res.headers.get('content-type'), body: strip(body) };
}

describe('request bodies: read by the route guard or by body-parser, the same answer', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createHttpServer(app());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/transactional/v1/sms`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test.each(BODIES)('%s', async (_name, body) => {
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const withLength = await answer(await fetch(url, { method: 'POST', headers, body }));
    const chunked = await answer(await fetch(url, {
      method: 'POST', headers, duplex: 'half',
      body: new ReadableStream({ start(controller) { controller.enqueue(body); controller.close(); } }),
    } as RequestInit));
    expect(withLength).toEqual(chunked);
  });

  test('a valid item is accepted both ways (the comparison is not between two refusals)', async () => {
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: ITEM });
    expect(res.status).toBe(201);
    expect(res.headers.get('etag')).toMatch(/^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(await res.text())));
  });
});
