// The admin API end to end (DESIGN §4 "Provisioning over HTTP at /admin/v1 with an ADMIN_TOKEN"):
// off on the shared stack (no ADMIN_TOKEN: every /admin path is a 404), on a stack of its own
// started with one: 401 without it, then organization → project → token → top-up → price →
// POST /sms with the new token (201) → its DLR on the webhook set through the API; a datasource
// and its token → ingestion accepted; bad bodies → 400/422 naming the field; what one
// organization's token reaches of another's (404). A product started with a short ADMIN_TOKEN
// refuses to start, naming the setting.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { startStack, type RunningStack } from '../../support/stack';
import { api, stack } from '../../support/stack';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { ensureBuilt } from '../../infra/paths';

const ADMIN_TOKEN = randomBytes(32).toString('hex');
const ADMIN = '/admin/v1';
const V1 = '/transactional/v1';

type Res = Awaited<ReturnType<typeof api>>;
interface Problem { title: string; status: number; detail: string; fields?: Record<string, string[]> }

let own: RunningStack;
let receiver: WebhookReceiver;

/**
 * A request to the stack started with ADMIN_TOKEN, on a connection of its own: a pooled
 * keep-alive connection that the server closed while the suite was busy elsewhere (the
 * start-up refusal test blocks for seconds) would fail the POST that reuses it.
 */
