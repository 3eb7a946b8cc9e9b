// The console's rules without a stack (docs/console.md): escaping, the filter box, and the
// router's session, CSRF and organization checks over in-memory stand-ins of its stores.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Organization, Token } from '../../core/accounts/types';
import type { ConsoleSession, Operator } from '../../core/console/operators';
import { AppError } from '../../core/errors';
import { escapeHtml, html } from '../../gateways/http/console/html';
import { logParams } from '../../gateways/http/console/pages/messages';
import { consoleRouter } from '../../gateways/http/console/router';
import type { ConsoleServices } from '../../gateways/http/console/services';

describe('console HTML: every interpolated value is escaped once', () => {
  test('text and attribute metacharacters', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\``)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;');
    expect(html`<td title="${'"><script>'}">${'<b>'}</td>`.text).toBe('<td title="&quot;&gt;&lt;script&gt;">&lt;b&gt;</td>');
  });

  test('markup built by html is kept; arrays are joined; null, undefined and false render nothing', () => {
    const inner = html`<i>${'<x>'}</i>`;
    expect(html`<p>${inner}${['a', html`<br>`]}${null}${undefined}${false}${0}</p>`.text).toBe('<p><i>&lt;x&gt;</i>a<br>0</p>');
  });
});

describe('console message log: the Grammar A filter box', () => {
  test('URL form: the page\'s paging unless the filter has its own', () => {
    expect(logParams('status_eq=delivered', 50).toString()).toBe('status_eq=delivered&_start=50&_limit=50');
    expect(logParams('?status_eq=failed&_start=0&_limit=5', 50).toString()).toBe('status_eq=failed&_start=0&_limit=5');
  });

  test('JSON form: the object becomes _q, with the page\'s paging unless it has its own', () => {
    const q = (text: string): unknown => JSON.parse(logParams(text, 100).get('_q') ?? 'null');
    expect(q('{"filter":[{"field":"status","operator":"eq","value":"sent"}]}')).toEqual({ filter: [{ field: 'status', operator: 'eq', value: 'sent' }], paging: { start: 100, limit: 50 } });
    expect(q('{"paging":{"start":0,"limit":3}}')).toEqual({ paging: { start: 0, limit: 3 } });
    expect(() => logParams('{"filter":', 0)).toThrow(AppError);
  });
});

const org = (id: string): Organization => ({ id, name: `Org ${id}`, currency: 'EUR', smppEnabled: false, createdAt: '2026-01-01T00:00:00.000Z' });
const token = (id: string, orgId: string): Token => ({
  id, kind: 'api_sms', name: `token ${id}`, orgId, projectId: 'p1', datasourceId: null, scopes: [], hash: 'h', createdAt: '2026-01-01T00:00:00.000Z',
  revokedAt: null, webhook: null, smpp: null, numbers: [],
});

