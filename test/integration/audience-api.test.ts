// Audience API black-box tests over HTTP against the real stack (spec 3 §4.2, spec 2 §5,
// DESIGN §5): contacts and events go in through the ingestion API, come out through
// POST /audience/v1/project/{p}/audience/search; tokens, errors, paging, segments, aggregations.
import { eventually } from '../../support/eventually';
import { createIngestTenant, productToken, type IngestTenant } from '../support/ingest';
import { admin, api } from '../../support/stack';
import { addToken, createTenant, revokeToken, withAccounts } from '../../support/tenants';

jest.setTimeout(60_000);

interface Problem { title: string; status: number; detail: string }
interface Found { entities: Array<Record<string, unknown>>; total: number; cursor: string | null; aggregations?: Record<string, unknown> }

const AUDIENCE = '/audience/v1';
let t: IngestTenant;
let searchToken: string;
let aggToken: string;

const searchPath = (project: string): string => `${AUDIENCE}/project/${project}/audience/search`;
const search = (body: unknown, token = searchToken, project = t.projectId) => api(searchPath(project), { token, body });
const ids = (res: { body: unknown }): string[] => (res.body as Found).entities.map((e) => String(e['_user_id'])).sort();

beforeAll(async () => {
  t = await createIngestTenant();
  searchToken = await productToken(t.orgId, t.projectId, ['audience:search']);
  aggToken = await productToken(t.orgId, t.projectId, ['audience:search', 'PROJECT_AGGREGATIONS']);
  const contacts = [
    { _user_id: 'a1', _first_name: 'Anna', _email: 'anna@example.com', plan: 'gold', score: 42 },
    { _user_id: 'a2', _first_name: 'Bob', _email: 'bob@example.org', plan: 'silver', score: 7 },
    { _user_id: 'a3', _first_name: 'Cleo' },
  ];
  expect((await api(`${t.base}/contacts`, { token: t.token, body: contacts })).status).toBe(202);
  const events = [
    { _user_id: 'a1', _event_id: 'e1', _event_type: 'purchase', _event_parameters: { amount: 30, sku: 'A-1' } },
    { _user_id: 'a2', _event_id: 'e2', _event_type: 'view', _event_parameters: { page: 'home' } },
  ];
  expect((await api(`${t.base}/events`, { token: t.token, body: events })).status).toBe(202);
  // The ingest writer lands batches within about a second; the first search also waits for the token.
  await eventually(() => search({ version: '0.0.1', root: { type: 'group_event', event: 'purchase', children: [] } }), { what: 'the purchase event to be searchable', until: (r) => r.status === 200 && (r.body as Found).total === 1, timeoutMs: 10_000 });
  await eventually(() => search({ version: '0.0.1' }), { what: 'all three contacts to be searchable', until: (r) => r.status === 200 && (r.body as Found).total === 3, timeoutMs: 10_000 });
});

describe('spec 2 §5 rules for the audience search: 401 for the token, 404 for the project, never 403', () => {
  test('no token, a malformed header, an unknown token → 401', async () => {
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer nope' }] as Record<string, string>[]) {
      const res = await api(searchPath(t.projectId), { headers, body: { version: '0.0.1' } });
      expect(res.status).toBe(401);
      expect(Object.keys(res.body as object).sort()).toEqual(['detail', 'status', 'title']);
    }
  });
  test('a revoked token and a token of another kind → 401', async () => {
    const revoked = await addToken(t.orgId, 'product', t.projectId);
    await revokeToken(revoked.tokenId);
    expect((await search({ version: '0.0.1' }, revoked.token)).status).toBe(401);
    expect((await search({ version: '0.0.1' }, t.token)).status).toBe(401);
  });
  test('an unknown project, another project\'s token, a token without audience:search → 404', async () => {
    expect((await search({ version: '0.0.1' }, searchToken, '0190a0a0-0000-7000-8000-000000000000')).status).toBe(404);
    const other = await createTenant();
    const otherToken = await productToken(other.orgId, other.projectId, ['audience:search']);
    expect((await search({ version: '0.0.1' }, otherToken)).status).toBe(404);
    const ingestOnly = await productToken(t.orgId, t.projectId, ['ingest:write']);
    const res = await search({ version: '0.0.1' }, ingestOnly);
    expect(res.status).toBe(404);
    expect((res.body as Problem).status).toBe(404);
  });
});