function call(path: string, init: { method?: string; token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<Res> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  const token = init.token === undefined ? ADMIN_TOKEN : init.token;
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  let body = init.rawBody;
  if (init.body !== undefined) body = JSON.stringify(init.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(`${own.info.httpUrl}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => {
        let parsed: unknown = text;
        try { parsed = text ? JSON.parse(text) : null; } catch { /* keep the text */ }
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') answer.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: answer, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const entity = <T>(res: Res): T => (res.body as { entity: T }).entity;
const problem = (res: Res): Problem => res.body as Problem;

beforeAll(async () => {
  [own, receiver] = await Promise.all([startStack({ ADMIN_TOKEN, LOG_LEVEL: 'warn' }, () => undefined), startWebhookReceiver()]);
}, 240_000);

afterAll(async () => {
  await receiver?.close();
  await own?.stop();
}, 60_000);

describe('DESIGN §4: the admin API is off without ADMIN_TOKEN', () => {
  test('the shared stack has no ADMIN_TOKEN: every /admin path is a 404 { title, status, detail }, with or without a token, and /openapi.json lists none', async () => {
    expect(stack().productEnv['ADMIN_TOKEN']).toBeUndefined();
    for (const [method, path] of [['POST', `${ADMIN}/organizations`], ['GET', `${ADMIN}/organizations`], ['PUT', `${ADMIN}/organizations/x/balance`], ['GET', '/admin']]) {
      const res = await api(path as string, { method: method as string, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(method === 'GET' ? {} : { rawBody: '{"name":"x"}' }) });
      expect({ method, path, status: res.status, keys: Object.keys(res.body as object).sort() }).toEqual({ method, path, status: 404, keys: ['detail', 'status', 'title'] });
    }
    const doc = (await api('/openapi.json')).body as { paths: Record<string, Record<string, { operationId?: string }>> };
    expect(Object.values(doc.paths).flatMap((ops) => Object.values(ops)).filter((op) => op.operationId?.startsWith('admin'))).toEqual([]);
  });

  test('a product started with an ADMIN_TOKEN shorter than 32 characters refuses to start and names the setting', () => {
    const product = spawnSync(process.execPath, [ensureBuilt({ emitOnError: true })], { env: { ...process.env, ADMIN_TOKEN: 'short-token', DATA_DIR: own.info.dataDir }, encoding: 'utf8', timeout: 30_000 });
    expect(product.status).toBe(2);
    expect(product.stderr).toMatch(/ADMIN_TOKEN must be at least 32 characters/);
    expect(product.stderr).not.toContain('short-token');
  }, 180_000);
});

describe('DESIGN §4: the admin API with ADMIN_TOKEN', () => {
  test('refused without the admin token: 401 { title, status, detail } for none, a wrong one, an api_sms-style one, or access_token in the query', async () => {
    const cases: Array<[string, Parameters<typeof call>[1], string]> = [
      ['no token', { token: null, body: { name: 'x' } }, `${ADMIN}/organizations`],
      // The last character changed (a random token may end in 0 already).
      ['a wrong token', { token: `${ADMIN_TOKEN.slice(0, -1)}${ADMIN_TOKEN.endsWith('0') ? '1' : '0'}`, body: { name: 'x' } }, `${ADMIN}/organizations`],
      ['a prefix of it', { token: ADMIN_TOKEN.slice(0, 32), body: { name: 'x' } }, `${ADMIN}/organizations`],
      ['Basic instead of Bearer', { token: null, headers: { authorization: `Basic ${ADMIN_TOKEN}` }, body: { name: 'x' } }, `${ADMIN}/organizations`],
      ['the token as access_token (PUT: past the POST query guard)', { token: null, method: 'PUT', body: { amount: 1 } }, `${ADMIN}/organizations/x/balance?access_token=${ADMIN_TOKEN}`],
    ];
    for (const [name, init, path] of cases) {
      const res = await call(path, init);
      expect({ name, status: res.status, title: problem(res).title, keys: Object.keys(res.body as object).sort() }).toEqual({ name, status: 401, title: 'Unauthorized', keys: ['detail', 'status', 'title'] });
    }
    // On a POST the query guard answers first, from the document: the admin operations take no access_token.
    const queried = await call(`${ADMIN}/organizations?access_token=${ADMIN_TOKEN}`, { token: null, body: { name: 'x' } });
    expect(queried.status).toBe(400);
    expect(problem(queried).detail).toMatch(/unknown query parameter "access_token"/);
  });

  test('organization → project → api_sms token → top-up → price → POST /sms with the new token (201) → its DLRs on the webhook set through the API', async () => {
    const org = await call(`${ADMIN}/organizations`, { body: { name: 'Admin API Org', currency: 'eur' } });
    expect(org.status).toBe(201);
    const orgId = entity<{ id: string; currency: string }>(org).id;
    expect(entity<{ currency: string }>(org).currency).toBe('EUR');
    const project = await call(`${ADMIN}/organizations/${orgId}/projects`, { body: { name: 'Shop' } });
    expect(project.status).toBe(201);
    const projectId = entity<{ id: string; orgId: string }>(project).id;
    expect(entity<{ orgId: string }>(project).orgId).toBe(orgId);
    const token = await call(`${ADMIN}/organizations/${orgId}/tokens`, { body: { kind: 'api_sms', project: projectId, name: 'ci' } });
    expect(token.status).toBe(201);
    const created = entity<{ id: string; kind: string; project: string; value: string; hash?: string }>(token);
    expect(created).toMatchObject({ kind: 'api_sms', project: projectId });
    expect(created.value).toEqual(expect.any(String));
    expect(created.hash).toBeUndefined();

    const topUp = await call(`${ADMIN}/organizations/${orgId}/balance/top-up`, { body: { amount: 5 } });
    expect({ status: topUp.status, entity: entity(topUp) }).toEqual({ status: 200, entity: { organization: orgId, currency: 'EUR', available: 5 } });
    const again = await call(`${ADMIN}/organizations/${orgId}/balance/top-up`, { body: { amount: 2.5 } });
    expect(entity<{ available: number }>(again).available).toBe(7.5);
    const price = await call(`${ADMIN}/organizations/${orgId}/prices`, { body: { kind: 'sms', country: 'de', price: 0.04 } });
    expect({ status: price.status, entity: entity(price) }).toEqual({ status: 200, entity: { kind: 'sms', country: 'DE', currency: 'EUR', price: 0.04 } });
    const hook = await call(`${ADMIN}/organizations/${orgId}/tokens/${created.id}/webhook`, { method: 'PUT', body: { url: receiver.url } });
    expect(hook.status).toBe(200);
    expect(entity<{ url: string; secret: string }>(hook)).toEqual({ token: created.id, url: receiver.url, secret: expect.stringMatching(/^whsec_/) });

    // The answers came once the serving process's mirror had each write: the token works at once.
    const sent = await call(`${V1}/sms`, { token: created.value, body: { from: 'AdminAPI', to: '+4915112345678', text: 'provisioned over HTTP' } });
    expect(sent.status).toBe(201);
    const message = entity<{ id: string; priceUser: number }>(sent);
    expect(message.priceUser).toBe(0.04);
    const balance = await call(`${V1}/organization/account`, { token: created.value });
    expect(entity<{ available: number }>(balance).available).toBeCloseTo(7.46, 6);
    await receiver.waitFor(() => receiver.forMessage(message.id).some((d) => d.body['status'] === 'delivered'), 60_000);
  }, 90_000);

  test('datasource of a project + a datasource token → ingestion accepted; a product token with scopes', async () => {
    const orgId = entity<{ id: string }>(await call(`${ADMIN}/organizations`, { body: { name: 'Admin API Ingest Org' } })).id;
    const projectId = entity<{ id: string }>(await call(`${ADMIN}/organizations/${orgId}/projects`, { body: { name: 'CDP' } })).id;
    const ds = await call(`${ADMIN}/organizations/${orgId}/projects/${projectId}/datasources`, { body: { name: 'Web shop', strict: false } });
    expect(ds.status).toBe(201);
    const datasource = entity<{ id: string; projectId: string; orgId: string }>(ds);
    expect(datasource).toMatchObject({ projectId, orgId });
    const token = await call(`${ADMIN}/organizations/${orgId}/tokens`, { body: { kind: 'datasource', datasource: datasource.id } });
    expect(token.status).toBe(201);
    const value = entity<{ value: string; project: string }>(token);
    expect(value.project).toBe(projectId);
    const ingest = await call(`/ingest/v1/project/${projectId}/datasource/${datasource.id}/stream/contacts`, { token: value.value, body: [{ _user_id: 'admin-api-1', _email: 'a@example.com' }] });
    expect(ingest.status).toBe(202);
    const product = await call(`${ADMIN}/organizations/${orgId}/tokens`, { body: { kind: 'product', project: projectId, scopes: ['ingest:read', 'audience:search'] } });
    expect(product.status).toBe(201);
    expect(entity<{ scopes: string[] }>(product).scopes).toEqual(['ingest:read', 'audience:search']);
  }, 60_000);

  test.each<[string, string, string | undefined, unknown, number, string]>([
    ['organization: no name', '/organizations', undefined, {}, 422, 'name'],
    ['organization: an unknown field', '/organizations', undefined, { name: 'x', plan: 'gold' }, 422, 'plan'],
    ['organization: name of the wrong type', '/organizations', undefined, { name: 7 }, 400, 'name'],
    ['organization: a bad currency', '/organizations', undefined, { name: 'x', currency: 'EURO' }, 422, 'currency'],
    ['token: an unknown kind', '/organizations/{org}/tokens', undefined, { kind: 'root', project: '{project}' }, 422, 'kind'],
    ['token: api_sms without a project', '/organizations/{org}/tokens', undefined, { kind: 'api_sms' }, 422, 'project'],
    ['token: an unknown scope', '/organizations/{org}/tokens', undefined, { kind: 'product', project: '{project}', scopes: ['everything'] }, 422, 'scopes[0]'],
    ['token: scopes on an api_sms token', '/organizations/{org}/tokens', undefined, { kind: 'api_sms', project: '{project}', scopes: ['ingest:read'] }, 422, 'scopes'],
    ['token: a datasource token without its datasource', '/organizations/{org}/tokens', undefined, { kind: 'datasource', project: '{project}' }, 422, 'datasource'],
    ['top-up: a negative amount', '/organizations/{org}/balance/top-up', undefined, { amount: -1 }, 422, 'amount'],
    ['top-up: zero', '/organizations/{org}/balance/top-up', undefined, { amount: 0 }, 422, 'amount'],
    ['top-up: an amount as a string', '/organizations/{org}/balance/top-up', undefined, { amount: '5' }, 400, 'amount'],
    ['balance: no amount', '/organizations/{org}/balance', 'PUT', { currency: 'EUR' }, 422, 'amount'],
    ['price: a bad country', '/organizations/{org}/prices', undefined, { kind: 'sms', country: 'GBR', price: 0.1 }, 422, 'country'],
    ['price: an unknown kind', '/organizations/{org}/prices', undefined, { kind: 'mms', country: 'GB', price: 0.1 }, 422, 'kind'],
    ['webhook: no url', '/organizations/{org}/tokens/{token}/webhook', 'PUT', {}, 422, 'url'],
    ['webhook: not a URL', '/organizations/{org}/tokens/{token}/webhook', 'PUT', { url: 'not a url' }, 422, 'url'],
    ['webhook: the cloud metadata endpoint', '/organizations/{org}/tokens/{token}/webhook', 'PUT', { url: 'http://169.254.169.254/latest' }, 422, 'url'],
    ['datasource: a blank name', '/organizations/{org}/projects/{project}/datasources', undefined, { name: '   ' }, 422, 'name'],
    ['project: a JSON array', '/organizations/{org}/projects', undefined, [{ name: 'x' }], 400, 'body'],
  ])('bad input, %s: the status of its kind (400 wrong type, 422 a broken rule) naming the field, nothing created', async (_name, template, method, body, status, field) => {
    const orgId = entity<{ id: string }>(await call(`${ADMIN}/organizations`, { body: { name: 'Admin API Bad Input' } })).id;
    const projectId = entity<{ id: string }>(await call(`${ADMIN}/organizations/${orgId}/projects`, { body: { name: 'P' } })).id;
    const tokenId = entity<{ id: string }>(await call(`${ADMIN}/organizations/${orgId}/tokens`, { body: { kind: 'api_sms', project: projectId } })).id;
    const fill = (text: string): string => text.replace('{org}', orgId).replace('{project}', projectId).replace('{token}', tokenId);
    const res = await call(`${ADMIN}${fill(template)}`, { ...(method ? { method } : {}), body: JSON.parse(fill(JSON.stringify(body))) as unknown });
    expect({ status: res.status, keys: Object.keys(res.body as object).filter((k) => k !== 'fields').sort() }).toEqual({ status, keys: ['detail', 'status', 'title'] });
    expect(problem(res).status).toBe(status);
    if (status === 422) expect(Object.keys(problem(res).fields ?? {})).toContain(field);
    expect(problem(res).detail).toContain(field === 'body' ? 'JSON object' : field);
    // Nothing was changed: the balance is still the zero of a new organization.
    const balance = await call(`${ADMIN}/organizations/${orgId}/balance/top-up`, { body: { amount: 1 } });
    expect(entity<{ available: number }>(balance).available).toBe(1);
  }, 30_000);

  test('malformed JSON is a 400, a body that is not JSON a 415: never a 500', async () => {
    const malformed = await call(`${ADMIN}/organizations`, { rawBody: '{"name":' });
    expect({ status: malformed.status, title: problem(malformed).title }).toEqual({ status: 400, title: 'Bad Request' });
    const text = await call(`${ADMIN}/organizations`, { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });

  test('DESIGN §4 "another organization\'s resources answer 404": ids of another organization, and what its token reaches', async () => {
    const [a, b] = await Promise.all(['Admin Iso A', 'Admin Iso B'].map(async (name) => {
      const orgId = entity<{ id: string }>(await call(`${ADMIN}/organizations`, { body: { name } })).id;
      const projectId = entity<{ id: string }>(await call(`${ADMIN}/organizations/${orgId}/projects`, { body: { name: 'P' } })).id;
      const token = entity<{ id: string; value: string }>(await call(`${ADMIN}/organizations/${orgId}/tokens`, { body: { kind: 'api_sms', project: projectId } }));
      await call(`${ADMIN}/organizations/${orgId}/balance/top-up`, { body: { amount: 10 } });
      await call(`${ADMIN}/organizations/${orgId}/prices`, { body: { kind: 'sms', country: 'DE', price: 0.05 } });
      return { orgId, projectId, token };
    })) as [{ orgId: string; projectId: string; token: { id: string; value: string } }, { orgId: string; projectId: string; token: { id: string; value: string } }];
    // Admin calls that pair one organization with another's project, token or datasource.
    const foreign = [
      await call(`${ADMIN}/organizations/${a.orgId}/tokens`, { body: { kind: 'api_sms', project: b.projectId } }),
      await call(`${ADMIN}/organizations/${a.orgId}/tokens/${b.token.id}/webhook`, { method: 'PUT', body: { url: receiver.url } }),
      await call(`${ADMIN}/organizations/${a.orgId}/projects/${b.projectId}/datasources`, { body: { name: 'x' } }),
      await call(`${ADMIN}/organizations/unknown-org/projects`, { body: { name: 'x' } }),
      await call(`${ADMIN}/organizations/${a.orgId}.x/projects`, { body: { name: 'x' } }),
    ];
    expect(foreign.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    // The token created for A reads A's message and not B's.
    const sentB = await call(`${V1}/sms`, { token: b.token.value, body: { from: 'IsoB', to: '+4915112345678', text: 'b' } });
    expect(sentB.status).toBe(201);
    const idB = entity<{ id: string }>(sentB).id;
    expect((await call(`${V1}/sms/${idB}`, { token: a.token.value })).status).toBe(404);
    expect((await call(`${V1}/sms/${idB}`, { token: b.token.value })).status).toBe(200);
    // And the admin token is not an API token.
    expect((await call(`${V1}/sms/${idB}`)).status).toBe(401);
  }, 60_000);

  test('/openapi.json documents the admin operations under /admin/v1 with their own bearer scheme', async () => {
    const doc = (await call('/openapi.json', { token: null })).body as { paths: Record<string, Record<string, { operationId?: string; servers?: Array<{ url: string }>; security?: unknown }>>; components: { securitySchemes: Record<string, unknown> } };
    const ops = Object.values(doc.paths).flatMap((item) => Object.values(item)).filter((op) => op.operationId?.startsWith('admin'));
    expect(ops.map((op) => op.operationId).sort()).toEqual(['adminCreateDatasource', 'adminCreateOrganization', 'adminCreateProject', 'adminCreateToken', 'adminSetBalance', 'adminSetPrice', 'adminSetWebhook', 'adminTopUp']);
    for (const op of ops) expect({ id: op.operationId, servers: op.servers, security: op.security }).toEqual({ id: op.operationId, servers: [{ url: ADMIN }], security: [{ adminToken: [] }] });
    expect(doc.components.securitySchemes['adminToken']).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
