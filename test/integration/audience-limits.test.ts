// Audience search limits over HTTP against the real stack (spec 3 §4.2, §8; docs/grammar-b.md):
// a filter whose SQL once passed ClickHouse's max_query_size answers (it was a 500), a filter
// whose values are past the bound-values limit is a 400 naming it, and every path of
// /openapi.json, under the server its path item names (or the document's), is a route the app
// serves (a generated client reading those servers calls real URLs).
import { eventually } from '../../support/eventually';
import { createIngestTenant, productToken, type IngestTenant } from '../support/ingest';
import { api, stack } from '../../support/stack';

jest.setTimeout(120_000);

interface Problem { title: string; status: number; detail: string }
let t: IngestTenant;
let token: string;
const search = (body: unknown) => api(`/audience/v1/project/${t.projectId}/audience/search`, { token, body });
const contains = (values: string[]) => ({ type: 'attribute_condition', key: 'plan', operator: 'contains', values });

beforeAll(async () => {
  t = await createIngestTenant();
  token = await productToken(t.orgId, t.projectId, ['audience:search']);
  expect((await api(`${t.base}/contacts`, { token: t.token, body: [{ _user_id: 'l1', plan: 'gold' }, { _user_id: 'l2', plan: `${'7'.padEnd(100, 'x')}-suffix` }] })).status).toBe(202);
  await eventually(() => search({ version: '0.0.1' }), { what: 'both contacts to be searchable', until: (r) => r.status === 200 && (r.body as { total: number }).total === 2 });
});

describe('spec 3 §8: a filter that passed max_query_size', () => {
  test('an OR group of three contains with 1,000 values of 100 characters answers 200 with the match (it was a 500)', async () => {
    const values = Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(100, 'x'));
    const res = await search({ version: '0.0.1', root: { type: 'group', join: 'or', children: [contains(values), contains(values), contains(values)] } });
    expect(res.status).toBe(200);
    expect((res.body as { entities: { _user_id: string }[] }).entities.map((e) => e._user_id)).toEqual(['l2']);
  });

  test('one contains of 1,000 × "zz" answers within a second on a handful of contacts', async () => {
    const started = performance.now();
    const res = await search({ version: '0.0.1', root: contains(Array(1000).fill('zz')) });
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test('values past the bound-values limit are a 400 naming it, never a 500', async () => {
    const wide = Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(128, 'ü'));
    const res = await search({ version: '0.0.1', root: { type: 'group', join: 'or', children: [contains(wide), contains(wide), contains(wide)] } });
    expect(res.status).toBe(400);
    expect((res.body as Problem).detail).toContain('786,432');
  });
});

describe('/openapi.json: every path resolves under its servers', () => {
  test('each path, joined with its path item\'s servers (else the document\'s), is a route the app serves for each documented method', async () => {
    type Doc = { servers: { url: string }[]; paths: Record<string, { servers?: { url: string }[] } & Record<string, unknown>> };
    const doc = (await api('/openapi.json')).body as Doc;
    const methods = ['get', 'post', 'put', 'patch', 'delete'];
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      const server = (item.servers ?? doc.servers)[0]?.url ?? '';
      const url = `${server}${path.replace(/\{[^}]+\}/g, 'x')}`;
      for (const method of methods.filter((m) => item[m] !== undefined)) {
        // No token: a real route answers 401 (or 400 for a malformed id), an unknown one 404 "no route".
        const res = await fetch(`${stack().httpUrl}${url}`, { method: method.toUpperCase(), headers: { 'content-type': 'application/json' }, ...(method === 'get' || method === 'delete' ? {} : { body: '{}' }) });
        const text = await res.text();
        expect({ method, url, noRoute: /no route for/.test(text) }).toEqual({ method, url, noRoute: false });
        expect({ method, url, notFoundOrNotAllowed: res.status === 404 || res.status === 405 }).toEqual({ method, url, notFoundOrNotAllowed: false });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });
});
