// Black-box suite of the legacy SMS API (spec 1 §1, §9 rule 2; DESIGN §4): the same endpoints
// at the root of the host, authenticated by an account-wide `legacy` token that sees every
// project of its organization. Every test sets up its own tenant.
import { newId } from '../../core/ids';
import { clockPast, eventually } from '../../support/eventually';
import { scrape, scrapeUntil } from '../support/metrics-scrape';
import { sumOf } from '../support/prometheus-text';
import { api } from '../../support/stack';
import { addProject, balanceMicros, createTenant, revokeToken, V1, type Tenant } from '../../support/tenants';

type Res = Awaited<ReturnType<typeof api>>;
type Json = Record<string, unknown>;
type Entity = Record<string, unknown> & { id: string };

const DE = '+4915112345678';
const FR = '+33612345678';
const GB = '+447400123456';


const legacyToken = (t: Tenant): string => {
  if (!t.legacyToken) throw new Error('tenant created without a legacy token');
  return t.legacyToken;
};
/** A request at the root of the host (the legacy API). */
const root = (path: string, token: string | undefined, init: Omit<NonNullable<Parameters<typeof api>[1]>, 'token'> = {}): Promise<Res> =>
  api(path, { ...init, ...(token === undefined ? {} : { token }) });
const item = (overrides: Json = {}): Json => ({ from: 'Legacy', to: DE, text: 'Hello from the legacy API', ...overrides });

const entityOf = (res: Res): Entity => (res.body as { entity: Entity }).entity;
const entitiesOf = (res: Res): Entity[] => (res.body as { entities: Entity[] }).entities;

async function listUntil(path: string, token: string, count: number): Promise<Entity[]> {
  const res = await eventually(() => root(path, token), { what: `GET ${path} to list ${count}`, until: (r) => r.status === 200 && entitiesOf(r).length >= count, timeoutMs: 3000, intervalMs: 100 });
  expect(res.status).toBe(200);
  return entitiesOf(res);
}

const LIFECYCLE_FIELDS = ['status', 'statusCode', 'sentAt', 'deliveredAt'];
/** The same message, possibly further along its lifecycle (the test stack's carrier simulator moves it on). */
function expectSameMessage(actual: Entity | undefined, accepted: Entity): void {
  const stable = (e: Entity | undefined): Json => Object.fromEntries(Object.entries(e ?? {}).filter(([k]) => !LIFECYCLE_FIELDS.includes(k)));
  expect(stable(actual)).toEqual(stable(accepted));
}

function expectProblem(res: Res, status: number): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ title: expect.any(String), status, detail: expect.any(String) });
}

function expectRateHeaders(res: Res): void {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect({ [name]: res.headers.get(name) }).toEqual({ [name]: expect.stringMatching(/^\d+$/) });
  }
}

