// Limits of the ingestion API over HTTP against the real stack (spec 2 §2, §3, §7): bodies
// near the size limit reach the stream (in parts) or are a 413, deep values and numbers
// JSON.parse would change are item errors, the inferred-name cap holds under concurrent
// batches, and an old event id re-sent after its contact's deletion is stored. The SMS API's
// largest valid bulk (spec 1 §4) publishes in one piece.
import { isAppError } from '../../core/errors';
import { capMessages, type IngestContactsMessage } from '../../core/ingest';
import { LIMITS, INFERRED_CAPS } from '../../core/ingest/values';
import { STREAMS } from '../../core/bus/names';
import type { Nats } from '../../infra/nats';
import { JetStreamIngestBus } from '../../infra/bus/ingest-bus';
import { listRecords } from '../../stores/kv-records';
import { eventually } from '../../support/eventually';
import { createIngestTenant, type IngestTenant } from '../support/ingest';
import { startSmallPayloadNats, type SmallPayloadNats } from '../support/small-payload-nats';
import { api } from '../../support/stack';
import { createTenant, V1, withAccounts } from '../../support/tenants';

jest.setTimeout(120_000);

interface Outcome { status: string; _user_id: string | null; errors?: Record<string, string[]> }
interface Batch { entity: { successful: number; failed: number; items: Outcome[] } }

const post = (t: IngestTenant, path: 'contacts' | 'events', body: unknown) => api(`${t.base}/${path}`, { token: t.token, body });
const postRaw = (t: IngestTenant, path: 'contacts' | 'events', rawBody: string) => api(`${t.base}/${path}`, { token: t.token, rawBody, headers: { 'content-type': 'application/json' } });
const contactOf = async (t: IngestTenant, userId: string, ready: (c: { events: number; attributes: Record<string, unknown> }) => boolean) => {
  const res = await eventually(() => api(`${t.base}/contacts/${userId}`, { token: t.token }), { what: 'the contact to be readable and ready', until: (r) => r.status === 200 && ready((r.body as { entity: { events: number; attributes: Record<string, unknown> } }).entity), timeoutMs: 15_000 });
  expect(res.status).toBe(200);
  return (res.body as { entity: { events: number; attributes: Record<string, unknown> } }).entity;
};

describe('spec 2 §7: a body under the size limit whose stream message is over max_payload', () => {
  // 190 small numbers and a long string per item: each number grows from ~9 bytes in the body
  // to ~35 on the stream ({"type":"number","value":n}), so a body under 1 MiB is ~1.5 MB there.
  const wide = (): Record<string, unknown> => ({ ...Object.fromEntries(Array.from({ length: 190 }, (_, k) => [`p${k}`, k])), s: 'x'.repeat(7800) });

  test('100 events (a ~980 KB body, ~1.5 MB as stored) are 202 and all stored', async () => {
    const t = await createIngestTenant();
    expect((await post(t, 'contacts', [{ _user_id: 'big' }])).status).toBe(202);
    const events = Array.from({ length: 100 }, (_, i) => ({ _user_id: 'big', _event_id: `e${i}`, _event_type: 'bulk', _event_parameters: wide() }));
    const body = JSON.stringify(events);
    expect(Buffer.byteLength(body)).toBeGreaterThan(950_000);
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    const res = await postRaw(t, 'events', body);
    expect(res.status).toBe(202);
    expect((res.body as Batch).entity.successful).toBe(100);
    expect((await contactOf(t, 'big', (c) => c.events === 100)).events).toBe(100);
    const usage = await api(t.base, { token: t.token });
    expect((usage.body as { usage: { lastHour: { events: { requests: number; accepted: number } } } }).usage.lastHour.events).toEqual(expect.objectContaining({ requests: 1, accepted: 100 }));
  });

  test('100 contacts (a ~980 KB body) are 202 and all stored', async () => {
    const t = await createIngestTenant();
    const contacts = Array.from({ length: 100 }, (_, i) => ({ _user_id: `c${i}`, ...wide() }));
    expect(Buffer.byteLength(JSON.stringify(contacts))).toBeGreaterThan(950_000);
    const res = await post(t, 'contacts', contacts);
    expect(res.status).toBe(202);
    expect((await contactOf(t, 'c99', () => true)).attributes['p189']).toBe(189);
  });
});

