// Ingestion API black-box tests over HTTP against the real stack (spec 2; DESIGN §5): every
// status with its body, merge rules, events and deduplication, the automation window,
// deletion, specs, tokens and scopes. Each test has its own tenant and datasource.
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { STREAMS, SUBJECTS } from '../../core/bus/names';
import { DatasourceStore } from '../../stores/datasource-store';
import { ingestWriterCaughtUp } from '../support/bus-conditions';
import { eventually } from '../../support/eventually';
import { addDatasource, createIngestTenant, productToken, streamBase, type IngestTenant } from '../support/ingest';
import { admin, api, stack } from '../../support/stack';
import { addToken, createTenant, revokeToken, withAccounts } from '../../support/tenants';

jest.setTimeout(60_000);

interface Outcome { status: string; _user_id: string | null; _event_id?: string | null; errors?: Record<string, string[]> }
interface Batch { entity: { successful: number; failed: number; items: Outcome[] } }
interface Contact { entity: { _user_id: string; attributes: Record<string, unknown>; audience: { datasourceIds: string[]; attributes: Record<string, unknown> }; events: number } }
interface Usage { requests: number; accepted: number; failed: number; duplicates: number; skipped: number }

let nc: NatsConnection;
let js: JetStreamClient;

beforeAll(async () => {
  nc = await connect({ servers: stack().natsUrl });
  js = jetstream(nc);
});
afterAll(async () => { await nc.close(); });

const post = (t: { base: string; token: string }, path: 'contacts' | 'events', body: unknown) => api(`${t.base}/${path}`, { token: t.token, body });
const contact = (t: { base: string; token: string }, userId: string) => api(`${t.base}/contacts/${encodeURIComponent(userId)}`, { token: t.token });

/** Waits until the contact is readable and `ready` holds. */
async function contactWhen(t: IngestTenant | { base: string; token: string }, userId: string, ready: (c: Contact['entity']) => boolean = () => true): Promise<Contact['entity']> {
  const res = await eventually(() => contact(t, userId), { what: 'the contact to be readable and ready', until: (r) => r.status === 200 && ready((r.body as Contact).entity) });
  expect(res.status).toBe(200);
  return (res.body as Contact).entity;
}

async function usage(t: IngestTenant): Promise<{ lastHour: Record<'contacts' | 'events' | 'delete', Usage> }> {
  const res = await api(t.base, { token: t.token });
  expect(res.status).toBe(200);
  return (res.body as { usage: { lastHour: Record<'contacts' | 'events' | 'delete', Usage> } }).usage;
}

/** Every trigger published for `projectId` so far (reads the AUTOMATION stream; a message carries one request's triggers, under msgID ingest-<seq>). */
async function triggers(projectId: string): Promise<Array<{ _event_id: string; _user_id: string; _event_type: string }>> {
  const consumer = await js.consumers.get(STREAMS.automation.name, { filter_subjects: [SUBJECTS.automationTrigger(projectId)] });
  const found: Array<{ _event_id: string; _user_id: string; _event_type: string }> = [];
  let pending = (await consumer.info()).num_pending;
  while (pending > 0) {
    const batch = await consumer.fetch({ max_messages: Math.min(pending, 500), expires: 2000 });
    let got = 0;
    for await (const m of batch) {
      const message = m.json<{ project: string; triggers: Array<{ _event_id: string; _user_id: string; _event_type: string }> }>();
      expect(message.project).toBe(projectId);
      // The writer's msgID (the INGEST stream sequence): a replayed run's triggers are dropped as duplicates.
      expect(m.headers?.get('Nats-Msg-Id')).toMatch(/^ingest-\d+$/);
      found.push(...message.triggers);
      got += 1;
    }
    if (got === 0) break;
    pending -= got;
  }
  return found;
}

const iso = (offsetMs: number): string => new Date(Date.now() + offsetMs).toISOString();
const MIN = 60_000;

