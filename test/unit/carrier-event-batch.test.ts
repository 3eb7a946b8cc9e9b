// carrier.events written in batches (gateways/carrier/event-batch.ts) and read back by the
// lifecycle bridge, one stream message settled once all its parts are (PartedMessage in
// pipelines/lifecycle-bridge.ts). No engine: the publish is a recording function.
import { decodeCarrierEvents } from '../../core/bus';
import type { CarrierEvent } from '../../core/carrier';
import { batchMsgId, CarrierEventBatcher, EVENTS_PER_MESSAGE } from '../../gateways/carrier/event-batch';
import { PartedMessage } from '../../pipelines/lifecycle-bridge';

const receipt = (n: number): CarrierEvent => ({ kind: 'receipt', messageId: `m${n}`, segment: 0, segments: 1, carrier: 'sim', carrierMessageId: `c${n}`, state: 'DELIVRD', err: 0, at: '2026-11-27T00:00:00.000Z' });

function recorder(fail?: Error): { batches: Array<{ events: readonly CarrierEvent[]; msgID: string }>; publish: (data: string, msgID: string) => Promise<unknown> } {
  const batches: Array<{ events: readonly CarrierEvent[]; msgID: string }> = [];
  return {
    batches,
    publish: (data, msgID) => {
      batches.push({ events: decodeCarrierEvents(new TextEncoder().encode(data)), msgID });
      return fail ? Promise.reject(fail) : Promise.resolve();
    },
  };
}

describe('carrier.events batches (CarrierEventBatcher)', () => {
  test('the events added in one turn go as one stream message, in order, and each caller learns when it is written', async () => {
    const { batches, publish } = recorder();
    const batcher = new CarrierEventBatcher(publish);
    const written = [1, 2, 3].map((n) => batcher.add(receipt(n), `sim:c${n}:DELIVRD`));
    expect(batches).toHaveLength(0);
    await Promise.all(written);
    expect(batches).toEqual([{ events: [receipt(1), receipt(2), receipt(3)], msgID: batchMsgId(['sim:c1:DELIVRD', 'sim:c2:DELIVRD', 'sim:c3:DELIVRD']) }]);
    await batcher.add(receipt(4), 'sim:c4:DELIVRD');
    expect(batches.map((b) => b.events.length)).toEqual([3, 1]);
  });

  test(`more than ${EVENTS_PER_MESSAGE} events in one turn are split, none left behind`, async () => {
    const { batches, publish } = recorder();
    const batcher = new CarrierEventBatcher(publish);
    await Promise.all(Array.from({ length: EVENTS_PER_MESSAGE * 2 + 1 }, (_, n) => batcher.add(receipt(n), `k${n}`)));
    expect(batches.map((b) => b.events.length)).toEqual([EVENTS_PER_MESSAGE, EVENTS_PER_MESSAGE, 1]);
    expect(batches.flatMap((b) => b.events.map((e) => e.messageId))).toEqual(Array.from({ length: EVENTS_PER_MESSAGE * 2 + 1 }, (_, n) => `m${n}`));
  });

  test('a failed publish rejects every event of its batch (their writers retry or answer the SMSC with a temporary error)', async () => {
    const { publish } = recorder(new Error('no responders'));
    const batcher = new CarrierEventBatcher(publish);
    const results = await Promise.allSettled([batcher.add(receipt(1), 'a'), batcher.add(receipt(2), 'b')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  test('the msgID names the events it holds: the same grouping repeats it, another grouping does not', () => {
    expect(batchMsgId(['a', 'b'])).toBe(batchMsgId(['a', 'b']));
    expect(batchMsgId(['a', 'b'])).not.toBe(batchMsgId(['a']));
    expect(batchMsgId(['a', 'b'])).not.toBe(batchMsgId(['b', 'a']));
  });
});

describe('a carrier.events stream message in parts (PartedMessage)', () => {
  const msg = (): { acks: number; naks: number[]; ack(): void; nak(ms?: number): void } => ({
    acks: 0, naks: [], ack() { this.acks += 1; }, nak(ms = 0) { this.naks.push(ms); },
  });

  test('acknowledged once, after its last part is done', () => {
    const m = msg();
    const parted = new PartedMessage(m, 3);
    parted.done();
    parted.done();
    expect(m.acks).toBe(0);
    parted.done();
    expect(m).toMatchObject({ acks: 1, naks: [] });
  });

  test('a failed part naks it once, and it is never acknowledged after (it comes again whole)', () => {
    const m = msg();
    const parted = new PartedMessage(m, 3);
    parted.done();
    parted.fail(1000);
    parted.fail(1000);
    parted.done();
    expect(m).toMatchObject({ acks: 0, naks: [1000] });
  });
});
