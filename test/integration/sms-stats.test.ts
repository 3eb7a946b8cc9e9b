// GET /sms/stats and GET /lookup/stats (spec 3 §4.1 rule 5: `_group` for statistics endpoints;
// docs/grammar-a.md "Statistics") over real HTTP against the integration stack: messages with
// known outcomes (the carrier simulator decides by the last two digits, docs/carrier.md; the HLR
// simulator by the last digit), exact counts, delivery rate and cost per group, each row equal to
// what GET /sms with the same filter lists, two organizations and two projects kept apart, the
// counters v1-sms-stats / v1-lookup-stats, and 400 { title, status, detail } for bad input.
import { eventually } from '../../support/eventually';
import { api } from '../../support/stack';
import { addProject, createTenant, V1, type Tenant } from '../../support/tenants';

type Res = Awaited<ReturnType<typeof api>>;
type Row = Record<string, unknown> & { messages: number };
type Entity = Record<string, unknown> & { id: string; status: string; country: string; priceUser: number; messagesCount: number; createdAt: string; deliveredAt: string | null; charged: boolean };

const FINAL = ['delivered', 'failed', 'expired', 'rejected', 'error', 'canceled', 'unknown'];
const rowsOf = (res: Res): Row[] => (res.body as { entities: Row[] }).entities;
const entitiesOf = (res: Res): Entity[] => (res.body as { entities: Entity[] }).entities;
const LONG = 'x'.repeat(200); // GSM-7, 2 segments

// project 1 of org A: 7 messages with known outcomes
const A_MESSAGES = [
  { to: '+4915112345600', text: 'stats one' }, // delivered
  { to: '+4915112345601', text: 'stats two' }, // delivered
  { to: '+4915112345690', text: 'stats three' }, // failed (2)
  { to: '+4915112345692', text: 'stats four' }, // rejected (6)
  { to: '+33612345600', text: 'stats five' }, // delivered
  { to: '+33612345693', text: 'stats six' }, // expired (1)
  { to: '+447400123400', text: LONG }, // delivered, 2 segments
];

async function statsUntilFinal(path: string, token: string, messages: number, timeoutMs = 30_000): Promise<Row[]> {
  return eventually(async () => {
    const res = await api(`${V1}${path}`, { token });
    expect(res.status).toBe(200);
    return rowsOf(res);
  }, { what: `${path} to count ${messages} messages, none pending`, until: ([total]) => total?.messages === messages && total['pending'] === 0, timeoutMs, intervalMs: 200 });
}

/** The row GET /sms's entities give for one group (the reference the endpoint must agree with). */
function expectedRow(entities: readonly Entity[], currency = 'EUR'): Record<string, unknown> {
  const count = (s: string): number => entities.filter((e) => e.status === s).length;
  const final = entities.filter((e) => FINAL.includes(e.status)).length;
  // The median in ms, interpolated between the two middle values for an even count, then in seconds.
  const ms = entities.filter((e) => e.status === 'delivered' && e.deliveredAt)
    .map((e) => Date.parse(e.deliveredAt as string) - Date.parse(e.createdAt)).sort((x, y) => x - y);
  const mid = (ms.length - 1) / 2;
  const p50 = ms.length === 0 ? null : ((ms[Math.floor(mid)] ?? 0) + (ms[Math.ceil(mid)] ?? 0)) / 2 / 1000;
  const micros = entities.filter((e) => e.charged).reduce((s, e) => s + Math.round(e.priceUser * 1e6), 0);
  return {
    messages: entities.length,
    segments: entities.reduce((s, e) => s + e.messagesCount, 0),
    delivered: count('delivered'), failed: count('failed'), expired: count('expired'), rejected: count('rejected'),
    error: count('error'), canceled: count('canceled'), unknown: count('unknown'),
    pending: entities.length - final,
    deliveryRate: final === 0 ? null : count('delivered') / final,
    cost: micros / 1e6,
    currency,
    p50DeliverySeconds: p50,
  };
}

const keysOf = (row: Row): Record<string, unknown> => Object.fromEntries(['period', 'country', 'status'].filter((k) => k in row).map((k) => [k, row[k]]));