describe('spec 2 §4 rule 1, §7: body shape errors are 400 { message }', () => {
  let t: IngestTenant;
  beforeAll(async () => { t = await createIngestTenant(); });

  test.each([
    ['a JSON object instead of an array', { rawBody: '{"_user_id":"a"}' }, /top-level JSON array/],
    ['an empty array', { rawBody: '[]' }, /empty/],
    ['101 items', { rawBody: JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ _user_id: `u${i}` }))) }, /at most 100/],
    ['malformed JSON', { rawBody: '[{"_user_id":' }, /not valid JSON/],
    ['a JSON string', { rawBody: '"hello"' }, /top-level JSON array/],
  ])('contacts: %s → 400', async (_name, init, message) => {
    const res = await api(`${t.base}/contacts`, { token: t.token, rawBody: init.rawBody, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body as object)).toEqual(['message']);
    expect((res.body as { message: string }).message).toMatch(message);
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
  });

  test('events: a non-array body is 400 too', async () => {
    const res = await post(t, 'events', { _user_id: 'a' });
    expect(res.status).toBe(400);
    expect((res.body as { message: string }).message).toMatch(/array/);
  });

  test('a body over the size limit is 413 { message } (the spec 2 §7 body), on both POST endpoints', async () => {
    const big = JSON.stringify([{ _user_id: 'big', note: 'x'.repeat(1_100_000) }]);
    for (const path of ['contacts', 'events']) {
      const res = await api(`${t.base}/${path}`, { token: t.token, rawBody: big, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(413);
      expect(Object.keys(res.body as object)).toEqual(['message']);
      expect((res.body as { message: string }).message).toMatch(/larger than the limit/);
    }
  });
});