describe('legacy API authentication (spec 1 §1, §5; DESIGN §4)', () => {
  // Every row has 3 elements: jest takes a callback with more parameters than the row for a `done`-style test.
  const endpoints: [string, string, unknown][] = [
    ['GET', '/sms', undefined], ['POST', '/sms', item()], ['POST', '/sms/bulk', [item()]], ['GET', '/sms/{id}', undefined], ['GET', '/lookup', undefined],
    ['POST', '/lookup', { to: DE }], ['GET', '/lookup/{id}', undefined], ['GET', '/organization/account', undefined],
    ['GET', '/sms/price-profile/me/countries', undefined], ['GET', '/lookup/price-profile/me/countries', undefined],
  ];

  test.each(endpoints)('spec 1 §9 rule 2: an api_sms token at the root (%s %s) → 401, nothing charged', async (method, path, body) => {
    const t = await createTenant({ legacy: true, balance: 1 });
    const res = await root(path.replace('{id}', newId()), t.token, { method, ...(body === undefined ? {} : { body }) });
    expectProblem(res, 401);
    expectRateHeaders(res);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000);
  });

  test.each(endpoints)('spec 1 §5 rule 4: no token at the root (%s %s) → 401', async (method, path, body) => {
    const res = await root(path.replace('{id}', newId()), undefined, { method, ...(body === undefined ? {} : { body }) });
    expectProblem(res, 401);
  });

  test('spec 1 §5 rule 3: a revoked legacy token → 401 on its next request', async () => {
    const t = await createTenant({ legacy: true });
    expect((await root('/organization/account', legacyToken(t))).status).toBe(200);
    await revokeToken(t.legacyTokenId as string);
    const res = await eventually(() => root('/organization/account', legacyToken(t)), { what: 'the revoked legacy token refused within 1 s', until: (r) => r.status === 401, timeoutMs: 1000 });
    expectProblem(res, 401);
    // The project's api_sms token is not affected.
    expect((await api(`${V1}/organization/account`, { token: t.token })).status).toBe(200);
  });

  test('spec 1 §5 rule 2: access_token in the query string works at the root', async () => {
    const t = await createTenant({ legacy: true });
    const res = await api(`/organization/account?access_token=${encodeURIComponent(legacyToken(t))}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ entity: { currency: 'EUR', available: 100 } });
  });
});

describe('legacy API: send, read, bulk, lookup, balance (DESIGN §4: the same endpoints at the root)', () => {
  test('POST /sms → 201 { entity } queued and charged; GET /sms/{id} returns it; GET /sms lists it', async () => {
    const t = await createTenant({ legacy: true, balance: 1 });
    const token = legacyToken(t);
    const res = await root('/sms', token, { body: item({ clientId: 'legacy-1', text: '“quoted” text' }) });
    expect(res.status).toBe(201);
    expectRateHeaders(res);
    const e = entityOf(res);
    expect(e).toEqual(expect.objectContaining({
      id: expect.any(String), clientId: 'legacy-1', status: 'queued', from: 'Legacy', to: DE, normalizedTo: DE, country: 'DE',
      text: '“quoted” text', deliveredText: '"quoted" text', encoding: 'GSM-7', messagesCount: 1, charged: true, pricePerSms: 0.075, priceUser: 0.075,
    }));
    expect(await balanceMicros(t.orgId)).toBe(925_000);
    const read = await root(`/sms/${e.id}`, token);
    expect(read.status).toBe(200);
    expectSameMessage(entityOf(read), e);
    const listed = await listUntil('/sms', token, 1);
    expect(listed).toHaveLength(1);
    expectSameMessage(listed[0], e);
  });

  test('POST /sms/bulk → 201 with entities and errors (index, clientId) in input order; balance drops by the accepted total', async () => {
    const t = await createTenant({ legacy: true, balance: 1 });
    const res = await root('/sms/bulk', legacyToken(t), {
      body: [item({ clientId: 'a' }), item({ to: 'nope', clientId: 'b' }), item({ to: FR, clientId: 'c' }), item({ text: '' })],
    });
    expect(res.status).toBe(201);
    expect(entitiesOf(res).map((e) => e['clientId'])).toEqual(['a', 'c']);
    const errors = (res.body as { errors: { index: number; clientId: string | null; fields: Record<string, string[]> }[] }).errors;
    expect(errors.map((e) => [e.index, e.clientId, Object.keys(e.fields)])).toEqual([[1, 'b', ['to']], [3, null, ['text']]]);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - 75_000 - 70_000);
  });

  test('POST /lookup → 201 charged at the lookup price; GET /lookup/{id}; GET /lookup lists it', async () => {
    const t = await createTenant({ legacy: true, balance: 1 });
    const token = legacyToken(t);
    const res = await root('/lookup', token, { body: { to: '+4915112345676' } });
    expect(res.status).toBe(201);
    const e = entityOf(res);
    expect(e).toEqual(expect.objectContaining({ to: '+4915112345676', country: 'DE', roaming: true, ported: false, charged: true, pricePerSms: 0.005 }));
    expect(await balanceMicros(t.orgId)).toBe(995_000);
    expect(entityOf(await root(`/lookup/${e.id}`, token))).toEqual(e);
    expect(await listUntil('/lookup', token, 1)).toEqual([e]);
  });

  test('GET /organization/account and both price profiles have the v1 shapes', async () => {
    const t = await createTenant({ legacy: true, balance: 7.5 });
    const token = legacyToken(t);
    expect((await root('/organization/account', token)).body).toEqual({ entity: { currency: 'EUR', available: 7.5 } });
    const sms = entitiesOf(await root('/sms/price-profile/me/countries', token)) as unknown as Json[];
    expect([...sms].sort((a, b) => String(a['country']).localeCompare(String(b['country'])))).toEqual([
      { country: 'DE', currency: 'EUR', price: 0.075 }, { country: 'FR', currency: 'EUR', price: 0.07 },
      { country: 'GB', currency: 'EUR', price: 0.04 }, { country: 'US', currency: 'EUR', price: 0.01 },
    ]);
    const lookup = entitiesOf(await root('/lookup/price-profile/me/countries', token)) as unknown as Json[];
    expect(lookup.map((p) => p['country']).sort()).toEqual(['DE', 'FR', 'GB', 'US']);
    for (const p of lookup) expect(p).toEqual({ country: expect.any(String), currency: 'EUR', price: 0.005 });
  });

  test('the legacy API has the v1 error statuses: 400, 402, 404, 413, 422 and a bad filter 400', async () => {
    const t = await createTenant({ legacy: true, balance: 0.05 });
    const token = legacyToken(t);
    expectProblem(await root('/sms', token, { rawBody: '{"from":', headers: { 'content-type': 'application/json' } }), 400);
    expectProblem(await root('/sms/bulk', token, { body: { items: [item()] } }), 400);
    expectProblem(await root('/sms', token, { body: item() }), 402);
    expectProblem(await root(`/sms/${newId()}`, token), 404);
    expectProblem(await root(`/lookup/${newId()}`, token), 404);
    expectProblem(await root('/sms/bulk', token, { body: Array.from({ length: 101 }, () => item()) }), 413);
    const invalid = await root('/sms', token, { body: item({ to: 'x', clientId: 'c'.repeat(41) }) });
    expect(invalid.status).toBe(422);
    expect(Object.keys((invalid.body as { errors: { fields: Json } }).errors.fields).sort()).toEqual(['clientId', 'to']);
    expectProblem(await root('/sms?nosuch_eq=1', token), 400);
    expect(await balanceMicros(t.orgId)).toBe(50_000);
  });

  test('clientId idempotency with a legacy token: a repeat returns the original message, charged once', async () => {
    const t = await createTenant({ legacy: true, balance: 1 });
    const token = legacyToken(t);
    const first = entityOf(await root('/sms', token, { body: item({ clientId: 'legacy-order' }) }));
    const again = await root('/sms', token, { body: item({ clientId: 'legacy-order' }) });
    expect([200, 201]).toContain(again.status);
    expect(entityOf(again).id).toBe(first.id);
    expect(await balanceMicros(t.orgId)).toBe(925_000);
  });
});

describe('legacy messages in the message history (spec 1 §1; migration 0012)', () => {
  test('accepted legacy messages (no project: the token is organization-wide) are stored by the history writer and read back from it', async () => {
    const t = await createTenant({ legacy: true, balance: 10 });
    const token = legacyToken(t);
    const stored = (exp: Awaited<ReturnType<typeof scrape>>): number => sumOf(exp, 'sms_messages_accepted_total', { source: 'legacy' });
    const before = stored(await scrape());
    const single = entityOf(await root('/sms', token, { body: item({ clientId: 'history-1' }) }));
    const bulk = await root('/sms/bulk', token, { body: [item({ to: FR }), item({ to: GB, clientId: 'history-2' })] });
    expect(bulk.status).toBe(201);
    const sent = [single, ...entitiesOf(bulk)];
    // Counted by the history writer once the accepted messages' rows are inserted (pipelines/history-metrics.ts);
    // an insert the intake view refuses is never counted, and its stream message ends terminated.
    await scrapeUntil((exp) => expect(stored(exp) - before).toBeGreaterThanOrEqual(sent.length));
    const listed = await listUntil('/sms', token, sent.length);
    expect(listed.map((e) => e.id).sort()).toEqual(sent.map((e) => e.id).sort());
    for (const e of sent) expectSameMessage(listed.find((l) => l.id === e.id), e);
  });
});

describe('legacy API visibility: account-wide (DESIGN §4)', () => {
  test('a legacy token sees the messages and lookups of every project of its organization, including those sent with api_sms tokens', async () => {
    const t = await createTenant({ legacy: true, balance: 10 });
    const other = await addProject(t.orgId);
    const token = legacyToken(t);
    const fromA = entityOf(await api(`${V1}/sms`, { token: t.token, body: item({ text: 'project A' }) }));
    await clockPast(String(fromA['createdAt']));
    const fromB = entityOf(await api(`${V1}/sms`, { token: other.token, body: item({ text: 'project B', to: GB }) }));
    await clockPast(String(fromB['createdAt']));
    const fromLegacy = entityOf(await root('/sms', token, { body: item({ text: 'legacy', to: FR }) }));
    const lookupB = entityOf(await api(`${V1}/lookup`, { token: other.token, body: { to: FR } }));

    expectSameMessage(entityOf(await root(`/sms/${fromA.id}`, token)), fromA);
    expectSameMessage(entityOf(await root(`/sms/${fromB.id}`, token)), fromB);
    expect(entityOf(await root(`/lookup/${lookupB.id}`, token))).toEqual(lookupB);

    const listed = await listUntil('/sms', token, 3);
    expect(listed.map((e) => e.id)).toEqual([fromLegacy.id, fromB.id, fromA.id]);
    expect((await listUntil('/lookup', token, 1)).map((e) => e.id)).toEqual([lookupB.id]);
    expect(entitiesOf(await root(`/sms?to_eq=${encodeURIComponent(GB)}`, token)).map((e) => e.id)).toEqual([fromB.id]);

    // An api_sms token still sees its own project only.
    const listedA = await api(`${V1}/sms`, { token: t.token });
    expect(entitiesOf(listedA).map((e) => e.id)).toEqual([fromA.id]);
    expectProblem(await api(`${V1}/sms/${fromB.id}`, { token: t.token }), 404);
  });

  test("a legacy token never sees another organization's messages or lookups: 404, and an empty list", async () => {
    const a = await createTenant({ legacy: true });
    const b = await createTenant({ legacy: true });
    const message = entityOf(await root('/sms', legacyToken(a), { body: item() }));
    const lookup = entityOf(await root('/lookup', legacyToken(a), { body: { to: DE } }));
    expectProblem(await root(`/sms/${message.id}`, legacyToken(b)), 404);
    expectProblem(await root(`/lookup/${lookup.id}`, legacyToken(b)), 404);
    await listUntil('/sms', legacyToken(a), 1);
    expect(entitiesOf(await root('/sms', legacyToken(b)))).toEqual([]);
    expect(entitiesOf(await root('/lookup', legacyToken(b)))).toEqual([]);
  });
});

describe('legacy API rate limits (README: counters legacy-<endpoint>)', () => {
  test('legacy-sms-read is its own counter: at 1 per minute the 2nd legacy read → 429 { message } while v1 reads still answer', async () => {
    const t = await createTenant({ legacy: true, rateLimits: { 'legacy-sms-read': 1 } });
    const windowEnd = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
    if (windowEnd - Date.now() < 5000) await clockPast(windowEnd + 100);
    const id = entityOf(await api(`${V1}/sms`, { token: t.token, body: item() })).id;
    const first = await root(`/sms/${id}`, legacyToken(t));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('1');
    const second = await root(`/sms/${id}`, legacyToken(t));
    expect(second.status).toBe(429);
    expect(second.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(typeof (second.body as { message?: unknown }).message).toBe('string');
    expect((await api(`${V1}/sms/${id}`, { token: t.token })).status).toBe(200);
  });
});