describe('spec 3 §2.3, §2.4, §4.2: search over ingested contacts and events', () => {
  test('attribute, custom and event conditions', async () => {
    expect(ids(await search({ version: '0.0.1', root: { type: 'attribute_condition', key: '_email', operator: 'endswith', values: ['.COM'] } }))).toEqual(['a1']);
    expect(ids(await search({ version: '0.0.1', root: { type: 'attribute_condition', key: 'score', operator: 'range-number', values: { lowerNumber: 5, upperNumber: null } } }))).toEqual(['a1', 'a2']);
    expect(ids(await search({ version: '0.0.1', root: { type: 'attribute_condition', key: 'plan', operator: 'exists-not', values: [] } }))).toEqual(['a3']);
    const bought = { type: 'group_event', event: 'purchase', children: [{ type: 'event_condition', key: 'amount', operator: 'matches-number', values: [30] }] };
    expect(ids(await search({ version: '0.0.1', root: bought }))).toEqual(['a1']);
  });
  test('the response shape; includeAllData:false keeps the essential fields', async () => {
    const full = await search({ version: '0.0.1', limit: 1, root: { type: 'attribute_condition', key: '_first_name', operator: 'matches-string', values: ['Anna'] } });
    expect(full.body).toMatchObject({ total: 1, cursor: null, entities: [{ _user_id: 'a1', _first_name: 'Anna', plan: 'gold', score: 42, _datasource_ids: [t.datasourceId] }] });
    const essential = await search({ version: '0.0.1', includeAllData: false, limit: 1, root: { type: 'attribute_condition', key: '_first_name', operator: 'matches-string', values: ['Anna'] } });
    expect(Object.keys((essential.body as Found).entities[0] ?? {}).sort()).toEqual(['_audience_id', '_datasource_ids', '_user_id']);
  });
  test('a cursor pages through everything, then is null', async () => {
    let res = await search({ version: '0.0.1', limit: 2 });
    const seen = ids(res);
    expect((res.body as Found).cursor).not.toBeNull();
    res = await search({ cursor: (res.body as Found).cursor });
    expect(res.status).toBe(200);
    seen.push(...ids(res));
    expect((res.body as Found).cursor).toBeNull();
    expect(seen.sort()).toEqual(['a1', 'a2', 'a3']);
    const forged = await search({ cursor: 'eyJwIjoieCJ9.AAAA' });
    expect(forged.status).toBe(400);
  });
  test('errors are 400 { title, status, detail } naming the node path and rule', async () => {
    const res = await search({ version: '0.0.1', root: { type: 'group', children: [{ type: 'attribute_condition', key: '_email', operator: 'contains', values: ['a'] }] } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ title: 'Bad Request', status: 400, detail: expect.stringContaining('root.children[0].values[0]') });
    const geo = await search({ version: '0.0.1', root: { type: 'attribute_condition', key: '_geopoint', operator: 'geopoint-distance', values: { latitude: 1, longitude: 2 } } });
    expect((geo.body as Problem).detail).toContain('root.values.distance');
    expect((await api(searchPath(t.projectId), { token: searchToken, rawBody: '{', headers: { 'content-type': 'application/json' } })).status).toBe(400);
  });
  test('aggregations need PROJECT_AGGREGATIONS (400 naming it); limit 0 with aggregations', async () => {
    const body = { version: '0.0.1', limit: 0, aggregations: { plans: { type: 'terms', params: { field: '@plan', size: 5 } } } };
    const refused = await search(body);
    expect(refused.status).toBe(400);
    expect((refused.body as Problem).detail).toContain('PROJECT_AGGREGATIONS');
    const res = await search(body, aggToken);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ entities: [], total: 3, aggregations: { plans: { buckets: [{ key: 'gold', count: 1 }, { key: 'silver', count: 1 }] } } });
  });
});