describe('spec 2 §2.3, §7: batch outcome 202 / 422', () => {
  let t: IngestTenant;
  beforeAll(async () => { t = await createIngestTenant(); });

  test('mixed items: 202 with per-item outcomes in input order', async () => {
    const res = await post(t, 'contacts', [
      { _user_id: 'ok-1', _email: 'ada@example.com' },
      { _email: 'no-id@example.com' },
      { _user_id: 'bad-phone', _phone_mobile: '0151 1234567' },
      { _user_id: 'ok-2', _is_subscribed_sms: true },
      42,
    ]);
    expect(res.status).toBe(202);
    const body = res.body as Batch;
    expect(body.entity.successful).toBe(2);
    expect(body.entity.failed).toBe(3);
    expect(body.entity.items.map((i) => [i.status, i._user_id])).toEqual([['success', 'ok-1'], ['error', null], ['error', 'bad-phone'], ['success', 'ok-2'], ['error', null]]);
    expect(body.entity.items[1]?.errors).toEqual({ _user_id: ['is required'] });
    expect(body.entity.items[2]?.errors?.['_phone_mobile']?.[0]).toMatch(/E\.164/);
    expect(body.entity.items[4]?.errors).toEqual({ _item: ['must be a JSON object'] });
    expect(body.entity.items[0]).toEqual({ status: 'success', _user_id: 'ok-1' });
  });

  test('every item failed: 422 with the same shape', async () => {
    const res = await post(t, 'contacts', [{ _user_id: 'x', _email: 'not-an-email' }, { _user_id: 'y', _unknown_reserved: 1 }]);
    expect(res.status).toBe(422);
    const body = res.body as Batch;
    expect(body.entity).toMatchObject({ successful: 0, failed: 2 });
    expect(body.entity.items[0]?.errors?.['_email']?.[0]).toMatch(/email/);
    expect(body.entity.items[1]?.errors?.['_unknown_reserved']?.[0]).toMatch(/reserved/);
  });

  test('native attribute rules: every reserved attribute is typed and checked', async () => {
    const res = await post(t, 'contacts', [
      { _user_id: 'n1', _first_name: 'Ada', _last_name: 'Lovelace', _email: 'ada@example.com', _phone_mobile: '+4915112345678', _country_code: 'DE', _client_tags: ['vip', 'beta'], _is_subscribed_sms: false, _date_birthday: '1985-12-10', _date_imported: '2026-01-02T03:04:05+01:00', _geopoint: { lat: 52.52, lon: 13.4 } },
      { _user_id: 'n2', _country_code: 'de', _client_tags: 'vip', _is_subscribed_sms: 'yes', _date_birthday: '2026-02-30', _geopoint: { lat: 91, lon: 0 } },
      { _user_id: 'n3', _date_birthday: '1815-12-10' },
    ]);
    expect(res.status).toBe(202);
    const items = (res.body as Batch).entity.items;
    expect(items[0]?.status).toBe('success');
    expect(Object.keys(items[1]?.errors ?? {}).sort()).toEqual(['_client_tags', '_country_code', '_date_birthday', '_geopoint', '_is_subscribed_sms']);
    // 1815 is before what ClickHouse dates hold (1900): refused rather than stored wrongly.
    expect(items[2]?.errors?.['_date_birthday']?.[0]).toMatch(/1900/);
  });

  test('names such as "__proto__" and "constructor" are refused or stored as plain names, never a 500', async () => {
    const res = await api(`${t.base}/contacts`, { token: t.token, rawBody: '[{"_user_id":"p1","__proto__":{"a":1}},{"_user_id":"p2","constructor":"c"}]', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(202);
    const items = (res.body as Batch).entity.items;
    expect(items[0]?.errors?.['__proto__']?.[0]).toMatch(/reserved/);
    expect(items[1]?.status).toBe('success');
    expect((await contactWhen(t, 'p2')).attributes).toEqual({ constructor: 'c' });
  });

  test('events: outcome items carry _event_id (DESIGN §5)', async () => {
    const res = await post(t, 'events', [{ _user_id: 'ok-1', _event_id: 'e-1', _event_type: 'purchase', _event_parameters: { amount: 3 } }, { _user_id: 'ok-1', _event_id: 'e-2', _event_type: 'bad type!', _event_parameters: {} }]);
    expect(res.status).toBe(202);
    const items = (res.body as Batch).entity.items;
    expect(items[0]).toEqual({ status: 'success', _user_id: 'ok-1', _event_id: 'e-1' });
    expect(items[1]).toMatchObject({ status: 'error', _user_id: 'ok-1', _event_id: 'e-2' });
    expect(items[1]?.errors?.['_event_type']).toBeDefined();
  });
});

describe('spec 2 §2.1, §3: contact merge rules', () => {
  let t: IngestTenant;
  beforeAll(async () => { t = await createIngestTenant(); });

  test('an omitted attribute keeps its value, an explicit null clears it', async () => {
    expect((await post(t, 'contacts', [{ _user_id: 'm1', _first_name: 'Ada', plan: 'gold', visits: 3 }])).status).toBe(202);
    expect((await post(t, 'contacts', [{ _user_id: 'm1', plan: null, visits: 4 }])).status).toBe(202);
    const c = await contactWhen(t, 'm1', (e) => e.attributes['visits'] === 4);
    expect(c.attributes).toEqual({ _first_name: 'Ada', visits: 4 });
  });

  test('re-sending the same _user_id updates one record (idempotent)', async () => {
    for (let i = 0; i < 3; i += 1) expect((await post(t, 'contacts', [{ _user_id: 'm2', _email: 'same@example.com' }])).status).toBe(202);
    const c = await contactWhen(t, 'm2');
    expect(c.attributes).toEqual({ _email: 'same@example.com' });
    expect(c.audience.datasourceIds).toEqual([t.datasourceId]);
  });

  test('two concurrent writers of different attributes of one contact lose neither', async () => {
    const writes = Array.from({ length: 20 }, (_, i) => post(t, 'contacts', [{ _user_id: 'm3', [`a${i}`]: i }]));
    for (const res of await Promise.all(writes)) expect(res.status).toBe(202);
    const c = await contactWhen(t, 'm3', (e) => Object.keys(e.attributes).length === 20);
    expect(c.attributes).toEqual(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`a${i}`, i])));
  });

  test('across datasources: one audience record, the latest write of each attribute wins (DESIGN §5)', async () => {
    const second = await addDatasource(t);
    expect((await post(t, 'contacts', [{ _user_id: 'm4', _first_name: 'Old', city: 'Berlin' }])).status).toBe(202);
    await contactWhen(t, 'm4');
    expect((await post(second, 'contacts', [{ _user_id: 'm4', _first_name: 'New', tier: 2 }])).status).toBe(202);
    const viaSecond = await contactWhen(second, 'm4', (e) => e.audience.datasourceIds.length === 2);
    expect(viaSecond.audience.datasourceIds.sort()).toEqual([t.datasourceId, second.datasourceId].sort());
    expect(viaSecond.audience.attributes).toEqual({ _first_name: 'New', city: 'Berlin', tier: 2 });
    // A later clear in the first datasource wins over the second's older value.
    expect((await post(t, 'contacts', [{ _user_id: 'm4', _first_name: null }])).status).toBe(202);
    const cleared = await contactWhen(t, 'm4', (e) => !('_first_name' in e.audience.attributes));
    expect(cleared.audience.attributes).toEqual({ city: 'Berlin', tier: 2 });
    expect(cleared.attributes).toEqual({ city: 'Berlin' });
  });

  test('a custom attribute keeps the type of its first value; another type is an item error', async () => {
    expect((await post(t, 'contacts', [{ _user_id: 'm5', score: 10 }])).status).toBe(202);
    const res = await post(t, 'contacts', [{ _user_id: 'm5', score: 'ten' }]);
    expect(res.status).toBe(422);
    expect((res.body as Batch).entity.items[0]?.errors?.['score']?.[0]).toMatch(/number/);
  });
});