describe('an operator NATS with a smaller max_payload (64 KiB)', () => {
  let server: SmallPayloadNats;
  let small: Nats;

  beforeAll(async () => {
    server = await startSmallPayloadNats('ingest-payload-test');
    small = server.nats;
  }, 60_000);

  afterAll(async () => {
    await server.stop();
  });

  const header = { orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt: new Date().toISOString() };
  const stored = async (): Promise<number> => (await small.jsm.streams.info(STREAMS.ingest.name)).state.messages;

  // The gateway publishes over the pipelined client (roles/gateway-http.ts); the library's client stays usable.
  test.each(['pipeline', 'js'] as const)('the bus reads the server\'s max_payload: a 200 KB request goes as parts of at most 32 KiB, in order (publishing over %s)', async (publisher) => {
    const bus = new JetStreamIngestBus(small[publisher], small.kv.ingestState, () => small.nc.info?.max_payload);
    const before = await stored();
    const message: IngestContactsMessage = { kind: 'contacts', ...header, failed: 1, contacts: Array.from({ length: 100 }, (_, i) => ({ userId: `u${i}`, attributes: { note: { type: 'string', value: 'x'.repeat(2000) } } })) };
    const seq = await bus.publish(message);
    const parts = (await stored()) - before;
    expect(parts).toBeGreaterThanOrEqual(7);
    const users: string[] = [];
    for (let s = seq - parts + 1; s <= seq; s += 1) {
      const m = await small.jsm.streams.getMessage(STREAMS.ingest.name, { seq: s });
      expect(m?.data.length).toBeLessThanOrEqual(32 * 1024);
      users.push(...(m?.json<IngestContactsMessage>().contacts.map((c) => c.userId) ?? []));
    }
    expect(users).toEqual(message.contacts.map((c) => c.userId));
  });

  test('an item over the limit on its own is PAYLOAD_TOO_LARGE naming the limit, and nothing is published', async () => {
    const bus = new JetStreamIngestBus(small.js, small.kv.ingestState, () => small.nc.info?.max_payload);
    const before = await stored();
    const contacts: IngestContactsMessage['contacts'] = [{ userId: 'fine', attributes: {} }, { userId: 'huge', attributes: { note: { type: 'string' as const, value: 'x'.repeat(40_000) } } }];
    let thrown: unknown;
    try { await bus.publish({ kind: 'contacts', ...header, failed: 0, contacts }); } catch (err) { thrown = err; }
    expect(isAppError(thrown) && thrown.code).toBe('PAYLOAD_TOO_LARGE');
    expect((thrown as Error).message).toMatch(/"huge" is \d+ bytes as stored, more than the 32768 bytes/);
    expect(await stored()).toBe(before);
  });
});

describe('spec 2 §2.1: deep values are item errors, not a 500', () => {
  test.each([5_000, 100_000])('an attribute and a parameter nested %d levels', async (depth) => {
    const t = await createIngestTenant();
    const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const contacts = await postRaw(t, 'contacts', `[{"_user_id":"d","deep":${deep}},{"_user_id":"ok","flat":{"a":1}}]`);
    expect(contacts.status).toBe(202);
    expect((contacts.body as Batch).entity.items[0]?.errors).toEqual({ deep: [`must nest objects and arrays at most ${LIMITS.depth} levels deep`] });
    const events = await postRaw(t, 'events', `[{"_user_id":"ok","_event_id":"e","_event_type":"t","_event_parameters":{"deep":${deep}}}]`);
    expect(events.status).toBe(422);
    expect((events.body as Batch).entity.items[0]?.errors?.['_event_parameters.deep']?.[0]).toMatch(/at most 32 levels/);
  });
});

describe('spec 2 §2.1: numbers JSON.parse would change are refused, never rounded', () => {
  test('9007199254740993, a 30-digit number and -0 are item errors naming them; 2^53 - 1 is stored exactly', async () => {
    const t = await createIngestTenant();
    const res = await postRaw(t, 'contacts', '[{"_user_id":"n1","big":9007199254740993},{"_user_id":"n2","huge":123456789012345678901234567890},{"_user_id":"n3","zero":-0},{"_user_id":"n4","max":9007199254740991}]');
    expect(res.status).toBe(202);
    const items = (res.body as Batch).entity.items;
    expect(items.map((i) => i.status)).toEqual(['error', 'error', 'error', 'success']);
    expect(items[0]?.errors?.['big']?.[0]).toMatch(/^is 9007199254740993, beyond 2\^53/);
    expect(items[1]?.errors?.['huge']?.[0]).toMatch(/^is 123456789012345678901234567890, beyond 2\^53/);
    expect(items[2]?.errors?.['zero']?.[0]).toMatch(/^is -0, which is stored as 0/);
    expect((await contactOf(t, 'n4', () => true)).attributes['max']).toBe(9007199254740991);
    const events = await postRaw(t, 'events', '[{"_user_id":"n4","_event_id":"e","_event_type":"t","_event_parameters":{"order":{"id":9007199254740993}}}]');
    expect(events.status).toBe(422);
    expect((events.body as Batch).entity.items[0]?.errors?.['_event_parameters.order']?.[0]).toMatch(/^_event_parameters\.order\.id is 9007199254740993, beyond 2\^53/);
  });
});