describe('spec 3 §2.4 rule 3: segments over HTTP', () => {
  const segments = (): string => `${AUDIENCE}/project/${t.projectId}/segments`;
  test('create, list, use, refuse a cycle, delete', async () => {
    const created = await api(segments(), { token: searchToken, body: { slug: 'buyers', name: 'Buyers', version: '0.0.1', root: { type: 'group_event', event: 'purchase', children: [] } } });
    expect(created.status).toBe(201);
    expect((await api(segments(), { token: searchToken })).body).toMatchObject({ entities: [{ slug: 'buyers', name: 'Buyers' }] });
    expect(ids(await search({ version: '0.0.1', root: { type: 'segment_condition', key: 'buyers', operator: 'in-segment-not' } }))).toEqual(['a2', 'a3']);
    const loopA = await api(segments(), { token: searchToken, body: { slug: 'loop-a', root: { type: 'segment_condition', key: 'loop-b', operator: 'in-segment' } } });
    expect(loopA.status).toBe(201);
    const loopB = await api(segments(), { token: searchToken, body: { slug: 'loop-b', root: { type: 'segment_condition', key: 'loop-a', operator: 'in-segment' } } });
    expect(loopB.status).toBe(400);
    expect((loopB.body as Problem).detail).toContain('loop-b → loop-a → loop-b');
    expect((await api(`${segments()}/buyers`, { token: searchToken, method: 'DELETE' })).status).toBe(204);
    expect((await api(`${segments()}/buyers`, { token: searchToken })).status).toBe(404);
    expect(ids(await search({ version: '0.0.1', root: { type: 'segment_condition', key: 'buyers', operator: 'in-segment' } }))).toEqual([]);
  });
});

describe('DESIGN §5: hostile segment slugs never reach the KV key space', () => {
  test.each(['a.b', '*', '>', 'x y', '_hidden', 'A', '..', 'seg.>'])('%s: missing in a filter (match-none), 404 on the endpoints, 400 on create', async (slug) => {
    const res = await search({ version: '0.0.1', root: { type: 'segment_condition', key: slug, operator: 'in-segment' } });
    expect(res.status).toBe(200);
    expect((res.body as Found).entities).toEqual([]);
    const path = `${AUDIENCE}/project/${t.projectId}/segments/${encodeURIComponent(slug)}`;
    expect((await api(path, { token: searchToken })).status).toBe(404);
    expect((await api(path, { token: searchToken, method: 'DELETE' })).status).toBe(404);
    const created = await api(`${AUDIENCE}/project/${t.projectId}/segments`, { token: searchToken, body: { slug, root: { type: 'group', children: [] } } });
    expect(created.status).toBe(400);
  });
});

describe('spec 3 §2.4: the project timezone', () => {
  test('matches-date follows the project timezone once set', async () => {
    await withAccounts(async (accounts) => { await accounts.setProjectTimezone(t.projectId, 'Pacific/Kiritimati'); });
    // Imported "now" in UTC is already tomorrow (or later today) at UTC+14; the search must not fail and must use the zone.
    const res = await search({ version: '0.0.1', root: { type: 'attribute_condition', key: '_email', operator: 'exists', values: [] } });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(['a1', 'a2']);
  });
});

describe('admin CLI: project timezone and segments (docs/grammar-b.md)', () => {
  test('admin project timezone, admin segment create/list/show/delete, refusals', async () => {
    expect(await admin('project', 'timezone', '--project', t.projectId, '--timezone', 'Europe/Berlin')).toMatchObject({ id: t.projectId, timezone: 'Europe/Berlin' });
    await expect(admin('project', 'timezone', '--project', t.projectId, '--timezone', 'Mars/Olympus')).rejects.toThrow(/IANA timezone/);
    const body = JSON.stringify({ slug: 'cli-gold', name: 'Gold plan', root: { type: 'attribute_condition', key: 'plan', operator: 'matches-string', values: ['gold'] } });
    expect(await admin('segment', 'create', '--project', t.projectId, '--body', body)).toEqual({ slug: 'cli-gold', created: true });
    expect(await admin<Array<{ slug: string }>>('segment', 'list', '--project', t.projectId)).toEqual(expect.arrayContaining([expect.objectContaining({ slug: 'cli-gold', name: 'Gold plan' })]));
    expect(ids(await search({ version: '0.0.1', root: { type: 'segment_condition', key: 'cli-gold', operator: 'in-segment' } }))).toEqual(['a1']);
    const cycle = JSON.stringify({ slug: 'cli-self', root: { type: 'segment_condition', key: 'cli-self', operator: 'in-segment' } });
    await expect(admin('segment', 'create', '--project', t.projectId, '--body', cycle)).rejects.toThrow(/segment cycle cli-self → cli-self/);
    expect(await admin('segment', 'delete', '--project', t.projectId, '--slug', 'cli-gold')).toEqual({ slug: 'cli-gold', deleted: true });
  });
});

