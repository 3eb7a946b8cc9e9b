// A clientId retry that finds its original message (core/sms/acceptance.ts; spec 1 §2.1
// clientId, docs/acceptance.md "Charges held until the stream has them"), over in-memory ports:
// the retry reads the message's state, then its hold. A queued message whose hold is gone was
// either settled (the stream has it: replayed) or refunded by the charge settler, which cancels
// the message before it refunds (pipelines/charge-settler.ts): read again, the state tells which.
import type { Price } from '../../core/accounts/types';
import { CLAIM_TAKEOVER_MS, SmsAcceptance, type Submitter } from '../../core/sms/acceptance';
import type { SmsMessage } from '../../core/sms/message';
import { idAt, makeMessage } from '../../support/message-rows';

const submitter: Submitter = { orgId: 'org-a', projectId: 'project-1', tokenId: 't1', source: 'http', currency: 'EUR' };
const item = { from: 'TestCo', to: '+4915112345678', text: 'Hello', clientId: 'order-1' };

/**
 * An acceptance whose clientId is held by `original`; `reads` answers the state reads in turn (the
 * last one repeats), `claims` the clientId claims likewise (the holder's id, or null: claimed now);
 * `refused`: the bus refuses every enqueue. `events`: credits and releases, in order.
 */
function world(original: SmsMessage, reads: ReadonlyArray<SmsMessage | null>, held: boolean, options: { claims?: ReadonlyArray<string | null>; refused?: boolean } = {}): { acceptance: SmsAcceptance; queued: SmsMessage[]; charged: number[]; takenOver: string[]; events: string[] } {
  const queued: SmsMessage[] = [];
  const charged: number[] = [];
  const takenOver: string[] = [];
  const events: string[] = [];
  const claims = options.claims ?? [original.id];
  let read = 0;
  let claimed = 0;
  const acceptance = new SmsAcceptance({
    prices: { price: (_o: string, _k: string, country: string): Price | undefined => (country === 'DE' ? { country, currency: 'EUR', priceMicros: 75_000 } : undefined) },
    funds: {
      charge: async (_o: string, micros: number) => { if (micros > 0) charged.push(micros); return true; },
      credit: async () => { events.push('credit'); },
      settle: () => undefined,
      isHeld: async () => held,
    },
    states: { putAll: async () => undefined, get: async () => reads[Math.min(read++, reads.length - 1)] ?? null },
    clientIds: {
      claim: async () => claims[Math.min(claimed++, claims.length - 1)] ?? null,
      takeOver: async (_scope: string, _clientId: string, heldBy: string) => { takenOver.push(heldBy); return true; },
      release: async () => { events.push('release'); },
    },
    queue: { enqueue: async (ms: readonly SmsMessage[]) => { if (options.refused) throw new Error('no responders'); queued.push(...ms); } },
    optOuts: { isOptedOut: () => false },
  });
  return { acceptance, queued, charged, takenOver, events };
}

describe('a clientId retry finding its original message (spec 1 §2.1)', () => {
  const original = makeMessage({ orgId: 'org-a', projectId: 'project-1', status: 'queued', clientId: 'order-1' });

  test('queued, its hold settled (the stream has it): the original is answered, nothing charged again', async () => {
    const { acceptance, queued, charged, takenOver } = world(original, [original], false);
    const answer = await acceptance.submitOne(submitter, item);
    expect(answer.id).toBe(original.id);
    expect(charged).toEqual([]);
    expect(queued).toEqual([]);
    expect(takenOver).toEqual([]);
  });

  test('queued when read, then refunded and canceled by the charge settler before its hold was read: a new message, charged and queued, not a replay of one that is never sent', async () => {
    const canceled: SmsMessage = { ...original, status: 'canceled', statusCode: 99, charged: false };
    const { acceptance, queued, charged, takenOver } = world(original, [original, canceled], false);
    const answer = await acceptance.submitOne(submitter, item);
    expect(answer.id).not.toBe(original.id);
    expect(answer).toMatchObject({ status: 'queued', clientId: 'order-1', charged: true });
    expect(charged).toEqual([75_000]);
    expect(queued.map((m) => m.id)).toEqual([answer.id]);
    expect(takenOver).toEqual([original.id]);
  });

  test('queued, its hold gone because its own request gave up and credited the charge back (the bus refused the publish), its claim released: a new message, not a replay of one that is never sent', async () => {
    const { acceptance, queued, charged, takenOver } = world(original, [original], false, { claims: [original.id, null] });
    const answer = await acceptance.submitOne(submitter, item);
    expect(answer.id).not.toBe(original.id);
    expect(charged).toEqual([75_000]);
    expect(queued.map((m) => m.id)).toEqual([answer.id]);
    expect(takenOver).toEqual([]);
  });

  test('a request whose messages the bus refused releases its clientIds before it credits the charge back (a retry that sees the hold gone then finds the claim free)', async () => {
    const { acceptance, events } = world(original, [null], false, { claims: [null], refused: true });
    await expect(acceptance.submitOne(submitter, item)).rejects.toMatchObject({ code: 'INTERNAL' });
    expect(events).toEqual(['release', 'credit']);
  });

  test('scheduled, its hold settled: the original is answered', async () => {
    const scheduled: SmsMessage = { ...original, status: 'scheduled', scheduledAt: '2026-11-27T12:00:00.000Z' };
    const { acceptance, charged } = world(scheduled, [scheduled], false);
    expect((await acceptance.submitOne(submitter, item)).id).toBe(original.id);
    expect(charged).toEqual([]);
  });

  test('queued, its charge still held past the takeover age (published, the ack lost, the charge settler not yet caught up): 500, not a second message; only the settler decides whether the stream has it', async () => {
    const old: SmsMessage = { ...original, id: idAt(Date.now() - CLAIM_TAKEOVER_MS - 5_000) };
    const { acceptance, queued, charged, takenOver } = world(old, [old], true);
    await expect(acceptance.submitOne(submitter, item)).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/clientId "order-1" is held by a request still being accepted; retry shortly .*charge is still held/) });
    expect(charged).toEqual([]);
    expect(queued).toEqual([]);
    expect(takenOver).toEqual([]);
  });

  test('moved on (delivered): answered without reading its hold again', async () => {
    const delivered: SmsMessage = { ...original, status: 'delivered' };
    const { acceptance, charged } = world(delivered, [delivered], true);
    expect(await acceptance.submitOne(submitter, item)).toMatchObject({ id: original.id, status: 'delivered' });
    expect(charged).toEqual([]);
  });
});