describe('spec 3 §4.1 rule 5: GET /sms/stats', () => {
  let a: Tenant;
  let b: Tenant;
  let a2: { projectId: string; token: string };
  let aEntities: Entity[];

  beforeAll(async () => {
    a = await createTenant({ name: 'Stats A', legacy: true });
    b = await createTenant({ name: 'Stats B' });
    a2 = await addProject(a.orgId);
    const sent = await api(`${V1}/sms/bulk`, { token: a.token, body: A_MESSAGES.map((m) => ({ from: 'StatsCo', ...m })) });
    expect(sent.status).toBe(201);
    expect(entitiesOf(sent)).toHaveLength(7);
    // Another organization (DE delivered ×2, DE failed) and another project of A (FR delivered).
    expect((await api(`${V1}/sms/bulk`, { token: b.token, body: ['+4915112345611', '+4915112345612', '+4915112345690'].map((to) => ({ from: 'OtherCo', to, text: 'other org' })) })).status).toBe(201);
    expect((await api(`${V1}/sms`, { token: a2.token, body: { from: 'StatsCo', to: '+33612345611', text: 'other project' } })).status).toBe(201);
    await statsUntilFinal('/sms/stats', a.token, 7);
    await statsUntilFinal('/sms/stats', b.token, 3);
    await statsUntilFinal('/sms/stats', a2.token, 1);
    const list = await api(`${V1}/sms?_start=0&_limit=100`, { token: a.token });
    expect(list.status).toBe(200);
    aEntities = entitiesOf(list);
    expect(aEntities).toHaveLength(7);
  }, 120_000);

  test('totals: exact counts, delivery rate, cost and segments of known outcomes', async () => {
    const res = await api(`${V1}/sms/stats`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    const [row] = rowsOf(res);
    expect(rowsOf(res)).toHaveLength(1);
    expect(row).toMatchObject({
      messages: 7, segments: 8, delivered: 4, failed: 1, expired: 1, rejected: 1, error: 0, canceled: 0, unknown: 0, pending: 0,
      deliveryRate: 4 / 7, currency: 'EUR',
    });
    // DE 0.075 × 4, FR 0.07 × 2, GB 0.04 × 2 segments
    expect(row?.['cost']).toBeCloseTo(0.52, 9);
    expect(row?.['p50DeliverySeconds']).toEqual(expect.any(Number));
    expect(row).toEqual(expectedRow(aEntities));
  });

  test('_group=country and _group=status: exact rows, ordered by key', async () => {
    const byCountry = rowsOf(await api(`${V1}/sms/stats?_group=country`, { token: a.token }));
    expect(byCountry.map((r) => [r['country'], r.messages, r['delivered'], r['failed'], r['rejected'], r['expired'], r['segments']])).toEqual([
      ['DE', 4, 2, 1, 1, 0, 4], ['FR', 2, 1, 0, 0, 1, 2], ['GB', 1, 1, 0, 0, 0, 2],
    ]);
    expect(byCountry.map((r) => r['deliveryRate'])).toEqual([0.5, 0.5, 1]);
    expect(byCountry.map((r) => r['cost'])).toEqual([0.3, 0.14, 0.08]);
    const byStatus = rowsOf(await api(`${V1}/sms/stats?_group=status`, { token: a.token }));
    expect(byStatus.map((r) => [r['status'], r.messages])).toEqual([['delivered', 4], ['expired', 1], ['failed', 1], ['rejected', 1]]);
    expect(byStatus.find((r) => r['status'] === 'failed')?.['p50DeliverySeconds']).toBeNull();
  });

  test.each([
    ['_group=country', ''],
    ['_group=status', ''],
    ['_group=daily,country', ''],
    ['_group=hourly,status', 'country_in=DE|FR'],
    ['_group=monthly,country,status', 'status_ne=delivered'],
    ['_group=country', 'text_startsi=STATS&charsCount_lt=100'],
  ])('every row of %s (filter %p) equals what GET /sms with the same filter lists for that group', async (group, filter) => {
    const res = await api(`${V1}/sms/stats?${group}${filter ? `&${filter}` : ''}`, { token: a.token });
    expect(res.status).toBe(200);
    const list = entitiesOf(await api(`${V1}/sms?_start=0&_limit=100${filter ? `&${filter}` : ''}`, { token: a.token }));
    const rows = rowsOf(res);
    expect(rows.reduce((s, r) => s + r.messages, 0)).toBe(list.length);
    for (const row of rows) {
      const members = list.filter((e) => (row['country'] === undefined || e.country === row['country'])
        && (row['status'] === undefined || e.status === row['status'])
        && (row['period'] === undefined || periodOf(group, e.createdAt) === row['period']));
      expect({ ...keysOf(row), ...expectedRow(members) }).toEqual(row);
    }
    // And the counts of GET /sms?_group=<field> agree for a single field group.
    if (/^_group=(country|status)$/.test(group)) {
      const counts = (await api(`${V1}/sms?${group}${filter ? `&${filter}` : ''}`, { token: a.token })).body as { entities: { group: string; count: number }[] };
      const field = group.slice('_group='.length);
      expect(rows.map((r) => [r[field], r.messages])).toEqual(counts.entities.map((c) => [c.group, c.count]));
    }
  });

  test('time buckets are UTC starts of the period, as GET /sms?_group=daily', async () => {
    const daily = rowsOf(await api(`${V1}/sms/stats?_group=daily`, { token: a.token }));
    const counts = (await api(`${V1}/sms?_group=daily`, { token: a.token })).body as { entities: { group: string; count: number }[] };
    expect(daily.map((r) => [r['period'], r.messages])).toEqual(counts.entities.map((c) => [c.group, c.count]));
    for (const r of daily) expect(r['period']).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/);
    const monthly = rowsOf(await api(`${V1}/sms/stats?_group=monthly`, { token: a.token }));
    for (const r of monthly) expect(r['period']).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
  });

  test('tenant isolation: another organization and another project see only their rows; the legacy token sees the whole organization', async () => {
    const other = rowsOf(await api(`${V1}/sms/stats?_group=country`, { token: b.token }));
    expect(other.map((r) => [r['country'], r.messages, r['delivered'], r['failed']])).toEqual([['DE', 3, 2, 1]]);
    const project2 = rowsOf(await api(`${V1}/sms/stats?_group=country`, { token: a2.token }));
    expect(project2.map((r) => [r['country'], r.messages, r['delivered']])).toEqual([['FR', 1, 1]]);
    // The legacy API mirrors the v1 read endpoints; its token is account-wide: both projects of A, never B.
    const legacy = await api('/sms/stats?_group=country', { token: a.legacyToken as string });
    expect(legacy.status).toBe(200);
    expect(rowsOf(legacy).map((r) => [r['country'], r.messages])).toEqual([['DE', 4], ['FR', 3], ['GB', 1]]);
    // An id filter of another organization's message finds nothing.
    const foreign = entitiesOf(await api(`${V1}/sms?_start=0&_limit=1`, { token: b.token }))[0]?.id as string;
    expect(rowsOf(await api(`${V1}/sms/stats?id_eq=${foreign}`, { token: a.token }))[0]).toMatchObject({ messages: 0, deliveryRate: null, cost: 0, p50DeliverySeconds: null });
  });

  test.each(([
    ['_group=weekly', 'unknown group "weekly" in parameter "_group": expected hourly, daily, monthly, country, status'],
    ['_group=daily,daily', 'group "daily" is given more than once'],
    ['_group=daily,monthly', 'at most one of hourly, daily, monthly'],
    ['_group=text', 'unknown group "text"'],
    ['nope_eq=1', 'unknown field "nope" in parameter "nope_eq"'],
    ['_sort=createdAt:-', 'parameter "_sort" is not accepted here'],
    ['createdAt_range=0001-01-01T00:00:00Z|9999-01-01T00:00:00Z', 'createdAt_range'],
    ['_start=0&_limit=1000000', 'parameter "_limit"'],
    [`_group=${'daily,'.repeat(1000)}`, 'too many groups'],
  ] as [string, string][]).map(([qs, detail]) => [qs.slice(0, 70), qs, detail] as const))('%s → 400 { title, status, detail }', async (_label, qs, detail) => {
    const res = await api(`${V1}/sms/stats?${qs}`, { token: a.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ title: 'Bad Request', status: 400, detail: expect.stringContaining(detail) });
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
  });

  test('without a token: 401', async () => {
    expect((await api(`${V1}/sms/stats`)).status).toBe(401);
  });

  test('a huge createdAt range and the widest grouping answer (one row per existing group only)', async () => {
    const res = await api(`${V1}/sms/stats?_group=hourly,country,status&createdAt_range=1900-01-02T00:00:00Z|2299-01-01T00:00:00Z`, { token: a.token });
    expect(res.status).toBe(200);
    expect(rowsOf(res).reduce((s, r) => s + r.messages, 0)).toBe(7);
  });
});