describe('spec 2 §4 specs endpoints and strict datasources (DESIGN §5)', () => {
  test('a non-strict datasource records new names with their inferred types', async () => {
    const t = await createIngestTenant();
    await post(t, 'contacts', [{ _user_id: 's1', plan: 'gold', tags: ['a'], prefs: { x: 1 }, vip: true }]);
    await post(t, 'events', [{ _user_id: 's1', _event_id: 'e1', _event_type: 'order-placed', _event_parameters: { amount: 9.5, sku: 'A1' } }]);
    const attrs = await eventually(() => api(`${t.base}/specs/attributes`, { token: t.token }), { what: 'the 14 attribute specs', until: (r) => ((r.body as { entities: unknown[] }).entities ?? []).length >= 14 });
    expect(attrs.status).toBe(200);
    const byName = Object.fromEntries((attrs.body as { entities: Array<{ name: string; type: string; source: string }> }).entities.map((e) => [e.name, `${e.type}/${e.source}`]));
    expect(byName).toMatchObject({ _email: 'string/native', _geopoint: 'geopoint/native', plan: 'string/inferred', tags: 'array/inferred', prefs: 'object/inferred', vip: 'boolean/inferred' });
    const events = await eventually(() => api(`${t.base}/specs/events`, { token: t.token }), { what: 'the event spec', until: (r) => ((r.body as { entities: unknown[] }).entities ?? []).length >= 1 });
    expect(events.body).toEqual({ entities: [{ eventType: 'order-placed', source: 'inferred', parameters: [{ name: 'amount', type: 'number', source: 'inferred' }, { name: 'sku', type: 'string', source: 'inferred' }] }] });
  });

  test('a strict datasource refuses unknown attribute names, event types and parameters as item errors', async () => {
    const t = await createIngestTenant({ strict: true, attributes: { plan: 'string', signup: 'date' }, events: { purchase: { amount: 'number' } } });
    const res = await post(t, 'contacts', [{ _user_id: 'st1', plan: 'gold', signup: '2026-01-01' }, { _user_id: 'st2', plna: 'typo' }, { _user_id: 'st3', signup: 'yesterday' }]);
    expect(res.status).toBe(202);
    const items = (res.body as Batch).entity.items;
    expect(items.map((i) => i.status)).toEqual(['success', 'error', 'error']);
    expect(items[1]?.errors?.['plna']?.[0]).toMatch(/strict/);
    expect(items[2]?.errors?.['signup']?.[0]).toMatch(/date/);
    const ev = await post(t, 'events', [
      { _user_id: 'st1', _event_id: 'a', _event_type: 'purchase', _event_parameters: { amount: 1 } },
      { _user_id: 'st1', _event_id: 'b', _event_type: 'refund', _event_parameters: {} },
      { _user_id: 'st1', _event_id: 'c', _event_type: 'purchase', _event_parameters: { coupon: 'X' } },
    ]);
    expect((ev.body as Batch).entity.items.map((i) => i.status)).toEqual(['success', 'error', 'error']);
    const spec = await api(`${t.base}/specs/attributes`, { token: t.token });
    expect((spec.body as { entities: Array<{ name: string }> }).entities.map((e) => e.name)).not.toContain('plna');
  });
});

