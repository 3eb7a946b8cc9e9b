// The batch lifecycle's activities (activities/lifecycle-batch.ts) in MockActivityEnvironment
// over in-memory ports: what one dispatch and one settle of many messages write, publish, send.
import { MockActivityEnvironment } from '@temporalio/testing';
import { createBatchLifecycleActivities, WEBHOOK_CONCURRENCY, type BatchSettled } from '../../activities/lifecycle-batch';
import { KV_KEYS, SUBJECTS } from '../../core/bus/names';
import type { Token } from '../../core/accounts/types';
import type { DlrDelivery, Transition } from '../../core/sms/dlr';
import type { LifecycleOwner, VersionedMessage } from '../../core/sms/lifecycle-ports';
import type { SmsMessage } from '../../core/sms/message';
import { LifecycleWorld } from '../support/lifecycle-world';

const base: SmsMessage = {
  id: '', orgId: 'org-1', projectId: 'p-1', tokenId: 't-1', source: 'http', clientId: null, status: 'queued', statusCode: null,
  from: 'Acme', country: 'DE', to: '+4915112345678', normalizedTo: '+4915112345678', charsCount: 2, text: 'hi', deliveredText: 'hi', messagesCount: 1,
  encoding: 'GSM-7', unicode: false, allowUnicode: false, charged: true, pricePerSmsMicros: 75_000, priceUserMicros: 75_000, currency: 'EUR',
  createdAt: '2026-01-01T00:00:00.000Z', chargedAt: '2026-01-01T00:00:00.000Z', scheduledAt: null, sentAt: null, deliveredAt: null, updatedAt: '2026-01-01T00:00:00.000Z',
};
const tokens: Record<string, Token> = {
  't-1': { id: 't-1', orgId: 'org-1', webhook: { url: 'https://one.test/dlr', secret: 'shh' }, revokedAt: null } as unknown as Token,
  't-2': { id: 't-2', orgId: 'org-1', webhook: { url: 'https://two.test/dlr', secret: 'shh' }, revokedAt: null } as unknown as Token,
};
const OWNER: LifecycleOwner = { workflowId: 'smsb-a', runId: 'run-1' };

/** The shared in-memory ports, with messages added on the base state. */
class World extends LifecycleWorld {
  constructor() {
    super(tokens);
  }

  add(id: string, tokenId = 't-1'): void {
    this.states.set(id, { message: { ...base, id, tokenId }, revision: 1 });
  }
}

const transition = (messageId: string, seq: number, status: Transition['status'], code = 0): Transition => ({ messageId, seq, status, code, eventAt: `2026-01-01T00:00:0${seq}.000Z` });
const delivery = (tokenId: string, t: Transition): DlrDelivery => ({ tokenId, messageId: t.messageId, seq: t.seq, payload: { id: t.messageId, status: t.status, code: t.code, eventAt: t.eventAt } });

