// DESIGN §4 "Analysts" over HTTP: POST /analytics/v1/sql with a product token carrying
// analytics:read, against the running stack. Messages sent by two organizations reach the
// history; each organization's query sees its own only. The hostile cases of the engine are in
// analytics-sql.test.ts; here: authentication, scope, body, errors, rate-limit headers, formats.
import { eventually } from '../../support/eventually';
import { api, stack } from '../../support/stack';
import { createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';

const SQL = '/analytics/v1/sql';
let a: Tenant;
let b: Tenant;
let analystA: string;
let analystB: string;
let noScope: string;

async function productToken(t: Tenant, scopes: string[]): Promise<string> {
  const value = await withAccounts(async (accounts) => (await accounts.createToken({ kind: 'product', orgId: t.orgId, projectId: t.projectId, scopes })).value);
  // The product's account mirror catches up within milliseconds: poll until the token is known.
  await eventually(() => api(SQL, { token: value, body: { query: 'SELECT 1' } }), { what: 'the product token to authenticate', until: (res) => res.status !== 401, intervalMs: 25 });
  return value;
}

async function count(token: string): Promise<number> {
  const res = await api(SQL, { token, body: { query: 'SELECT count() AS n FROM messages', format: 'JSONEachRow' } });
  expect(res.status).toBe(200);
  return Number((res.body as { n: string }).n);
}

beforeAll(async () => {
  [a, b] = await Promise.all([createTenant(), createTenant()]);
  [analystA, analystB, noScope] = await Promise.all([productToken(a, ['analytics:read']), productToken(b, ['analytics:read']), productToken(a, ['audience:search'])]);
  for (const [t, n] of [[a, 2], [b, 3]] as const) {
    for (let i = 0; i < n; i += 1) {
      const sent = await api(`${V1}/sms`, { token: t.token, body: { from: 'Demo', to: '+4915112345678', text: `hello ${t.orgId} ${i}` } });
      expect(sent.status).toBe(201);
    }
  }
  // The history writer stores accepted messages asynchronously: wait until both are there.
  await eventually(async () => (await count(analystA)) >= 2 && (await count(analystB)) >= 3, { what: 'the messages of both organizations in the history', timeoutMs: 30_000, intervalMs: 200 });
}, 120_000);

describe('DESIGN §4 Analysts: POST /analytics/v1/sql', () => {
  test('each organization sees its own messages only; JSON by default, with rate-limit headers', async () => {
    expect(await count(analystA)).toBe(2);
    expect(await count(analystB)).toBe(3);
    const res = await api(SQL, { token: analystA, body: { query: 'SELECT text FROM messages ORDER BY text' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    const body = res.body as { data: Array<{ text: string }> };
    expect(body.data.map((r) => r.text)).toEqual([`hello ${a.orgId} 0`, `hello ${a.orgId} 1`]);
  });

  test('CSV and Parquet', async () => {
    const csv = await fetch(`${stack().httpUrl}${SQL}`, { method: 'POST', headers: { authorization: `Bearer ${analystA}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'SELECT count() AS n FROM messages', format: 'CSV' }) });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await csv.text()).toBe('2\n');
    const parquet = await fetch(`${stack().httpUrl}${SQL}`, { method: 'POST', headers: { authorization: `Bearer ${analystA}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'SELECT id FROM messages', format: 'Parquet' }) });
    expect(parquet.status).toBe(200);
    expect(Buffer.from(await parquet.arrayBuffer()).subarray(0, 4).toString('latin1')).toBe('PAR1');
  });

  test('a refused query is a 400 { title, status, detail } naming why, and another organization\'s base rows stay out', async () => {
    const res = await api(SQL, { token: analystA, body: { query: 'SELECT text FROM messages UNION ALL SELECT text FROM sms_platform.sms_messages' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ title: 'Bad Request', status: 400, detail: expect.stringMatching(/unknown relation/) });
    const two = await api(SQL, { token: analystA, body: { query: 'SELECT 1; DROP TABLE sms_platform.sms_messages' } });
    expect(two.status).toBe(400);
    expect(await count(analystB)).toBe(3);
  });

  test('tokens: none or api_sms is a 401, a product token without analytics:read a 404', async () => {
    expect((await api(SQL, { body: { query: 'SELECT 1' } })).status).toBe(401);
    expect((await api(SQL, { token: a.token, body: { query: 'SELECT 1' } })).status).toBe(401);
    const res = await api(SQL, { token: noScope, body: { query: 'SELECT 1' } });
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toMatch(/analytics:read/);
  });

  test('bad bodies: not an object, unknown field, unknown format, query not a string', async () => {
    for (const body of [[1], { query: 'SELECT 1', extra: 1 }, { query: 'SELECT 1', format: 'Native' }, { query: 42 }]) {
      const res = await api(SQL, { token: analystA, body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(Object.keys(res.body as object).sort()).toEqual(['detail', 'status', 'title']);
    }
  });
});