describe('spec 2 §2.2, §3: events', () => {
  let t: IngestTenant;
  beforeAll(async () => {
    t = await createIngestTenant();
    expect((await post(t, 'contacts', [{ _user_id: 'ev1' }])).status).toBe(202);
    await contactWhen(t, 'ev1');
  });

  test('a repeated _event_id — in one batch, in a later batch — is stored once and reported success', async () => {
    const event = { _user_id: 'ev1', _event_id: 'dup-1', _event_type: 'view', _event_parameters: { page: '/a' } };
    const first = await post(t, 'events', [event, event, { ...event, _event_parameters: { page: '/b' } }]);
    expect((first.body as Batch).entity.items.map((i) => i.status)).toEqual(['success', 'success', 'success']);
    const again = await post(t, 'events', [event]);
    expect(again.status).toBe(202);
    const c = await contactWhen(t, 'ev1', (e) => e.events >= 1);
    await ingestWriterCaughtUp('both batches of the repeated event applied');
    expect((await contactWhen(t, 'ev1')).events).toBe(1);
    expect(c.events).toBe(1);
    const u = await eventually(() => usage(t), { what: 'three duplicates in usage', until: (x) => x.lastHour.events.duplicates >= 3 });
    expect(u.lastHour.events.duplicates).toBe(3);
  });

  test('an event-only item without a contact is skipped (reported in usage as skipped); with _user_data the contact is created first', async () => {
    const before = (await usage(t)).lastHour.events.skipped;
    const res = await post(t, 'events', [
      { _user_id: 'ghost', _event_id: 'g1', _event_type: 'view', _event_parameters: {} },
      { _user_id: 'newbie', _event_id: 'n1', _event_type: 'signup', _event_parameters: {}, _user_data: { _email: 'new@example.com' } },
    ]);
    expect((res.body as Batch).entity.items.map((i) => i.status)).toEqual(['success', 'success']);
    const created = await contactWhen(t, 'newbie', (e) => e.events === 1);
    expect(created.attributes).toEqual({ _email: 'new@example.com' });
    expect((await contact(t, 'ghost')).status).toBe(404);
    const u = await eventually(() => usage(t), { what: 'the skipped event in usage', until: (x) => x.lastHour.events.skipped > before });
    expect(u.lastHour.events.skipped).toBe(before + 1);
    // The skipped event's id was not used up: sent again once the contact exists, it is stored.
    await post(t, 'contacts', [{ _user_id: 'ghost' }]);
    await contactWhen(t, 'ghost');
    await post(t, 'events', [{ _user_id: 'ghost', _event_id: 'g1', _event_type: 'view', _event_parameters: {} }]);
    expect((await contactWhen(t, 'ghost', (e) => e.events === 1)).events).toBe(1);
  });

  test('a failed _user_data upsert skips the event: the item is an error naming the attribute', async () => {
    const res = await post(t, 'events', [{ _user_id: 'ev1', _event_id: 'u1', _event_type: 'view', _event_parameters: {}, _user_data: { _email: 'broken' } }]);
    expect(res.status).toBe(422);
    expect(Object.keys((res.body as Batch).entity.items[0]?.errors ?? {})).toEqual(['_user_data._email']);
  });

  test('event field rules: unknown fields, null parameters, dates without an offset are item errors', async () => {
    const res = await post(t, 'events', [
      { _user_id: 'ev1', _event_id: 'r1', _event_type: 'view', _event_parameters: {}, email: 'x' },
      { _user_id: 'ev1', _event_id: 'r2', _event_type: 'view', _event_parameters: { p: null } },
      { _user_id: 'ev1', _event_id: 'r3', _event_type: 'view', _event_parameters: {}, _event_date: '2026-11-23T10:00:00' },
      { _user_id: 'ev1', _event_id: 'r4', _event_type: 'view', _event_parameters: [] },
    ]);
    expect(res.status).toBe(422);
    const errors = (res.body as Batch).entity.items.map((i) => Object.keys(i.errors ?? {}));
    expect(errors).toEqual([['email'], ['_event_parameters.p'], ['_event_date'], ['_event_parameters']]);
  });
});

