// The admin API without an engine (DESIGN §4 "Provisioning over HTTP at /admin/v1 with an
// ADMIN_TOKEN"): its body schemas (400 for a wrong JSON type, 422 naming the field), the
// provisioning rules the CLI shares (core/provisioning/provisioning.ts) over in-memory ports, the
// ADMIN_TOKEN setting, the OpenAPI document and the POST query guard derived from it, and the
// in-process app: off without services (404), 401 with a wrong token, one audit line per call
// that never carries a token value.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../config';
import { Provisioning, type ProvisioningPorts } from '../../core/provisioning/provisioning';
import type { Balance, Organization, Price, Project, Token } from '../../core/accounts/types';
import { AppError } from '../../core/errors';
import type { Datasource } from '../../core/ingest/types';
import { ADMIN_SCHEMAS } from '../../schemas/admin';
import { parseAdminBody } from '../../core/accounts/admin-body';
import { openApiDocument } from '../../gateways/http/openapi';
import { WebhookTargetRefusedError } from '../../core/sms/webhook-target';
import { adminErrorFormat, type AdminServices } from '../../gateways/http/admin-api';
import { createHttpApp, type SmsServices } from '../../gateways/http/app';
import { postQueryNames } from '../../gateways/http/query-guard';
import { SmsWorld } from '../support/sms-world';

const ADMIN_TOKEN = 'a'.repeat(40);

/** Accounts, balances and datasources in maps, as the NATS stores keep them. */
class Accounts {
  readonly orgs = new Map<string, Organization>();
  readonly projects = new Map<string, Project>();
  readonly tokens = new Map<string, Token>();
  readonly values = new Map<string, string>();
  readonly prices = new Map<string, Price>();
  readonly balances = new Map<string, Balance>();
  readonly datasources = new Map<string, Datasource>();
  private next = 0;
  private id(prefix: string): string {
    this.next += 1;
    return `${prefix}${this.next}`;
  }

  ports(webhookTarget: ProvisioningPorts['webhookTarget'] = async (url) => url): ProvisioningPorts {
    const missing = (what: string): Error => Object.assign(new Error(`${what} not found`), { notFound: true });
    const at = <T>(map: Map<string, T>, id: string, what: string): T => {
      const found = map.get(id);
      if (!found) throw missing(what);
      return found;
    };
    return {
      accounts: {
        createOrg: async (input) => {
          const org: Organization = { id: this.id('org'), name: input.name, currency: input.currency ?? 'EUR', smppEnabled: input.smppEnabled ?? false, createdAt: 'now' };
          this.orgs.set(org.id, org);
          return org;
        },
        getOrg: async (id) => at(this.orgs, id, 'organization'),
        createProject: async (orgId, name) => {
          const project: Project = { id: this.id('prj'), orgId, name, createdAt: 'now' };
          this.projects.set(project.id, project);
          return project;
        },
        getProject: async (id) => at(this.projects, id, 'project'),
        createToken: async (input) => {
          const token = { id: this.id('tok'), kind: input.kind, name: input.name ?? 'token', orgId: input.orgId, projectId: input.projectId ?? null, datasourceId: input.datasourceId ?? null, scopes: [...(input.scopes ?? [])], hash: 'h', createdAt: 'now', revokedAt: null, webhook: null, smpp: null, numbers: [] } as Token;
          const value = `value-of-${token.id}-${'x'.repeat(20)}`;
          this.tokens.set(token.id, token);
          this.values.set(value, token.id);
          return { token, value };
        },
        getToken: async (id) => at(this.tokens, id, 'token'),
        setPrice: async (orgId, kind, country, price) => {
          this.prices.set(`${kind}.${orgId}.${country}`, price);
          return price;
        },
        setWebhook: async (id, url, secret) => {
          const token = { ...at(this.tokens, id, 'token'), webhook: { url, secret: secret ?? 'whsec_c2VjcmV0', keyFormat: 'whsec' as const } };
          this.tokens.set(id, token);
          return token;
        },
      },
      balances: {
        get: async (orgId) => this.balances.get(orgId) ?? null,
        set: async (orgId, balance) => { this.balances.set(orgId, balance); return balance; },
        credit: async (orgId, micros) => {
          const balance = at(this.balances, orgId, 'balance');
          this.balances.set(orgId, { ...balance, availableMicros: balance.availableMicros + micros });
        },
      },
      datasources: {
        create: async (projectId, name, options) => {
          const project = at(this.projects, projectId, 'project');
          const ds: Datasource = { id: this.id('ds'), orgId: project.orgId, projectId, name, strict: options.strict ?? false, createdAt: 'now' };
          this.datasources.set(ds.id, ds);
          return ds;
        },
        get: async (id) => at(this.datasources, id, 'datasource'),
      },
      webhookTarget,
      isNotFound: (err) => (err as { notFound?: boolean }).notFound === true,
    };
  }

