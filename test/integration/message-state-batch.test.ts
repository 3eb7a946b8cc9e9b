// The states of one request's messages as one KV record (stores/message-state.ts putAll,
// core/bus/state-batch.ts), on the stack's real NATS: read-your-writes on GET /sms/{id} for
// every message of a bulk; the lifecycle's compare-and-set reads a message from the record at
// revision 0 and creates its own key, which from then on wins; requests whose states cannot be
// one record (ids of several batches, too large) keep a key per message.
import { KV_KEYS } from '../../core/bus';
import { batchOf, newId, newIds } from '../../core/ids';
import type { SmsMessage } from '../../core/sms/message';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { KvLifecycleStates } from '../../stores/lifecycle-records';
import { KvMessageStates } from '../../stores/message-state';
import { eventually } from '../../support/eventually';
import { makeMessage } from '../../support/message-rows';
import { startSmallPayloadNats, type SmallPayloadNats } from '../support/small-payload-nats';
import { api, stack } from '../../support/stack';
import { createTenant, V1 } from '../../support/tenants';

let nats: Nats;
let states: KvMessageStates;
let lifecycle: KvLifecycleStates;

beforeAll(async () => {
  nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'state-batch-test' }, createLogger('error'));
  states = new KvMessageStates(nats.pipeline);
  lifecycle = new KvLifecycleStates(nats.kv.messages, { jetstream: nats.pipeline, bucket: 'messages' });
});

afterAll(async () => {
  await nats.close();
});

const ownKey = async (id: string): Promise<boolean> => (await nats.kv.messages.get(KV_KEYS.messageState(id))) !== null;
const record = async (id: string): Promise<boolean> => (await nats.kv.messages.get(KV_KEYS.messageBatch(batchOf(id)))) !== null;

describe('one request, one state record', () => {
  test('POST /sms/bulk: one record for the request; GET /sms/{id} reads each back at once; the lifecycle then writes keys of their own', async () => {
    const t = await createTenant({ balance: 10 });
    const body = ['+4915112345678', '+4915112345679', '+33612345678'].map((to, i) => ({ from: 'TestCo', to, text: `code ${i}`, clientId: `rec-${i}` }));
    const res = await api(`${V1}/sms/bulk`, { token: t.token, body });
    expect(res.status).toBe(201);
    const entities = (res.body as { entities: Array<{ id: string; to: string; status: string }> }).entities;
    expect(entities).toHaveLength(3);
    expect(new Set(entities.map((e) => batchOf(e.id))).size).toBe(1);
    expect(await record(entities[0]!.id)).toBe(true);
    for (const e of entities) {
      const read = await api(`${V1}/sms/${e.id}`, { token: t.token });
      expect(read.status).toBe(200);
      expect((read.body as { entity: { id: string; to: string } }).entity).toMatchObject({ id: e.id, to: e.to });
    }
    // The stack's lifecycle moves each message on: its first transition creates its own key.
    for (const e of entities) {
      const moved = await eventually(() => api(`${V1}/sms/${e.id}`, { token: t.token }), { what: 'the message to move on from queued', until: (r) => (r.body as { entity: { status: string } }).entity.status !== 'queued', timeoutMs: 20_000 });
      expect((moved.body as { entity: { status: string } }).entity.status).not.toBe('queued');
      expect(await ownKey(e.id)).toBe(true);
    }
  });

  test('a message read from the record is at revision 0: the first replace creates its key, a second writer at 0 loses, the key wins from then on', async () => {
    const ids = newIds(3);
    const messages = ids.map((id, i) => makeMessage({ id, orgId: 'state-batch', text: `m${i}` }));
    await states.putAll(messages);
    for (const id of ids) expect(await ownKey(id)).toBe(false);
    const read = await lifecycle.read(ids[1]!);
    expect(read).toEqual({ message: messages[1], revision: 0 });
    const sent: SmsMessage = { ...messages[1]!, status: 'sent', updatedAt: new Date().toISOString() };
    const revision = await lifecycle.replace(sent, 0);
    expect(revision).toBeGreaterThan(0);
    expect(await lifecycle.replace({ ...messages[1]!, status: 'canceled' }, 0)).toBeNull();
    expect(await lifecycle.read(ids[1]!)).toEqual({ message: sent, revision });
    expect(await states.get(ids[1]!)).toEqual(sent);
    expect(await states.get(ids[0]!)).toEqual(messages[0]);
    expect(await states.get(`${ids[0]!.slice(0, 34)}ff`)).toBeNull();
  });

  test('a request whose ids are of several batches, or whose states are too large for one record, keeps a key per message', async () => {
    const mixed = [makeMessage({ id: newId() }), makeMessage({ id: newId() })];
    await states.putAll(mixed);
    for (const m of mixed) {
      expect(await ownKey(m.id)).toBe(true);
      expect(await states.get(m.id)).toEqual(m);
    }
    const long = '€'.repeat(1600);
    const large = newIds(100).map((id) => makeMessage({ id, text: long, deliveredText: long }));
    await states.putAll(large);
    expect(await record(large[0]!.id)).toBe(false);
    for (const m of [large[0]!, large[99]!]) {
      expect(await ownKey(m.id)).toBe(true);
      expect(await states.get(m.id)).toEqual(m);
    }
  });
});

