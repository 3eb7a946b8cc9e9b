// One request's message states in one KV record (core/bus/state-batch.ts) and the ids that
// name it (core/ids.ts newIds): ids of a request share their batch and stay time-ordered valid
// UUIDv7s; a message is found in the record by its id alone, never by text quoted in another.
import fc from 'fast-check';
import { findInStateBatch, KV_KEYS, stateBatchRecord } from '../../core/bus';
import { batchOf, idTime, isId, newId, newIds } from '../../core/ids';
import { StateBatches } from '../../stores/state-batches';
import { makeMessage } from '../../support/message-rows';

const json = (m: object): Buffer => Buffer.from(JSON.stringify(m));

describe('ids of one request', () => {
  it('gives many items ids that share a batch, in item order', () => {
    const ids = newIds(100);
    expect(ids).toHaveLength(100);
    expect(new Set(ids).size).toBe(100);
    for (const id of ids) {
      expect(isId(id)).toBe(true);
      expect(batchOf(id)).toBe(batchOf(ids[0] as string));
    }
    expect([...ids].sort()).toEqual(ids);
    expect(idTime(ids[99] as string)).toBe(idTime(ids[0] as string));
  });

  it('orders the ids of successive bulks by creation, and never lets two bulks share a batch', () => {
    const requests = Array.from({ length: 200 }, () => newIds(2 + (Math.floor(Math.random() * 99))));
    const all = requests.flat();
    expect([...all].sort()).toEqual(all);
    expect(new Set(requests.map((ids) => batchOf(ids[0] as string))).size).toBe(200);
    expect(newId() > (all.at(-1) as string)).toBe(true);
  });

  it('gives the single items of one event-loop turn ids of one batch, in order, and the next turn a later batch', async () => {
    const turn = Array.from({ length: 300 }, () => newIds(1)[0] as string);
    for (const id of turn) expect(isId(id)).toBe(true);
    expect(new Set(turn).size).toBe(300);
    expect([...turn].sort()).toEqual(turn);
    // 256 ids fill a batch; the rest open the next one.
    expect(new Set(turn.map(batchOf)).size).toBe(2);
    expect(batchOf(turn[255] as string)).toBe(batchOf(turn[0] as string));
    await new Promise((resolve) => setImmediate(resolve));
    const next = newIds(1)[0] as string;
    expect(batchOf(next)).not.toBe(batchOf(turn[299] as string));
    expect(next > (turn[299] as string)).toBe(true);
  });

  it('refuses more ids than a batch can name', () => {
    expect(() => newIds(257)).toThrow(RangeError);
    expect(newIds(256)).toHaveLength(256);
  });

  it('names the record by the batch', () => {
    expect(KV_KEYS.messageBatch(batchOf('0192f3a4-5b6c-7d8e-9f01-23456789ab07'))).toBe('smsb.0192f3a4-5b6c-7d8e-9f01-23456789ab');
  });
});

describe('the record of one request\'s states', () => {
  it('finds each message by its id, and nothing for an id it does not hold', () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: 'grapheme' }), { minLength: 2, maxLength: 30 }), (texts) => {
      const ids = newIds(texts.length);
      const messages = texts.map((text, i) => makeMessage({ id: ids[i] as string, text, deliveredText: text }));
      const record = stateBatchRecord(ids, messages.map(json));
      expect(record).not.toBeNull();
      messages.forEach((m) => expect(JSON.parse(Buffer.from(findInStateBatch(record as Buffer, m.id) as Uint8Array).toString())).toEqual(m));
      expect(findInStateBatch(record as Buffer, newId())).toBeNull();
    }));
  });

  it('does not take text that quotes another message for that message', () => {
    const [a, b, c] = newIds(3) as [string, string, string];
    const quoting = makeMessage({ id: a, text: `{"id":"${c}","status":"delivered"}` });
    const record = stateBatchRecord([a, b], [json(quoting), json(makeMessage({ id: b }))]) as Buffer;
    expect(findInStateBatch(record, c)).toBeNull();
    expect(JSON.parse(Buffer.from(findInStateBatch(record, a) as Uint8Array).toString())).toEqual(quoting);
  });

  it('is not made of messages whose JSON does not begin with their id', () => {
    const [a, b] = newIds(2) as [string, string];
    const { id, ...rest } = makeMessage({ id: b });
    expect(stateBatchRecord([a, b], [json(makeMessage({ id: a })), json({ ...rest, id })])).toBeNull();
    expect(stateBatchRecord([a, b], [json(makeMessage({ id: a })), json(makeMessage({ id: a }))])).toBeNull();
  });
});

describe('reading messages from their request\'s record (stores/state-batches.ts)', () => {
  const recordOf = (ids: readonly string[]): Buffer => stateBatchRecord(ids, ids.map((id) => json(makeMessage({ id })))) as Buffer;

  it('fetches a record once for concurrent and later reads of its messages', async () => {
    const ids = newIds(50);
    const fetched: string[] = [];
    const batches = new StateBatches(async (key) => { fetched.push(key); await new Promise((r) => setTimeout(r, 5)); return recordOf(ids); });
    const found = await Promise.all(ids.map((id) => batches.find(id)));
    expect(found.map((bytes) => (JSON.parse(Buffer.from(bytes as Uint8Array).toString()) as { id: string }).id)).toEqual(ids);
    expect(await batches.find(ids[7] as string)).not.toBeNull();
    expect(fetched).toEqual([KV_KEYS.messageBatch(batchOf(ids[0] as string))]);
  });

  it('does not remember a record that was not there, nor a failed fetch', async () => {
    const ids = newIds(2);
    let answer: () => Promise<Uint8Array | null> = async () => null;
    let calls = 0;
    const batches = new StateBatches(() => { calls += 1; return answer(); });
    expect(await batches.find(ids[0] as string)).toBeNull();
    answer = () => Promise.reject(new Error('bus down'));
    await expect(batches.find(ids[0] as string)).rejects.toThrow('bus down');
    answer = async () => recordOf(ids);
    expect(await batches.find(ids[1] as string)).not.toBeNull();
    expect(calls).toBe(3);
  });

  it('remembers a bounded number of records, the oldest going first', async () => {
    let calls = 0;
    const requests = Array.from({ length: 40 }, () => newIds(2));
    const remembering = new StateBatches(async (key) => { calls += 1; return recordOf(requests.find((ids) => key.endsWith(batchOf(ids[0] as string))) as string[]); });
    for (const ids of requests) await remembering.find(ids[0] as string);
    calls = 0;
    await remembering.find(requests[0]![1] as string);
    await remembering.find(requests[39]![1] as string);
    expect(calls).toBe(1);
  });
});