describe('spec 2 §2.1: inferred attribute cap per datasource', () => {
  test(`four concurrent batches of 1,000 new names each leave exactly ${INFERRED_CAPS.attributes} inferred attributes; the items over the cap say so`, async () => {
    const t = await createIngestTenant();
    const batch = (r: number) => Array.from({ length: 5 }, (_, c) => ({ _user_id: `r${r}c${c}`, ...Object.fromEntries(Array.from({ length: 200 }, (_, a) => [`r${r}c${c}a${a}`, a])) }));
    const answers = await Promise.all([0, 1, 2, 3].map((r) => post(t, 'contacts', batch(r))));
    const items = answers.flatMap((a) => (a.body as Batch).entity.items);
    expect(items.filter((i) => i.status === 'success')).toHaveLength(INFERRED_CAPS.attributes / 200);
    for (const item of items.filter((i) => i.status === 'error')) expect(Object.values(item.errors ?? {}).flat()).toContain(capMessages.attribute);
    const specs = await withAccounts(async (_a, _b, nats) => listRecords<{ source: string }>(nats.kv.accounts, `dsattr.${t.datasourceId}`));
    expect(specs.filter((s) => s.source === 'inferred')).toHaveLength(INFERRED_CAPS.attributes);
    const again = await post(t, 'contacts', [{ _user_id: 'late', brandnew: 1 }, { _user_id: 'known', r0c0a0: 5 }]);
    expect((again.body as Batch).entity.items.map((i) => i.errors ?? 'ok')).toEqual([{ brandnew: [capMessages.attribute] }, 'ok']);
  });

  test(`an item with more than ${LIMITS.attributesPerItem} custom attributes is an item error naming the cap`, async () => {
    const t = await createIngestTenant();
    const res = await post(t, 'contacts', [{ _user_id: 'wide', ...Object.fromEntries(Array.from({ length: 10_000 }, (_, a) => [`n${a}`, a])) }]);
    expect(res.status).toBe(422);
    expect((res.body as Batch).entity.items[0]?.errors).toEqual({ _item: [`has 10000 custom attributes: at most ${LIMITS.attributesPerItem} per item`] });
  });
});

describe('spec 2 §3: an event id of a deleted contact', () => {
  test('re-sent with _user_data after the deletion, it is stored on the re-created contact (success means stored)', async () => {
    const t = await createIngestTenant();
    expect((await post(t, 'events', [{ _user_id: 'gone', _event_id: 'ev-1', _event_type: 'view', _event_parameters: {}, _user_data: { _first_name: 'Ada' } }])).status).toBe(202);
    await contactOf(t, 'gone', (c) => c.events === 1);
    expect((await api(`${t.base}/contacts/gone`, { method: 'DELETE', token: t.token })).status).toBe(204);
    const again = await post(t, 'events', [{ _user_id: 'gone', _event_id: 'ev-1', _event_type: 'view', _event_parameters: {}, _user_data: { _first_name: 'Again' } }]);
    expect((again.body as Batch).entity.items[0]?.status).toBe('success');
    const contact = await contactOf(t, 'gone', (c) => c.attributes['_first_name'] === 'Again' && c.events === 1);
    expect(contact.events).toBe(1);
    // Still a duplicate while the contact lives.
    expect((await post(t, 'events', [{ _user_id: 'gone', _event_id: 'ev-1', _event_type: 'view', _event_parameters: {} }, { _user_id: 'gone', _event_id: 'ev-2', _event_type: 'view', _event_parameters: {} }])).status).toBe(202);
    expect((await contactOf(t, 'gone', (c) => c.events === 2)).events).toBe(2);
  });
});

describe('spec 1 §4: the largest valid SMS bulk', () => {
  test('100 items of 10 GSM-7 segments whose characters take two bytes each (1,530 × "é"), with 40-character clientIds, publish in one piece: 201', async () => {
    const t = await createTenant({ balance: 1000 });
    const body = Array.from({ length: 100 }, (_, i) => ({ from: 'TestCoSendr', to: '+4915112345678', text: 'é'.repeat(1530), clientId: `bulk-${i}-`.padEnd(40, 'x') }));
    const res = await api(`${V1}/sms/bulk`, { token: t.token, body });
    expect(res.status).toBe(201);
    const entities = (res.body as { entities: Array<{ messagesCount: number }> }).entities;
    expect(entities).toHaveLength(100);
    expect(entities.every((e) => e.messagesCount === 10)).toBe(true);
  });
});
