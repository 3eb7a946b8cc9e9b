// The HTTP gateway under hostile input (issue 14), in-process over the real app, server and
// acceptance core with in-memory ports (no engine): bad percent-encoding, corrupt compressed
// bodies, invalid UTF-8, Content-Types, methods, the HTTP parser's own refusals, timeouts,
// conflicting credentials and the /metrics route label. Spec 1 §5, §7, §8.
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Config } from '../../config';
import { newId } from '../../core/ids';
import { createLogger } from '../../infra/logger';
import { registry } from '../../infra/metrics';
import { createHttpApp, type SmsServices } from '../../gateways/http/app';
import { createHttpServer, type HttpServerOptions } from '../../gateways/http/server';
import { DE, LEGACY, SmsWorld, TOKEN } from '../support/sms-world';

class World extends SmsWorld {
  override app(trustProxy: Config['http']['trustProxy'] = false): ReturnType<typeof createHttpApp> {
    const { config, engines } = this.appParts(trustProxy);
    const services = {
      acceptance: this.acceptance,
      states: { get: async () => null },
      lookupStore: { get: async () => null },
      messageHistory: { get: async () => null, list: async () => [] },
      lookupHistory: { get: async () => null, list: async () => [] },
    } as unknown as SmsServices;
    return createHttpApp({ config, engines, services, log: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent') });
  }
}

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly json: unknown;
}

function parseRaw(text: string): RawResponse {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const body = rest.join('\r\n\r\n');
  let json: unknown;
  try { json = JSON.parse(body); } catch { json = undefined; }
  return { status: Number(statusLine.split(' ')[1]), headers, body, json };
}

describe('issue 14: the HTTP gateway under hostile input (in-process app, in-memory ports)', () => {
  let world: World;
  let server: Server;
  let base: string;
  let port: number;

  async function start(options: HttpServerOptions = {}, trustProxy: Config['http']['trustProxy'] = false): Promise<void> {
    world = new World();
    server = createHttpServer(world.app(trustProxy), options);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  }
  async function stop(): Promise<void> {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Writes `request` bytes as they are and reads until the server closes or `waitMs` passes. */
  function raw(request: string | Buffer, waitMs = 2000): Promise<RawResponse & { closedAfterMs: number }> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      const done = (): void => {
        clearTimeout(timer);
        socket.destroy();
        resolve({ ...parseRaw(Buffer.concat(chunks).toString('utf8')), closedAfterMs: Date.now() - started });
      };
      const timer = setTimeout(done, waitMs);
      socket.on('data', (c) => chunks.push(c));
      socket.on('end', done);
      socket.on('close', done);
      socket.on('error', (err) => (chunks.length > 0 ? done() : reject(err)));
      socket.write(request);
    });
  }

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers }, body });

  const item = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({ from: 'TestCo', to: DE, text: 'Hello', ...overrides });

  function expectRateHeaders(headers: Headers | Record<string, string>): void {
    const get = (n: string): string | null | undefined => (headers instanceof Headers ? headers.get(n) : headers[n]);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect({ [name]: get(name) }).toEqual({ [name]: expect.stringMatching(/^\d+$/) });
  }
  async function expectProblem(res: Response, status: number): Promise<{ detail: string }> {
    expect(res.status).toBe(status);
    const body = await res.json() as { detail: string };
    expect(body).toEqual({ title: expect.any(String), status, detail: expect.any(String) });
    expectRateHeaders(res.headers);
    return body;
  }

  describe('with the default server', () => {
    beforeAll(() => start());
    afterAll(() => stop());

    // Item 1
    test.each([
      ['GET', '/transactional/v1/sms/%ff'], ['GET', '/transactional/v1/sms/%'], ['GET', '/transactional/v1/sms/%zz'], ['GET', '/transactional/v1/lookup/%ff'],
      ['POST', '/transactional/v1/sms/%ff'], ['GET', '/sms/%ff'], ['GET', '/transactional/v1/sms/%ed%a0%80'], ['GET', '/transactional/v1/sms?to_eq=%ff'],
      ['GET', '/transactional/v1/sms?_q=%'], ['GET', '/nowhere/%c0%af'],
    ])('issue 14 item 1, spec 1 §7: %s %s (broken percent-encoding) → 400 { title, status, detail }, never 500', async (method, path) => {
      const res = await raw(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ title: 'Bad Request', status: 400, detail: expect.stringContaining('percent-encoding') });
      expectRateHeaders(res.headers);
    });

    test('issue 14 item 1: under a prefix with its own error format (ingestion, spec 2 §7) the same 400 has that API\'s body', async () => {
      const res = await raw(`GET /ingest/v1/project/p/datasource/%ff/stream/contacts HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ message: expect.stringContaining('percent-encoding') });
      expectRateHeaders(res.headers);
    });

    // Item 2
    test.each([
      ['gzip', Buffer.from(JSON.stringify(item()))],
      ['br', Buffer.from(JSON.stringify(item()))],
      ['gzip', gzipSync(Buffer.from(JSON.stringify(item()))).subarray(0, 20)],
      ['deflate', Buffer.from('not deflate at all')],
    ])('issue 14 item 2, spec 1 §7: a corrupt %s body → 400, nothing queued', async (encoding, body) => {
      await expectProblem(await post('/transactional/v1/sms', body, { 'content-encoding': encoding }), 400);
      expect(world.queued).toHaveLength(0);
    });

    test('issue 14 item 2: valid gzip and br bodies are still read; an unknown Content-Encoding → 415', async () => {
      expect((await post('/transactional/v1/sms', gzipSync(JSON.stringify(item())), { 'content-encoding': 'gzip' })).status).toBe(201);
      expect((await post('/transactional/v1/sms', brotliCompressSync(JSON.stringify(item())), { 'content-encoding': 'br' })).status).toBe(201);
      await expectProblem(await post('/transactional/v1/sms', JSON.stringify(item()), { 'content-encoding': 'x-rot13' }), 415);
      expect(world.queued.splice(0)).toHaveLength(2);
    });

    // Item 3
    test('issue 14 item 3, spec 1 §8: X-RateLimit-* on unknown-route 404s, OPTIONS, 405s, ops endpoints and error responses', async () => {
      const responses = await Promise.all([
        fetch(`${base}/no/such/route`), fetch(`${base}/transactional/v1/nope`, { method: 'POST', body: '{}' }),
        fetch(`${base}/transactional/v1/sms`, { method: 'OPTIONS' }), fetch(`${base}/transactional/v1/sms`, { method: 'DELETE' }),
        fetch(`${base}/health`), fetch(`${base}/metrics`), fetch(`${base}/openapi.json`), fetch(`${base}/transactional/v1/sms/${newId()}`, { method: 'HEAD' }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([404, 404, 204, 405, 200, 200, 200, 401]);
      expect(responses[2]?.headers.get('allow')).toBe('GET, HEAD, OPTIONS, POST');
      for (const r of responses) expectRateHeaders(r.headers);
    });

    test("issue 14 item 3, spec 1 §7/§8: the HTTP parser's own 400 (garbage, bad header) and 431 (headers too large) are full responses with the headers", async () => {
      for (const request of ['GARBAGE\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 'GET /health HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n']) {
        const res = await raw(request);
        expect({ request, status: res.status }).toEqual({ request, status: 400 });
        expect(res.json).toEqual({ title: 'Bad Request', status: 400, detail: expect.any(String) });
        expectRateHeaders(res.headers);
      }
      const big = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(big.status).toBe(431);
      expect(big.json).toEqual({ title: 'Request Header Fields Too Large', status: 431, detail: expect.any(String) });
      expectRateHeaders(big.headers);
    });

    test('issue 14 item 3 sibling: CONNECT gets a 405 with Allow and the headers instead of a dropped connection', async () => {
      const res = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBeDefined();
      expectRateHeaders(res.headers);
    });

    // Item 4
    test.each([
      ['PUT', '/transactional/v1/sms', 'GET, HEAD, OPTIONS, POST'], ['DELETE', '/transactional/v1/sms/{id}', 'GET, HEAD, OPTIONS'],
      ['PATCH', '/transactional/v1/lookup', 'GET, HEAD, OPTIONS, POST'], ['TRACE', '/transactional/v1/organization/account', 'GET, HEAD, OPTIONS'],
      ['GET', '/transactional/v1/sms/bulk', 'OPTIONS, POST'], ['DELETE', '/sms', 'GET, HEAD, OPTIONS, POST'], ['POST', '/health', 'GET, HEAD, OPTIONS'],
      ['PUT', '/openapi.json', 'GET, HEAD, OPTIONS'],
    ])('issue 14 item 4: %s %s → 405 with Allow (never 404 for an existing path)', async (method, path, allow) => {
      // fetch() refuses TRACE: the request is written by hand.
      const res = await raw(`${method} ${path.replace('{id}', newId())} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`);
      expectRateHeaders(res.headers);
      // GET /sms/bulk: the literal route wins over /sms/{id}, so it is a 405 like OPTIONS says.
      expect(res.status).toBe(405);
      expect(res.json).toEqual({ title: expect.any(String), status: 405, detail: expect.any(String) });
      expect(res.headers['allow']).toBe(allow);
    });

    // Item 5
    test.each([
      ['text/plain', JSON.stringify(item())], ['application/x-www-form-urlencoded', 'from=TestCo&to=%2B4915112345678&text=hi'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="from"\r\n\r\nTestCo\r\n--x--'], ['', JSON.stringify(item())],
      ['application/json; charset=iso-8859-1', JSON.stringify(item())], ['application/jsonx', JSON.stringify(item())], ['text/json', JSON.stringify(item())],
    ])('issue 14 item 5: POST /sms with Content-Type "%s" → 415, nothing charged or queued', async (type, body) => {
      const before = world.balance;
      const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
      if (type) headers['content-type'] = type;
      const init: RequestInit = { method: 'POST', headers, body: type ? body : new Blob([body]) };
      const res = await fetch(`${base}/transactional/v1/sms`, init);
      await expectProblem(res, 415);
      expect(world.balance).toBe(before);
      expect(world.queued).toHaveLength(0);
      const bulk = await fetch(`${base}/transactional/v1/sms/bulk`, { ...init, body: type ? `[${body}]` : new Blob([`[${body}]`]) });
      await expectProblem(bulk, 415);
      await expectProblem(await fetch(`${base}/transactional/v1/lookup`, { ...init, body: type ? JSON.stringify({ to: DE }) : new Blob([JSON.stringify({ to: DE })]) }), 415);
    });

    test('issue 14 item 5: application/json with charset=utf-8 and +json types are accepted', async () => {
      for (const type of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/vnd.api+json', 'APPLICATION/JSON']) {
        const res = await post('/transactional/v1/sms', JSON.stringify(item()), { 'content-type': type });
        expect({ type, status: res.status }).toEqual({ type, status: 201 });
      }
      world.queued.splice(0);
    });

    // Item 6
    test.each([
      ['a lone 0xff 0xfe', Buffer.concat([Buffer.from('{"from":"TestCo","to":"+4915112345678","text":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')])],
      ['a CESU-8 surrogate pair', Buffer.concat([Buffer.from('{"from":"TestCo","to":"+4915112345678","text":"'), Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]), Buffer.from('"}')])],
      ['an overlong "/"', Buffer.concat([Buffer.from('{"from":"TestCo","to":"+4915112345678","text":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
      ['a truncated sequence', Buffer.concat([Buffer.from('{"from":"TestCo","to":"+4915112345678","text":"x'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')])],
    ])('issue 14 item 6, spec 1 §7: a body with invalid UTF-8 (%s) → 400, not repaired to U+FFFD, nothing charged', async (_name, body) => {
      const before = world.balance;
      const res = await post('/transactional/v1/sms', body);
      const problem = await expectProblem(res, 400);
      expect(problem.detail).toMatch(/UTF-8/);
      expect(await (await post('/transactional/v1/sms/bulk', Buffer.concat([Buffer.from('['), body, Buffer.from(']')]))).status).toBe(400);
      expect(await (await post('/transactional/v1/sms', gzipSync(body), { 'content-encoding': 'gzip' })).status).toBe(400);
      expect(world.balance).toBe(before);
      expect(world.queued).toHaveLength(0);
    });

    test('issue 14 item 6: valid multi-byte UTF-8 (emoji, accents) is read as sent', async () => {
      const res = await post('/transactional/v1/sms', Buffer.from(JSON.stringify(item({ text: 'café 😀', allowUnicode: true })), 'utf8'));
      expect(res.status).toBe(201);
      expect(((await res.json()) as { entity: { text: string } }).entity.text).toBe('café 😀');
      world.queued.splice(0);
    });

    // Item 10
    test('issue 14 item 10: a Bearer token and an access_token together → 401 (conflicting credentials), even when both are valid', async () => {
      const q = `access_token=${TOKEN}`;
      await expectProblem(await fetch(`${base}/transactional/v1/organization/account?${q}`, { headers: { authorization: `Bearer ${TOKEN}` } }), 401);
      await expectProblem(await fetch(`${base}/organization/account?access_token=${LEGACY}`, { headers: { authorization: `Bearer ${LEGACY}` } }), 401);
      const before = world.balance;
      await expectProblem(await fetch(`${base}/transactional/v1/sms?${q}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(item()) }), 401);
      expect(world.balance).toBe(before);
      expect((await fetch(`${base}/transactional/v1/organization/account?${q}`)).status).toBe(200);
      expect((await fetch(`${base}/transactional/v1/organization/account`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    });

    test('spec 1 §5: two Authorization headers (different tokens or the same one twice) → 401; nothing is sent or charged', async () => {
      const body = JSON.stringify(item());
      const before = { balance: world.balance, queued: world.queued.length };
      for (const second of ['Bearer sms_other', `Bearer ${TOKEN}`]) {
        const res = await raw(`POST /transactional/v1/sms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAuthorization: ${second}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
        expect(res.status).toBe(401);
        expect(res.json).toEqual({ title: 'Unauthorized', status: 401, detail: expect.stringContaining('more than once') });
        expectRateHeaders(res.headers);
      }
      const legacy = await raw(`GET /organization/account HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${LEGACY}\r\nAUTHORIZATION: Bearer leg_other\r\nConnection: close\r\n\r\n`);
      expect(legacy.status).toBe(401);
      expect({ balance: world.balance, queued: world.queued.length }).toEqual(before);
      expect((await post('/transactional/v1/sms', body)).status).toBe(201);
    });

    test('TRUST_PROXY unset: X-Forwarded-For from a loopback peer does not change the failed-authentication counter\'s address', async () => {
      const fail = (forwarded: string): Promise<Response> => fetch(`${base}/transactional/v1/organization/account`, { headers: { authorization: 'Bearer sms_wrong', 'x-forwarded-for': forwarded } });
      const first = await fail('203.0.113.1');
      const second = await fail('203.0.113.2');
      await expectProblem(first, 401);
      await expectProblem(second, 401);
      // One counter (the TCP peer's): the second failure finds the first one counted.
      expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1);
    });

    test.each([
      ['NUL', '\u0000'], ['a NUL inside', 'order-1\u0000'], ['a line break', 'order\n1'], ['only spaces', '   '], ['only a tab', '\t'], ['no-break spaces', '\u00a0\u2003'],
    ])('spec 1 §7, §4: a clientId with %s → 422 with a field error on clientId (single, legacy), the bulk item refused with it; nothing is charged', async (_what, clientId) => {
      const before = { balance: world.balance, queued: world.queued.length };
      const single = await post('/transactional/v1/sms', JSON.stringify(item({ clientId })));
      expect(single.status).toBe(422);
      expect(await single.json()).toEqual({ errors: { fields: { clientId: [expect.any(String)] } } });
      const legacy = await post('/sms', JSON.stringify(item({ clientId })), { authorization: `Bearer ${LEGACY}` });
      expect(legacy.status).toBe(422);
      expect(await legacy.json()).toEqual({ errors: { fields: { clientId: [expect.any(String)] } } });
      // A bulk refuses the item (spec 1 §4 bulk rule 1: 201 with the item's field errors).
      const bulk = await post('/transactional/v1/sms/bulk', JSON.stringify([item({ clientId })]));
      expect(bulk.status).toBe(201);
      expect(await bulk.json()).toEqual({ entities: [], errors: [{ index: 0, clientId, fields: { clientId: [expect.any(String)] } }] });
      expect({ balance: world.balance, queued: world.queued.length }).toEqual(before);
    });

    test('issue 14 item 10: /metrics labels requests by full route pattern, "unmatched" without a base-path prefix', async () => {
      await fetch(`${base}/transactional/v1/no-such-thing`);
      await fetch(`${base}/transactional/v1/sms/not-an-id`, { headers: { authorization: `Bearer ${TOKEN}` } });
      await fetch(`${base}/transactional/v1/sms/${newId()}`, { method: 'PUT' });
      const text = await registry.metrics();
      expect(text).not.toMatch(/route="\/transactional\/v1unmatched"/);
      expect(text).not.toMatch(/route="[^"]+unmatched"/);
      expect(text).toMatch(/route="\/transactional\/v1\/sms\/:id"/);
      expect(text).toMatch(/route="unmatched"/);
    });
  });

  describe('with TRUST_PROXY=loopback', () => {
    beforeAll(() => start({}, ['loopback']));
    afterAll(() => stop());

    test('X-Forwarded-For from the trusted proxy names the client: each forwarded address has its own counter', async () => {
      const fail = (forwarded: string): Promise<Response> => fetch(`${base}/transactional/v1/organization/account`, { headers: { authorization: 'Bearer sms_wrong', 'x-forwarded-for': forwarded } });
      const first = await fail('203.0.113.1');
      const second = await fail('203.0.113.2');
      expect([first.status, second.status]).toEqual([401, 401]);
      expect(second.headers.get('x-ratelimit-remaining')).toBe(first.headers.get('x-ratelimit-remaining'));
    });
  });

  describe('with short timeouts', () => {
    beforeAll(() => start({ headersTimeoutMs: 500, requestTimeoutMs: 1000, timeoutCheckIntervalMs: 100 }));
    afterAll(() => stop());

    test('issue 14 item 10: a declared Content-Length: 3000000 with one byte sent is answered 408 and closed at the request timeout', async () => {
      const res = await raw(`POST /transactional/v1/sms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n{`, 5000);
      expect(res.closedAfterMs).toBeLessThan(3000);
      // body-parser waits for the declared body before its 413: the request timeout ends the wait.
      expect(res.status).toBe(408);
      expectRateHeaders(res.headers);
      expect(world.queued).toHaveLength(0);
    });

    test('issue 14 item 10: headers that never finish are answered 408 and closed at the headers timeout', async () => {
      const res = await raw('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n', 5000);
      expect(res.closedAfterMs).toBeLessThan(3000);
      expect(res.status).toBe(408);
      expectRateHeaders(res.headers);
    });

    test('issue 14 item 10: a declared body of 40 KB (under the limit) that stalls is closed at the request timeout', async () => {
      const res = await raw(`POST /transactional/v1/sms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 40000\r\n\r\n{"from":`, 5000);
      expect(res.closedAfterMs).toBeLessThan(3000);
      expect(res.json).toEqual({ title: 'Request Timeout', status: 408, detail: expect.any(String) });
      expect(world.queued).toHaveLength(0);
    });
  });
});