describe('spec 2 §4 rule 6: automation window', () => {
  test('exactly one trigger per accepted non-duplicate event within ±1 h; none outside', async () => {
    const t = await createIngestTenant();
    await post(t, 'contacts', [{ _user_id: 'a1' }]);
    await contactWhen(t, 'a1');
    const ev = (id: string, date?: string) => ({ _user_id: 'a1', _event_id: id, _event_type: 'purchase', _event_parameters: { amount: 1 }, ...(date ? { _event_date: date } : {}) });
    const res = await post(t, 'events', [
      ev('omitted'), ev('past-59', iso(-59 * MIN)), ev('future-59', iso(59 * MIN)),
      ev('past-61', iso(-61 * MIN)), ev('future-61', iso(61 * MIN)), ev('future-1d', iso(24 * 60 * MIN)),
      ev('omitted'),
    ]);
    expect(res.status).toBe(202);
    await post(t, 'events', [ev('past-59', iso(-59 * MIN))]); // a duplicate in a later batch
    await contactWhen(t, 'a1', (e) => e.events === 6);
    await ingestWriterCaughtUp('the later batch with the duplicate applied, its triggers published');
    const found = await triggers(t.projectId);
    expect(found.map((f) => f._event_id).sort()).toEqual(['future-59', 'omitted', 'past-59']);
    expect(found[0]).toMatchObject({ _user_id: 'a1', _event_type: 'purchase' });
  });
});