  /** The serving process's mirror: everything written is visible at once. */
  mirror(): AdminServices['mirror'] {
    return {
      authenticate: (value) => {
        const id = this.values.get(value);
        const token = id === undefined ? undefined : this.tokens.get(id);
        const org = token ? this.orgs.get(token.orgId) : undefined;
        return token && org ? { token, org } : undefined;
      },
      org: (id) => this.orgs.get(id),
      project: (id) => this.projects.get(id),
      token: (id) => this.tokens.get(id),
      price: (orgId, kind, country) => this.prices.get(`${kind}.${orgId}.${country}`),
      entry: <T>(key: string) => this.datasources.get(key.replace(/^datasource\./, '')) as T | undefined,
    };
  }
}

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
};
const rejection = async (promise: Promise<unknown>): Promise<AppError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('not refused');
};

describe('DESIGN §4 admin API: request bodies (schemas/admin.ts, core/accounts/admin-body.ts)', () => {
  test.each([
    ['AdminOrganizationCreate', { name: 'Acme' }],
    ['AdminOrganizationCreate', { name: 'Acme', currency: 'usd', smppEnabled: true }],
    ['AdminTokenCreate', { kind: 'product', project: '0190a1b2-c3d4-7e5f-c012-3456789abcde', scopes: ['ingest:write', 'analytics:read'], name: 'ci' }],
    ['AdminTokenCreate', { kind: 'legacy' }],
    ['AdminTopUp', { amount: 0.5 }],
    ['AdminBalanceSet', { amount: 0 }],
    ['AdminPriceSet', { kind: 'lookup', country: 'de', price: 0.005, currency: 'EUR' }],
    ['AdminWebhookSet', { url: 'https://example.com/dlr', secret: 'whsec_abc' }],
    ['AdminDatasourceCreate', { name: 'Web shop', strict: true }],
  ] as const)('%s takes %j', (schema, body) => {
    expect(parseAdminBody(schema, body)).toEqual(body);
  });

  test.each([
    ['AdminOrganizationCreate', { name: 5 }, 'WRONG_SHAPE', 'name'],
    ['AdminOrganizationCreate', { name: 'x', smppEnabled: 'yes' }, 'WRONG_SHAPE', 'smppEnabled'],
    ['AdminTopUp', { amount: '5' }, 'WRONG_SHAPE', 'amount'],
    ['AdminTokenCreate', { kind: 'api_sms', scopes: 'ingest:read' }, 'WRONG_SHAPE', 'scopes'],
    ['AdminTokenCreate', { kind: 'product', scopes: [1] }, 'WRONG_SHAPE', 'scopes[0]'],
    ['AdminProjectCreate', [], 'BODY_NOT_OBJECT', 'name'],
    ['AdminProjectCreate', null, 'BODY_NOT_OBJECT', 'name'],
  ] as const)('%s refuses %j with a 400 (%s) naming %s', (schema, body, code, field) => {
    const err = refusal(() => parseAdminBody(schema, body));
    expect({ code: err.code, status: err.status }).toEqual({ code, status: 400 });
    expect(err.message).toContain(field);
  });

  test.each([
    ['AdminOrganizationCreate', {}, { name: ['is required'] }],
    ['AdminOrganizationCreate', { name: '  ' }, { name: ['must not be blank'] }],
    ['AdminOrganizationCreate', { name: 'x', currency: 'EURO' }, { currency: ['has the wrong format'] }],
    ['AdminOrganizationCreate', { name: 'x', plan: 'gold' }, { plan: ['is not a field of this request (it takes name, currency, smppEnabled)'] }],
    ['AdminTokenCreate', { kind: 'root' }, { kind: ['must be one of api_sms, legacy, datasource, product'] }],
    ['AdminTokenCreate', { kind: 'api_sms', project: 'a.b' }, { project: ['is not an id (letters, digits, - and _)'] }],
    ['AdminTokenCreate', { kind: 'product', scopes: [] }, { scopes: ['must not be empty'] }],
    ['AdminTokenCreate', { kind: 'product', scopes: ['ingest:read', 'ingest:read'] }, { scopes: ['must not repeat a value'] }],
    ['AdminTopUp', { amount: 0 }, { amount: ['must be above 0'] }],
    ['AdminTopUp', { amount: 2e9 }, { amount: ['must be at most 1000000000'] }],
    ['AdminPriceSet', { kind: 'sms', country: 'GBR', price: -1 }, { country: ['has the wrong format'], price: ['is too small'] }],
    ['AdminWebhookSet', { url: '' }, { url: ['must not be empty'] }],
    ['AdminOrganizationCreate', JSON.parse('{"name":"x","__proto__":{"polluted":true}}') as unknown, { ['__proto__']: ['is not a field of this request (it takes name, currency, smppEnabled)'] }],
  ] as const)('%s refuses %j with a 422 naming the fields', (schema, body, fields) => {
    const err = refusal(() => parseAdminBody(schema, body));
    expect({ code: err.code, fields: err.fields }).toEqual({ code: 'VALIDATION_FAILED', fields });
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  test('a 422 is { title, status, detail } naming each field, plus fields', () => {
    const err = refusal(() => parseAdminBody('AdminPriceSet', { kind: 'sms', country: 'GBR' }));
    expect(adminErrorFormat(err)).toEqual({
      status: 422,
      body: { title: 'Unprocessable Entity', status: 422, detail: 'invalid fields: price: is required; country: has the wrong format', fields: { price: ['is required'], country: ['has the wrong format'] } },
    });
    expect(adminErrorFormat(new AppError('NOT_FOUND', 'organization x not found'))).toEqual({ status: 404, body: { title: 'Not Found', status: 404, detail: 'organization x not found' } });
  });
});

describe('DESIGN §4 admin API: the provisioning rules the admin CLI shares (core/provisioning/provisioning.ts)', () => {
  test('an organization gets a zero balance in its currency; top-ups add to it; set replaces it', async () => {
    const store = new Accounts();
    const p = new Provisioning(store.ports());
    const org = await p.createOrganization({ name: ' Acme ', currency: 'usd' });
    expect(org).toMatchObject({ name: 'Acme', currency: 'USD' });
    expect(store.balances.get(org.id)).toEqual({ currency: 'USD', availableMicros: 0 });
    expect(await p.topUp(org.id, 2.5)).toEqual({ organization: org.id, currency: 'USD', available: 2.5 });
    expect(await p.topUp(org.id, 0.075)).toEqual({ organization: org.id, currency: 'USD', available: 2.575 });
    expect(await p.setBalance(org.id, 1)).toEqual({ organization: org.id, currency: 'USD', available: 1 });
    expect((await rejection(p.topUp(org.id, -1))).fields).toEqual({ amount: [expect.stringContaining('above 0')] });
    expect((await rejection(p.topUp('nobody', 1))).code).toBe('NOT_FOUND');
  });

  test('tokens: a datasource token takes its datasource\'s project; legacy is account-wide; product needs known scopes; a foreign project or datasource is a 404', async () => {
    const store = new Accounts();
    const p = new Provisioning(store.ports());
    const a = await p.createOrganization({ name: 'A' });
    const b = await p.createOrganization({ name: 'B' });
    const pa = await p.createProject(a.id, 'PA');
    const pb = await p.createProject(b.id, 'PB');
    const ds = await p.createDatasource(a.id, pa.id, { name: 'DS' });
    expect((await p.createToken({ orgId: a.id, kind: 'datasource', datasourceId: ds.id })).token).toMatchObject({ projectId: pa.id, datasourceId: ds.id });
    expect((await p.createToken({ orgId: a.id, kind: 'legacy' })).token).toMatchObject({ projectId: null });
    expect((await p.createToken({ orgId: a.id, kind: 'product', projectId: pa.id, scopes: ['ingest:read'] })).token.scopes).toEqual(['ingest:read']);
    const refused = async (input: Parameters<Provisioning['createToken']>[0]): Promise<[string, unknown]> => {
      const err = await rejection(p.createToken(input));
      return [err.code, err.fields ?? err.message];
    };
    expect(await refused({ orgId: a.id, kind: 'api_sms' })).toEqual(['VALIDATION_FAILED', { project: ['is required for a api_sms token'] }]);
    expect(await refused({ orgId: a.id, kind: 'api_sms', projectId: pb.id })).toEqual(['NOT_FOUND', `project ${pb.id} not found in organization ${a.id}`]);
    expect(await refused({ orgId: b.id, kind: 'datasource', datasourceId: ds.id })).toEqual(['NOT_FOUND', `datasource ${ds.id} not found in organization ${b.id}`]);
    expect(await refused({ orgId: a.id, kind: 'datasource', datasourceId: ds.id, projectId: 'other' })).toEqual(['VALIDATION_FAILED', { project: [`datasource ${ds.id} belongs to project ${pa.id}, not other`] }]);
    expect(await refused({ orgId: a.id, kind: 'legacy', projectId: pa.id })).toEqual(['VALIDATION_FAILED', { project: ['a legacy token is account-wide: give no project'] }]);
    expect(await refused({ orgId: a.id, kind: 'product', projectId: pa.id, scopes: ['root'] })).toEqual(['VALIDATION_FAILED', { scopes: [expect.stringContaining('unknown scope "root"')] }]);
    expect(await refused({ orgId: a.id, kind: 'api_sms', projectId: pa.id, scopes: ['ingest:read'] })).toEqual(['VALIDATION_FAILED', { scopes: ['are for product tokens only'] }]);
    expect(await refused({ orgId: a.id, kind: 'api_sms', projectId: pa.id, datasourceId: ds.id })).toEqual(['VALIDATION_FAILED', { datasource: ['is for datasource tokens only'] }]);
    expect(await refused({ orgId: 'org.x', kind: 'legacy' })).toEqual(['NOT_FOUND', 'organization "org.x" not found']);
    // Refusals wrote nothing: three tokens were made above.
    expect(store.tokens.size).toBe(3);
  });

  test('webhooks: on api_sms tokens of the organization only; a refused target is a 422 on url', async () => {
    const store = new Accounts();
    const p = new Provisioning(store.ports(async (url) => {
      if (url.startsWith('http://10.')) throw new WebhookTargetRefusedError('the address 10.0.0.1 is private (private)');
      return url;
    }));
    const org = await p.createOrganization({ name: 'A' });
    const other = await p.createOrganization({ name: 'B' });
    const project = await p.createProject(org.id, 'P');
    const api = (await p.createToken({ orgId: org.id, kind: 'api_sms', projectId: project.id })).token;
    const legacy = (await p.createToken({ orgId: org.id, kind: 'legacy' })).token;
    expect((await p.setWebhook(org.id, api.id, 'https://example.com/dlr')).webhook?.url).toBe('https://example.com/dlr');
    expect((await rejection(p.setWebhook(org.id, api.id, 'http://10.0.0.1/'))).fields).toEqual({ url: ['is refused: the address 10.0.0.1 is private (private)'] });
    expect((await rejection(p.setWebhook(org.id, legacy.id, 'https://example.com/dlr'))).fields).toEqual({ token: ['is a legacy token: webhooks are set on api_sms tokens'] });
    expect((await rejection(p.setWebhook(other.id, api.id, 'https://example.com/dlr'))).code).toBe('NOT_FOUND');
  });

  test('prices: kind sms or lookup, an alpha-2 country (upper-cased), the organization\'s currency by default', async () => {
    const store = new Accounts();
    const p = new Provisioning(store.ports());
    const org = await p.createOrganization({ name: 'A', currency: 'GBP' });
    expect(await p.setPrice(org.id, { kind: 'sms', country: 'de', price: 0.075 })).toEqual({ country: 'DE', currency: 'GBP', priceMicros: 75_000 });
    expect((await rejection(p.setPrice(org.id, { kind: 'mms', country: 'DE', price: 1 }))).fields).toEqual({ kind: ['must be sms or lookup, got "mms"'] });
    expect((await rejection(p.setPrice(org.id, { kind: 'sms', country: 'D1', price: 1 }))).fields).toEqual({ country: ['must be an ISO 3166 alpha-2 code, got "D1"'] });
    expect((await rejection(p.setPrice(org.id, { kind: 'sms', country: 'DE', price: Number.NaN }))).fields).toEqual({ price: [expect.stringContaining('must be a number')] });
  });
});

describe('DESIGN §4 admin API: ADMIN_TOKEN (config/index.ts)', () => {
  test('unset: off; 32 characters or more: on; shorter or with spaces: start-up refused naming ADMIN_TOKEN (and never echoing it)', () => {
    expect(loadConfig({}).admin.token).toBeUndefined();
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(32) }).admin.token).toBe('x'.repeat(32));
    for (const value of ['short-secret', 'x'.repeat(31), `${'x'.repeat(20)} ${'y'.repeat(20)}`]) {
      expect(() => loadConfig({ ADMIN_TOKEN: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ADMIN_TOKEN: value })).toThrow(/^ADMIN_TOKEN must be at least 32 characters/);
      expect(() => loadConfig({ ADMIN_TOKEN: value })).not.toThrow(value);
    }
  });
});