/** The period key of an entity for a `_group` with a time token (UTC). */
function periodOf(group: string, createdAt: string): string | undefined {
  if (group.includes('hourly')) return `${createdAt.slice(0, 13)}:00:00.000Z`;
  if (group.includes('daily')) return `${createdAt.slice(0, 10)}T00:00:00.000Z`;
  if (group.includes('monthly')) return `${createdAt.slice(0, 7)}-01T00:00:00.000Z`;
  return undefined;
}

describe('GET /lookup/stats', () => {
  test('counts per status and subscriber status, cost; another organization sees none of them', async () => {
    const t = await createTenant({ name: 'Lookup stats' });
    const other = await createTenant({ name: 'Lookup stats other' });
    // last digit: 0 active, 6 roaming, 7 ported, 8 absent (delivered, code 2), 9 unknown (failed)
    for (const to of ['+4915112345670', '+4915112345676', '+4915112345677', '+4915112345678', '+4915112345679', '+33612345670']) {
      expect((await api(`${V1}/lookup`, { token: t.token, body: { to } })).status).toBe(201);
    }
    expect((await api(`${V1}/lookup`, { token: other.token, body: { to: '+4915112345670' } })).status).toBe(201);
    const rows = await eventually(async () => rowsOf(await api(`${V1}/lookup/stats?_group=country`, { token: t.token })), {
      what: 'the six lookups in /lookup/stats', until: (found) => found.reduce((s, r) => s + (r['lookups'] as number), 0) === 6, timeoutMs: 30_000, intervalMs: 200,
    });
    expect(rows).toEqual([
      { country: 'DE', lookups: 5, delivered: 4, failed: 1, active: 3, absent: 1, unknown: 1, ported: 1, roaming: 1, cost: 0.025, currency: 'EUR' },
      { country: 'FR', lookups: 1, delivered: 1, failed: 0, active: 1, absent: 0, unknown: 0, ported: 0, roaming: 0, cost: 0.005, currency: 'EUR' },
    ]);
    const list = entitiesOf(await api(`${V1}/lookup?_group=status`, { token: t.token })) as unknown as { group: string; count: number }[];
    const byStatus = rowsOf(await api(`${V1}/lookup/stats?_group=status`, { token: t.token }));
    expect(byStatus.map((r) => [r['status'], r['lookups']])).toEqual(list.map((c) => [c.group, c.count]));
    // The other organization's lookup is stored on its own time (the history writer gathers a busy bus for up to 1 s).
    const foreign = await eventually(async () => rowsOf(await api(`${V1}/lookup/stats`, { token: other.token })), {
      what: "the other organization's lookup in its /lookup/stats", until: (found) => found.some((r) => (r['lookups'] as number) > 0), timeoutMs: 30_000, intervalMs: 200,
    });
    expect(foreign).toEqual([expect.objectContaining({ lookups: 1 })]);
    const bad = await api(`${V1}/lookup/stats?_group=network`, { token: t.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ title: 'Bad Request', status: 400, detail: expect.stringContaining('unknown group "network"') });
  }, 60_000);
});

describe('counters v1-sms-stats and v1-lookup-stats (spec 1 §8)', () => {
  test('with v1-sms-stats granted 2 per minute, the third GET /sms/stats → 429; GET /sms and /lookup/stats keep their own counters', async () => {
    const t = await createTenant({ rateLimits: { 'v1-sms-stats': 2, 'v1-lookup-stats': 1 } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await api(`${V1}/sms/stats`, { token: t.token })).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await api(`${V1}/sms?_start=0&_limit=1`, { token: t.token })).status).toBe(200);
    const lookups = [(await api(`${V1}/lookup/stats`, { token: t.token })), (await api(`${V1}/lookup/stats`, { token: t.token }))];
    expect(lookups.map((r) => r.status)).toEqual([200, 429]);
    expect(lookups[0]?.headers.get('x-ratelimit-limit')).toBe('1');
  });
});