describe('single sends of one turn, one state record', () => {
  const ownKey = async (id: string): Promise<boolean> => (await nats.kv.messages.get(KV_KEYS.messageState(id))) !== null;
  const hasRecord = async (id: string): Promise<boolean> => (await nats.kv.messages.get(KV_KEYS.messageBatch(batchOf(id)))) !== null;
  const single = (orgId: string): SmsMessage => makeMessage({ id: newIds(1)[0] as string, orgId });

  test('concurrent single sends share one record; one alone in its turn gets its own key', async () => {
    const sent = Array.from({ length: 5 }, () => single('turn-a'));
    expect(new Set(sent.map((m) => batchOf(m.id))).size).toBe(1);
    await Promise.all(sent.map((m) => states.putAll([m])));
    expect(await hasRecord(sent[0]!.id)).toBe(true);
    for (const m of sent) {
      expect(await ownKey(m.id)).toBe(false);
      expect(await states.get(m.id)).toEqual(m);
      expect(await lifecycle.read(m.id)).toEqual({ message: m, revision: 0 });
    }
    await new Promise((resolve) => setImmediate(resolve));
    const alone = single('turn-b');
    await states.putAll([alone]);
    expect(await hasRecord(alone.id)).toBe(false);
    expect(await ownKey(alone.id)).toBe(true);
    expect(await states.get(alone.id)).toEqual(alone);
  });

  test('a message of a batch whose record was written already gets its own key, and the record is never replaced', async () => {
    const early = [single('late-a'), single('late-a')];
    const late = single('late-a');
    await Promise.all(early.map((m) => states.putAll([m])));
    expect(await hasRecord(early[0]!.id)).toBe(true);
    await states.putAll([late]);
    expect(await ownKey(late.id)).toBe(true);
    for (const m of [...early, late]) expect(await states.get(m.id)).toEqual(m);
  });

  test('a batch whose record another writer created: keys of their own, the other record kept', async () => {
    const [mine1, mine2, theirs] = newIds(3).map((id) => makeMessage({ id, orgId: 'other-writer' })) as [SmsMessage, SmsMessage, SmsMessage];
    // Another process wrote a record for this batch first (it holds only `theirs`).
    await new KvMessageStates(nats.pipeline).putAll([theirs, makeMessage({ id: `${batchOf(theirs.id)}ff`, orgId: 'other-writer' })]);
    await states.putAll([mine1, mine2]);
    expect(await ownKey(mine1.id)).toBe(true);
    expect(await ownKey(mine2.id)).toBe(true);
    expect(await states.get(theirs.id)).toEqual(theirs);
    expect(await states.get(mine1.id)).toEqual(mine1);
  });
});

describe('a server with a smaller max_payload', () => {
  // A nats-server of its own, configured as an operator might (64 KiB instead of 1 MiB).
  let server: SmallPayloadNats;
  let small: Nats;

  beforeAll(async () => {
    server = await startSmallPayloadNats('small-payload-test');
    small = server.nats;
  }, 60_000);

  afterAll(async () => {
    await server.stop();
  });

  test('keeps a record under half of it, and a key per message beyond', async () => {
    expect(small.pipeline.bodyLimit(512 * 1024)).toBe(32 * 1024);
    const smallStates = new KvMessageStates(small.pipeline);
    const has = async (key: string): Promise<boolean> => (await small.kv.messages.get(key)) !== null;
    const few = newIds(10).map((id) => makeMessage({ id }));
    await smallStates.putAll(few);
    expect(await has(KV_KEYS.messageBatch(batchOf(few[0]!.id)))).toBe(true);
    // 100 messages of ~700 bytes: a 70 KB record, over the 32 KiB limit (and over the server's 64 KiB).
    const many = newIds(100).map((id) => makeMessage({ id }));
    await smallStates.putAll(many);
    expect(await has(KV_KEYS.messageBatch(batchOf(many[0]!.id)))).toBe(false);
    for (const m of [many[0]!, many[99]!]) expect(await smallStates.get(m.id)).toEqual(m);
  });
});