describe('batch lifecycle activities (docs/lifecycle.md)', () => {
  let world: World;
  let env: MockActivityEnvironment;
  beforeEach(() => {
    world = new World();
    env = new MockActivityEnvironment({ attempt: 1 });
  });
  const acts = () => createBatchLifecycleActivities(world.deps());

  test('dispatchBatch claims each message and hands over only those it holds (another batch, or no state: left out)', async () => {
    ['m1', 'm2', 'm3'].forEach((id) => world.add(id));
    world.owners.set('m2', { workflowId: 'smsb-other', runId: 'r' });
    expect(await env.run(acts().dispatchBatch, OWNER, ['m1', 'm2', 'm3', 'gone'])).toEqual(['m1', 'm3']);
    expect(world.published.map((p) => [p.subject, p.msgId])).toEqual([[SUBJECTS.carrierSubmit, 'submit-m1'], [SUBJECTS.carrierSubmit, 'submit-m3']]);
    expect(world.owners.get('m1')).toEqual(OWNER);
    // A retry of the same run keeps what it holds.
    expect(await env.run(acts().dispatchBatch, OWNER, ['m1'])).toEqual(['m1']);
  });

  test('settleBatch writes each state, publishes one status record per token and delivers each message in order', async () => {
    world.add('m1');
    world.add('m2', 't-2');
    const t1 = [transition('m1', 1, 'sent'), transition('m1', 2, 'delivered')];
    const t2 = [transition('m2', 1, 'sent')];
    const result = await env.run(acts().settleBatch, 'k1', [
      { tokenId: 't-1', transitions: t1, deliverNow: t1.map((t) => delivery('t-1', t)) },
      { tokenId: 't-2', transitions: t2, deliverNow: t2.map((t) => delivery('t-2', t)) },
    ]);
    expect(result).toEqual({ delivered: [2, 1], unattempted: [] });
    expect(world.states.get('m1')?.message).toMatchObject({ status: 'delivered', sentAt: t1[0]?.eventAt, deliveredAt: t1[1]?.eventAt });
    const status = world.published.filter((p) => p.subject.startsWith('sms.status.'));
    expect(status.map((p) => [p.subject, p.msgId])).toEqual([[SUBJECTS.smsStatus('t-1'), 'status-k1-t-1-0'], [SUBJECTS.smsStatus('t-2'), 'status-k1-t-2-0']]);
    expect(status[0]?.payload).toMatchObject({ messages: [{ id: 'm1' }], transitions: [{ seq: 1, tokenId: 't-1', projectId: 'p-1' }, { seq: 2 }] });
    expect(world.posts.filter((p) => p.url === 'https://one.test/dlr').map((p) => (JSON.parse(p.body) as { status: string }).status)).toEqual(['sent', 'delivered']);
    const attempts = world.published.filter((p) => p.subject === SUBJECTS.dlrAttempt);
    expect(attempts).toHaveLength(1);
    expect((attempts[0]?.payload as { attempts: unknown[] }).attempts).toHaveLength(3);
  });

  test('a failed first attempt stops that message; messages of that token not yet started are not attempted in this settle', async () => {
    const ids = Array.from({ length: WEBHOOK_CONCURRENCY + 50 }, (_, i) => `m${i}`);
    ids.forEach((id) => world.add(id));
    world.add('other', 't-2');
    world.down.add('https://one.test/dlr');
    const item = (id: string, tokenId = 't-1') => {
      const ts = [transition(id, 1, 'sent'), transition(id, 2, 'delivered')];
      return { tokenId, transitions: ts, deliverNow: ts.map((t) => delivery(tokenId, t)) };
    };
    const result: BatchSettled = await env.run(acts().settleBatch, 'k2', [...ids.map((id) => item(id)), item('other', 't-2')]);
    expect(result.delivered).toEqual([...ids.map(() => 0), 2]);
    // The first lanes' attempts were in flight together; the rest of the token's messages wait for their retry schedule.
    expect(world.posts.filter((p) => p.url === 'https://one.test/dlr')).toHaveLength(WEBHOOK_CONCURRENCY);
    expect(result.unattempted).toEqual(ids.slice(WEBHOOK_CONCURRENCY).map((_, i) => WEBHOOK_CONCURRENCY + i));
    const rows = world.published.filter((p) => p.subject === SUBJECTS.dlrAttempt).flatMap((p) => (p.payload as { attempts: Array<{ outcome: string; responseStatus: number | null }> }).attempts);
    expect(rows.filter((r) => r.outcome === 'failed')).toHaveLength(WEBHOOK_CONCURRENCY);
    expect(rows.every((r) => r.outcome === 'delivered' || r.responseStatus === 503)).toBe(true);
  });

  test("a message's next settle in the same process writes by compare-and-set without reading it again; a stale memory is read again", async () => {
    world.add('m1');
    const activities = acts();
    await env.run(activities.settleBatch, 'k4', [{ tokenId: 't-1', transitions: [transition('m1', 1, 'sent')], deliverNow: [] }]);
    expect(world.reads).toBe(1);
    await env.run(activities.settleBatch, 'k5', [{ tokenId: 't-1', transitions: [transition('m1', 2, 'buffered')], deliverNow: [] }]);
    expect(world.reads).toBe(1);
    const current = world.states.get('m1') as VersionedMessage;
    world.states.set('m1', { ...current, revision: current.revision + 5 });
    await env.run(activities.settleBatch, 'k6', [{ tokenId: 't-1', transitions: [transition('m1', 3, 'delivered')], deliverNow: [] }]);
    expect(world.reads).toBe(2);
    expect(world.states.get('m1')?.message.status).toBe('delivered');
  });

  test("the hand-off's read of a message serves its first settle in the same process: one read per message", async () => {
    ['m1', 'm2'].forEach((id) => world.add(id));
    const activities = acts();
    await env.run(activities.dispatchBatch, OWNER, ['m1', 'm2']);
    expect(world.reads).toBe(2);
    await env.run(activities.settleBatch, 'k7', ['m1', 'm2'].map((id) => ({ tokenId: 't-1', transitions: [transition(id, 1, 'sent')], deliverNow: [] })));
    expect(world.reads).toBe(2);
    expect(world.states.get('m2')?.message.status).toBe('sent');
  });

  test('DESIGN §4: a refund in a settle is credited once, however often the settle runs', async () => {
    world.add('m1');
    const ts = [transition('m1', 1, 'error', 11)];
    const item = { tokenId: 't-1', transitions: ts, deliverNow: [], refund: { orgId: 'org-1', micros: 75_000 } };
    await env.run(acts().settleBatch, 'k3', [item]);
    await env.run(acts().settleBatch, 'k3', [item]);
    expect(world.credits).toEqual([['org-1', 75_000]]);
    expect(world.claimed.has(KV_KEYS.refund('m1'))).toBe(true);
  });
});