describe('spec 2 §3, DESIGN §5: DELETE /stream/contacts/{userId}', () => {
  test('204; the contact and its events are gone at once; repeat is 204; later event-only items are skipped', async () => {
    const t = await createIngestTenant();
    await post(t, 'events', [{ _user_id: 'd1', _event_id: 'x1', _event_type: 'view', _event_parameters: {}, _user_data: { _first_name: 'Del' } }]);
    await contactWhen(t, 'd1', (e) => e.events === 1);
    const del = await api(`${t.base}/contacts/d1`, { method: 'DELETE', token: t.token });
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    expect(del.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect((await contact(t, 'd1')).status).toBe(404);
    expect((await api(`${t.base}/contacts/d1`, { method: 'DELETE', token: t.token })).status).toBe(204);
    expect((await api(`${t.base}/contacts/never-existed`, { method: 'DELETE', token: t.token })).status).toBe(204);
    expect((await post(t, 'events', [{ _user_id: 'd1', _event_id: 'x2', _event_type: 'view', _event_parameters: {} }])).status).toBe(202);
    await ingestWriterCaughtUp('the event-only item after the delete applied (skipped)');
    expect((await contact(t, 'd1')).status).toBe(404);
    // Re-created, it starts empty: the old attributes and events stay deleted.
    await post(t, 'contacts', [{ _user_id: 'd1', _last_name: 'Again' }]);
    const again = await contactWhen(t, 'd1');
    expect(again.attributes).toEqual({ _last_name: 'Again' });
    expect(again.events).toBe(0);
  });
});

describe('spec 2 §5: tokens, scopes and 401/404', () => {
  let t: IngestTenant;
  beforeAll(async () => { t = await createIngestTenant(); });

  test('401 for a missing, malformed, unknown or revoked token, and for other token kinds', async () => {
    const missing = await api(t.base);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('x-ratelimit-remaining')).not.toBeNull();
    const malformed = await api(t.base, { headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
    expect(Object.keys(malformed.body as object)).toEqual(['message']);
    expect((await api(t.base, { token: 'dst_unknown' })).status).toBe(401);
    const sms = await addToken(t.orgId, 'api_sms', t.projectId);
    expect((await api(t.base, { token: sms.token })).status).toBe(401);
    const extra = await withAccounts(async (accounts) => accounts.createToken({ kind: 'datasource', orgId: t.orgId, projectId: t.projectId, datasourceId: t.datasourceId }));
    await eventually(() => api(t.base, { token: extra.value }), { what: 'the new token to authenticate', until: (r) => r.status === 200 });
    await revokeToken(extra.token.id);
    const revoked = await eventually(() => api(t.base, { token: extra.value }), { what: 'the revoked token to be refused', until: (r) => r.status === 401 });
    expect(revoked.status).toBe(401);
  });

  test('404 for an unknown project or datasource, another datasource, or another project; never 403', async () => {
    const unknown = await api(streamBase(t.projectId, '01a00000-0000-7000-8000-000000000000'), { token: t.token });
    expect(unknown.status).toBe(404);
    expect(Object.keys(unknown.body as object)).toEqual(['message']);
    expect(unknown.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect((await api(streamBase('01a00000-0000-7000-8000-000000000000', t.datasourceId), { token: t.token })).status).toBe(404);
    const second = await addDatasource(t);
    expect((await api(second.base, { token: t.token })).status).toBe(404);
    expect((await api(`${second.base}/contacts`, { token: t.token, body: [{ _user_id: 'x' }] })).status).toBe(404);
    const other = await createIngestTenant();
    expect((await api(other.base, { token: t.token })).status).toBe(404);
    expect((await api(`${other.base}/contacts/x`, { method: 'DELETE', token: t.token })).status).toBe(404);
  });

  test('product tokens: ingest:write writes to every datasource of the project; ingest:read only reads; others get 404', async () => {
    const writer = await productToken(t.orgId, t.projectId, ['ingest:write']);
    const reader = await productToken(t.orgId, t.projectId, ['ingest:read']);
    const audienceOnly = await productToken(t.orgId, t.projectId, ['audience:search']);
    await eventually(() => api(t.base, { token: writer }), { what: 'the ingest:write token to authenticate', until: (r) => r.status === 200 });
    expect((await api(`${t.base}/contacts`, { token: writer, body: [{ _user_id: 'p1' }] })).status).toBe(202);
    const second = await addDatasource(t);
    expect((await api(`${second.base}/contacts`, { token: writer, body: [{ _user_id: 'p1' }] })).status).toBe(202);
    await eventually(() => api(t.base, { token: reader }), { what: 'the ingest:read token to authenticate', until: (r) => r.status === 200 });
    expect((await api(`${t.base}/specs/attributes`, { token: reader })).status).toBe(200);
    expect((await api(`${t.base}/contacts`, { token: reader, body: [{ _user_id: 'p2' }] })).status).toBe(404);
    expect((await api(t.base, { token: audienceOnly })).status).toBe(404);
    const other = await createIngestTenant();
    expect((await api(other.base, { token: writer })).status).toBe(404);
  });

  test('GET /stream describes organization, project, datasource and usage', async () => {
    const res = await api(t.base, { token: t.token });
    expect(res.status).toBe(200);
    const body = res.body as { organization: { id: string }; project: { id: string }; datasource: { id: string; strict: boolean }; usage: { lastHour: object; lastDay: object } };
    expect(body.organization.id).toBe(t.orgId);
    expect(body.project.id).toBe(t.projectId);
    expect(body.datasource).toMatchObject({ id: t.datasourceId, strict: false });
    expect(Object.keys(body.usage.lastDay).sort()).toEqual(['contacts', 'delete', 'events']);
  });
});

describe('spec 2 §8: rate limits per datasource per endpoint', () => {
  test('X-RateLimit-* on every response; beyond the limit 429 with an empty body', async () => {
    const t = await createIngestTenant();
    await withAccounts(async (accounts, _b, nats) => { await new DatasourceStore(nats.kv.accounts, accounts).setRateLimit(t.datasourceId, 'ingest-stream', 2); });
    await eventually(() => api(t.base, { token: t.token }), { what: 'the rate limit of 2 to apply', until: (r) => r.headers.get('x-ratelimit-limit') === '2' });
    let last = await api(t.base, { token: t.token });
    for (let i = 0; i < 3 && last.status !== 429; i += 1) last = await api(t.base, { token: t.token });
    expect(last.status).toBe(429);
    expect(last.body).toBeNull();
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(last.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    // Another endpoint of the same datasource has its own counter.
    expect((await api(`${t.base}/specs/attributes`, { token: t.token })).status).toBe(200);
  });
});

describe('README: datasources and tokens through the admin CLI, as an operator would', () => {
  test('datasource create, token create --kind datasource / product --scopes, spec add, strict: the API follows', async () => {
    const tenant = await createTenant({ name: 'CLI Org' });
    const ds = await admin<{ id: string; projectId: string }>('datasource', 'create', '--project', tenant.projectId, '--name', 'Shop');
    expect(ds.projectId).toBe(tenant.projectId);
    const dsToken = await admin<{ value: string; datasource: string; project: string }>('token', 'create', '--org', tenant.orgId, '--kind', 'datasource', '--datasource', ds.id);
    expect(dsToken).toMatchObject({ datasource: ds.id, project: tenant.projectId });
    const product = await admin<{ value: string; scopes: string[] }>('token', 'create', '--org', tenant.orgId, '--project', tenant.projectId, '--kind', 'product', '--scopes', 'ingest:write,ingest:read');
    expect(product.scopes).toEqual(['ingest:write', 'ingest:read']);
    await admin('spec', 'attribute', 'add', '--datasource', ds.id, '--name', 'plan', '--type', 'string');
    await admin('datasource', 'strict', '--datasource', ds.id, '--enable');
    const base = streamBase(tenant.projectId, ds.id);
    await eventually(() => api(base, { token: dsToken.value }), { what: 'the datasource to read strict through the token', until: (r) => r.status === 200 && (r.body as { datasource: { strict: boolean } }).datasource.strict });
    const res = await api(`${base}/contacts`, { token: product.value, body: [{ _user_id: 'c1', plan: 'gold' }, { _user_id: 'c2', other: 1 }] });
    expect(res.status).toBe(202);
    expect((res.body as Batch).entity.items.map((i) => i.status)).toEqual(['success', 'error']);
    await expect(admin('token', 'create', '--org', tenant.orgId, '--project', tenant.projectId, '--kind', 'product', '--scopes', 'ingest:everything')).rejects.toThrow(/unknown scope/);
  }, 60_000);
});