describe('console router: sessions, CSRF and organizations', () => {
  const operator: Operator = { id: 'op1', orgId: 'org-a', email: 'ops@a.example', passwordHash: '', createdAt: '' };
  const session: ConsoleSession = { operatorId: 'op1', orgId: 'org-a', email: operator.email, csrf: 'the-csrf-token', createdAt: '', expiresAt: '' };
  const created: string[] = [];
  const services = {
    operators: {
      verify: async (_email: string, password: string) => (password === 'right' ? operator : null),
      startSession: async () => ({ cookie: 'cookie-a', session }),
      session: async (cookie: string) => (cookie === 'cookie-a' ? session : null),
      endSession: async () => undefined,
    },
    accounts: {
      getOrg: async (id: string) => org(id),
      getToken: async (id: string) => (id === 'tok-b' ? token('tok-b', 'org-b') : token(id, 'org-a')),
      listProjects: async () => [{ id: 'p1', orgId: 'org-a', name: 'P', createdAt: '' }],
      listTokens: async () => [],
      createToken: async (input: { name?: string }) => { created.push(input.name ?? ''); return { token: token('new', 'org-a'), value: 'sms_value' }; },
    },
  } as unknown as ConsoleServices;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const app = express();
    app.use('/console', consoleRouter({ log: { error: () => undefined }, services: {} } as never, services));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/console`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> => fetch(`${url}${path}`, {
    method: 'POST', redirect: 'manual', body: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'console_session=cookie-a', ...headers },
  });

  test('without a session a page redirects to the sign-in; every answer carries the CSP and no-store', async () => {
    const res = await fetch(`${url}/projects`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  test('sign-in: the form token must match its cookie; a wrong password is a 401; the session cookie is HttpOnly, SameSite=Strict', async () => {
    const form = await fetch(`${url}/sign-in`);
    const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const signIn = (password: string, token = csrf): Promise<Response> => fetch(`${url}/sign-in`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: new URLSearchParams({ _csrf: token, email: operator.email, password }).toString(),
    });
    expect((await signIn('right', 'forged')).status).toBe(403);
    expect((await signIn('wrong')).status).toBe(401);
    const ok = await signIn('right');
    expect(ok.status).toBe(303);
    expect(ok.headers.get('set-cookie')).toMatch(/console_session=cookie-a; Path=\/console; HttpOnly; SameSite=Strict/);
  });

  test('a change without the CSRF token, with a wrong one, or from another site is a 403 and runs nothing', async () => {
    const form = { kind: 'api_sms', project: 'p1', name: 'x' };
    expect((await post('/tokens', form)).status).toBe(403);
    expect((await post('/tokens', { ...form, _csrf: 'the-csrf-tokeN' })).status).toBe(403);
    expect((await post('/tokens', { ...form, _csrf: 'the-csrf-token' }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post('/tokens', { ...form, _csrf: 'the-csrf-token' }, { origin: 'https://evil.example' })).status).toBe(403);
    expect(created).toEqual([]);
    const res = await post('/tokens', { ...form, _csrf: 'the-csrf-token' }, { 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(201);
    expect(await res.text()).toContain('sms_value');
    expect(created).toEqual(['x']);
  });

  test("another organization's token is a 404, like a token that does not exist", async () => {
    const res = await fetch(`${url}/tokens/tok-b`, { headers: { cookie: 'console_session=cookie-a' } });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('org-b');
  });

  test('a form over the size limit is a 413 page, a broken path escape a 400, a form in another charset a 415: never a 500', async () => {
    expect((await post('/tokens', { _csrf: 'the-csrf-token', name: 'x'.repeat(70_000) })).status).toBe(413);
    expect((await fetch(`${url}/tokens/%E0%A4%A`, { headers: { cookie: 'console_session=cookie-a' } })).status).toBe(400);
    const latin1 = await fetch(`${url}/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=latin1', cookie: 'console_session=cookie-a' }, body: '_csrf=the-csrf-token' });
    expect(latin1.status).toBe(415);
  });
});

