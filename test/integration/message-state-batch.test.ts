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
import { eventually } from '../support/ingest';
import { makeMessage } from '../support/message-rows';
import { api, stack } from '../support/stack';
import { createTenant, V1 } from '../support/tenants';

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
      const moved = await eventually(() => api(`${V1}/sms/${e.id}`, { token: t.token }), (r) => (r.body as { entity: { status: string } }).entity.status !== 'queued', 20_000);
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