describe('DESIGN §4 admin API: the OpenAPI document and the POST query guard derived from it', () => {
  test('documented only when served; every body schema is a component; the admin operations take no access_token', () => {
    const off = openApiDocument() as { paths: Record<string, unknown> };
    const on = openApiDocument(undefined, { admin: true }) as { paths: Record<string, Record<string, { operationId: string }>>; components: { schemas: Record<string, unknown> } };
    const adminOps = (doc: { paths: Record<string, unknown> }): string[] => Object.values(doc.paths).flatMap((item) => Object.values(item as Record<string, { operationId?: string }>)).map((op) => op.operationId ?? '').filter((id) => id.startsWith('admin'));
    expect(adminOps(off)).toEqual([]);
    expect(adminOps(on)).toHaveLength(8);
    for (const schema of ADMIN_SCHEMAS) expect(Object.keys(on.components.schemas)).toContain(schema.$id);
    const table = postQueryNames(on, { '/transactional/v1': '' });
    for (const pattern of ['/admin/v1/organizations', '/admin/v1/organizations/:org/projects', '/admin/v1/organizations/:org/tokens', '/admin/v1/organizations/:org/balance/top-up', '/admin/v1/organizations/:org/prices', '/admin/v1/organizations/:org/projects/:project/datasources']) {
      expect({ pattern, takes: [...(table.byRoute.get(pattern) ?? ['(not listed)'])] }).toEqual({ pattern, takes: [] });
    }
    expect([...(table.byRoute.get('/transactional/v1/sms') ?? [])]).toEqual(['access_token']);
  });
});