describe('console: webhook targets (spec 1 §6 rule 1) and the new-token form', () => {
  const operator: Operator = { id: 'op1', orgId: 'org-a', email: 'ops@a.example', passwordHash: '', createdAt: '' };
  const session: ConsoleSession = { operatorId: 'op1', orgId: 'org-a', email: operator.email, csrf: 'csrf-2', createdAt: '', expiresAt: '' };
  const stored: Array<{ tokenId: string; url: string }> = [];
  const createdTokens: Array<{ kind: string; projectId: string | null; name?: string }> = [];
  const probes: string[] = [];
  let probeServer: Server;
  let probeUrl = '';
  const withHook = (id: string): Token => ({ ...token(id, 'org-a'), webhook: { url: probeUrl, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } as Token['webhook'] });
  const services = {
    operators: { session: async (cookie: string) => (cookie === 'cookie-2' ? session : null) },
    accounts: {
      getOrg: async (id: string) => org(id),
      getToken: async (id: string) => (id === 'tok-hook' ? withHook(id) : token(id, 'org-a')),
      listProjects: async () => [{ id: 'p1', orgId: 'org-a', name: 'First', createdAt: '' }, { id: 'p2', orgId: 'org-a', name: 'Second', createdAt: '' }],
      listTokens: async () => [],
      createToken: async (input: { kind: string; projectId: string | null; name?: string }) => {
        createdTokens.push(input);
        return { token: token('new', 'org-a'), value: 'sms_value' };
      },
      setWebhook: async (tokenId: string, url: string) => {
        stored.push({ tokenId, url });
        return { ...token(tokenId, 'org-a'), webhook: { url, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } };
      },
    },
    datasources: { list: async () => [] },
    webhookTimeoutMs: 1000,
    // Host names of these tests resolve here, not in DNS.
    webhookResolver: async (hostname: string) => {
      const table: Record<string, string> = { 'hooks.example.test': '93.184.216.34', 'intranet.example.test': '10.20.30.40' };
      const address = table[hostname];
      if (!address) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      return [{ address, family: 4 }];
    },
  } as unknown as ConsoleServices;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    probeServer = createServer((req, res) => { probes.push(req.url ?? ''); res.end('internal service banner'); });
    await new Promise<void>((resolve) => probeServer.listen(0, '127.0.0.1', resolve));
    probeUrl = `http://127.0.0.1:${(probeServer.address() as AddressInfo).port}/admin`;
    const app = express();
    app.use('/console', consoleRouter({ log: { error: () => undefined }, services: {} } as never, services));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/console`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => probeServer.close(resolve));
  });

  const post = (path: string, form: Record<string, string>): Promise<Response> => fetch(`${url}${path}`, {
    method: 'POST', redirect: 'manual', body: new URLSearchParams({ _csrf: 'csrf-2', ...form }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'console_session=cookie-2', 'sec-fetch-site': 'same-origin' },
  });

  test('spec 1 §6 rule 1: an http://, loopback, private or metadata webhook URL, or a host resolving to a private address, is refused and not stored', async () => {
    for (const target of ['http://hooks.example.test/dlr', 'https://127.0.0.1:8080/', 'https://10.0.0.8/dlr', 'https://169.254.169.254/latest/', 'https://[::1]/dlr', 'https://intranet.example.test/dlr', 'https://unknown.example.test/dlr']) {
      const res = await post('/tokens/tok-1/webhook', { url: target });
      expect({ target, status: res.status }).toEqual({ target, status: 400 });
      expect(await res.text()).toContain('the webhook URL is refused');
    }
    expect(stored).toEqual([]);
    const ok = await post('/tokens/tok-1/webhook', { url: 'https://hooks.example.test/dlr' });
    expect(ok.status).toBe(200);
    expect(stored).toEqual([{ tokenId: 'tok-1', url: 'https://hooks.example.test/dlr' }]);
  });

  test('spec 1 §6 rule 1: "Send test DLR" to a stored loopback target sends nothing and says only why it was refused', async () => {
    const res = await post('/tokens/tok-hook/webhook/test', {});
    const page = await res.text();
    expect(page).toContain('Not sent');
    expect(page).toContain('webhooks must use https');
    expect(page).not.toMatch(/answered|internal service banner|ECONNREFUSED|ms<\/strong>/);
    expect(probes).toEqual([]);
  });

  test('the new-token form submitted with its defaults creates a token (an api_sms token of the first project)', async () => {
    const form = await (await fetch(`${url}/projects`, { headers: { cookie: 'console_session=cookie-2' } })).text();
    // What a browser submits: each select's selected option, or its first.
    const select = (name: string): string => {
      const body = new RegExp(`<select name="${name}">(.*?)</select>`, 's').exec(form)?.[1] ?? '';
      const option = /<option value="([^"]*)" selected>/.exec(body) ?? /<option value="([^"]*)"/.exec(body);
      return option?.[1] ?? '';
    };
    expect({ kind: select('kind'), project: select('project') }).toEqual({ kind: 'api_sms', project: 'p1' });
    const res = await post('/tokens', { name: '', kind: select('kind'), project: select('project'), datasource: '' });
    expect(res.status).toBe(201);
    expect(createdTokens.at(-1)).toMatchObject({ kind: 'api_sms', projectId: 'p1' });
  });

  test('a refused new-token form comes back with what was typed and the reason', async () => {
    const before = createdTokens.length;
    const res = await post('/tokens', { name: 'checkout <service>', kind: 'product', project: 'p2', datasource: 'ds-typed', scope_x: '1' });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('a product token needs at least one scope');
    expect(page).toContain('value="checkout &lt;service&gt;"');
    expect(page).toContain('<option value="product" selected>');
    expect(page).toContain('<option value="p2" selected>');
    expect(page).toContain('value="ds-typed"');
    expect(createdTokens.length).toBe(before);
    const scoped = await post('/tokens', { name: 'n', kind: 'product', project: 'p2', 'scope_ingest:read': '1', datasource: '' });
    expect(scoped.status).toBe(201);
    const again = await post('/tokens', { name: 'n', kind: 'datasource', project: 'p2', 'scope_ingest:read': '1', datasource: 'nope' });
    expect(await again.text()).toContain('name="scope_ingest:read" value="1" checked');
  });
});