describe('DESIGN §4 admin API: in the app (gateways/http/admin-api.ts)', () => {
  let server: Server;
  let off: Server;
  let base: string;
  let offBase: string;
  const lines: Array<Record<string, unknown>> = [];
  const store = new Accounts();

  beforeAll(async () => {
    const world = new SmsWorld();
    const { config, engines } = world.appParts();
    const log = pino({ level: 'info' }, new Writable({ write(chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>); done(); } }));
    const services = { acceptance: world.acceptance } as unknown as SmsServices;
    const admin: AdminServices = { token: ADMIN_TOKEN, provisioning: new Provisioning(store.ports()), mirror: store.mirror(), datasourceKey: (id) => `datasource.${id}` };
    server = createHttpApp({ config, engines, services, admin, log }).listen(0, '127.0.0.1');
    off = createHttpApp({ config, engines, services, log }).listen(0, '127.0.0.1');
    await Promise.all([server, off].map((s) => new Promise<void>((resolve) => { s.once('listening', () => resolve()); })));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    offBase = `http://127.0.0.1:${(off.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all([server, off].map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); })));
  });

  const post = (at: string, path: string, body: unknown, token: string | null = ADMIN_TOKEN): Promise<Response> =>
    fetch(`${at}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) });

  test('without admin services every /admin path is a 404 (the routes are not mounted)', async () => {
    const res = await post(offBase, '/admin/v1/organizations', { name: 'x' });
    expect({ status: res.status, body: await res.json() as unknown }).toEqual({ status: 404, body: { title: 'Not Found', status: 404, detail: 'no route for POST /admin/v1/organizations' } });
  });

  test('a wrong token is a 401 and writes nothing; the right one creates; one audit line per call, with ids and never a token value', async () => {
    lines.length = 0;
    const refused = await post(base, '/admin/v1/organizations', { name: 'x' }, `${ADMIN_TOKEN}b`);
    expect({ status: refused.status, body: await refused.json() as unknown }).toEqual({ status: 401, body: { title: 'Unauthorized', status: 401, detail: 'the admin token is wrong' } });
    expect(store.orgs.size).toBe(0);
    const org = (await (await post(base, '/admin/v1/organizations', { name: 'Acme' })).json() as { entity: Organization }).entity;
    const project = (await (await post(base, `/admin/v1/organizations/${org.id}/projects`, { name: 'P' })).json() as { entity: Project }).entity;
    const created = await post(base, `/admin/v1/organizations/${org.id}/tokens`, { kind: 'api_sms', project: project.id });
    expect(created.status).toBe(201);
    const token = (await created.json() as { entity: { id: string; value: string } }).entity;
    const audits = lines.filter((l) => l['audit'] === 'admin');
    expect(audits.map((l) => [l['who'], l['action'], l['status']])).toEqual([
      ['unauthenticated', 'POST /organizations', 401],
      ['admin token', 'organization.create', 201],
      ['admin token', 'project.create', 201],
      ['admin token', 'token.create', 201],
    ]);
    expect(audits[3]).toMatchObject({ organization: org.id, project: project.id, tokenId: token.id, kind: 'api_sms' });
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(ADMIN_TOKEN);
    expect(logged).not.toContain(token.value);
  });
});
