// The lifecycle activities alone, in MockActivityEnvironment over in-memory ports
// (samples-typescript's third kind of test): what each writes, publishes and sends.
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createLifecycleActivities } from '../../activities/lifecycle';
import { KV_KEYS, SUBJECTS } from '../../core/bus/names';
import type { Token } from '../../core/accounts/types';
import type { DlrDelivery, Transition } from '../../core/sms/dlr';
import type { WebhookRequest } from '../../core/sms/lifecycle-ports';
import type { SmsMessage } from '../../core/sms/message';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { ATTEMPT_HEADER } from '../../core/sms/webhook-signature';
import { LifecycleWorld } from '../support/lifecycle-world';

const ID = '01900000-0000-7000-8000-000000000001';
const message: SmsMessage = {
  id: ID, orgId: 'org-1', projectId: 'p-1', tokenId: 't-1', source: 'http', clientId: 'c-1', status: 'queued', statusCode: null,
  from: 'Acme', country: 'DE', to: '+4915112345678', normalizedTo: '+4915112345678', charsCount: 2, text: 'hi', deliveredText: 'hi', messagesCount: 1,
  encoding: 'GSM-7', unicode: false, allowUnicode: false, charged: true, pricePerSmsMicros: 75_000, priceUserMicros: 75_000, currency: 'EUR',
  createdAt: '2026-01-01T00:00:00.000Z', chargedAt: '2026-01-01T00:00:00.000Z', scheduledAt: null, sentAt: null, deliveredAt: null, updatedAt: '2026-01-01T00:00:00.000Z',
};
const token = { id: 't-1', orgId: 'org-1', webhook: { url: 'https://example.test/dlr', secret: 'shh' }, revokedAt: null } as unknown as Token;

const transition = (seq: number, status: Transition['status'], code = 0): Transition => ({ messageId: ID, seq, status, code, eventAt: `2026-01-01T00:00:0${seq}.000Z` });
const delivery = (t: Transition): DlrDelivery => ({ tokenId: 't-1', messageId: ID, seq: t.seq, payload: { id: ID, clientId: 'c-1', status: t.status, code: t.code, eventAt: t.eventAt } });

describe('lifecycle activities in MockActivityEnvironment (docs/lifecycle.md)', () => {
  let world: LifecycleWorld;
  let env: MockActivityEnvironment;
  beforeEach(() => {
    world = new LifecycleWorld({ [token.id]: token });
    world.states.set(ID, { message, revision: 1 });
    env = new MockActivityEnvironment({ attempt: 3 });
  });
  const acts = () => createLifecycleActivities(world.deps());

  test('dispatch hands the message to the carrier connector once (msgID submit-<id>)', async () => {
    await env.run(acts().dispatch, ID);
    expect(world.published).toEqual([{ subject: SUBJECTS.carrierSubmit, msgId: `submit-${ID}`, payload: expect.objectContaining({ messageId: ID, to: message.normalizedTo, segments: 1 }) }]);
  });

  test('a message without state fails without retry (MessageStateMissing)', async () => {
    world.states.delete(ID);
    await expect(env.run(acts().dispatch, ID)).rejects.toMatchObject({ type: 'MessageStateMissing', nonRetryable: true } satisfies Partial<ApplicationFailure>);
  });

  test('settle writes the state by compare-and-set, publishes one status record and delivers the DLRs in order', async () => {
    world.conflicts = 1;
    const ts = [transition(1, 'sent'), transition(2, 'delivered')];
    expect(await env.run(acts().settle, 't-1', ts, ts.map(delivery))).toBe(2);
    expect(world.states.get(ID)?.message).toMatchObject({ status: 'delivered', statusCode: 0, sentAt: ts[0]?.eventAt, deliveredAt: ts[1]?.eventAt });
    const status = world.published.find((p) => p.subject === SUBJECTS.smsStatus('t-1'));
    expect(status?.msgId).toBe(`status-${ID}-1-2`);
    expect(status?.payload).toMatchObject({ transitions: [{ seq: 1, orgId: 'org-1', projectId: 'p-1', tokenId: 't-1', clientId: 'c-1' }, { seq: 2 }] });
    expect(world.posts.map((p) => JSON.parse(p.body) as { status: string })).toMatchObject([{ status: 'sent' }, { status: 'delivered' }]);
  });

  test('settle never writes a state backwards (a late retry of an earlier settle)', async () => {
    world.states.set(ID, { message: { ...message, status: 'delivered' }, revision: 7 });
    await env.run(acts().settle, 't-1', [transition(1, 'sent')], []);
    expect(world.states.get(ID)?.message.status).toBe('delivered');
  });

  test('settle stops at the first failed webhook and says how many went', async () => {
    world.answer = 503;
    const ts = [transition(1, 'sent'), transition(2, 'delivered')];
    expect(await env.run(acts().settle, 't-1', ts, ts.map(delivery))).toBe(0);
    expect(world.posts).toHaveLength(1);
    const attempts = world.published.filter((p) => p.subject === SUBJECTS.dlrAttempt);
    expect(attempts[0]?.payload).toMatchObject({ attempts: [{ seq: 1, attempt: 1, outcome: 'failed', responseStatus: 503 }] });
  });

  test('spec 1 §6: each attempt is signed (Standard Webhooks: HMAC over "<id>.<timestamp>.<body>") and numbered from the activity attempt', async () => {
    await env.run(acts().deliverDlr, delivery(transition(1, 'sent')));
    const post = world.posts[0] as WebhookRequest;
    expect(post.headers[ATTEMPT_HEADER]).toBe('4');
    // The standardwebhooks library verifies it; an earlier release's secret ('shh') keys the HMAC with its bytes.
    expect(new StandardWebhook(Buffer.from('shh'), { format: 'raw' }).verify(post.body, post.headers)).toEqual(JSON.parse(post.body));
  });

  test('a dead letter is kept under its token, message and sequence', async () => {
    await env.run(acts().deadLetter, delivery(transition(2, 'delivered')), 'window closed');
    expect(world.dead).toEqual([expect.objectContaining({ tokenId: 't-1', messageId: ID, seq: 2, reason: 'window closed' })]);
  });

  test('DESIGN §4: a refund is credited once, however often the activity runs', async () => {
    await env.run(acts().refund, ID, 'org-1', 75_000);
    await env.run(acts().refund, ID, 'org-1', 75_000);
    expect(world.credits).toEqual([['org-1', 75_000]]);
    expect(world.claimed.has(KV_KEYS.refund(ID))).toBe(true);
    expect(world.pendingRefunds.size).toBe(0);
  });

  test('DESIGN §4: a refund whose balance write applied but whose answer was lost (nats-server restarting) is credited once when the activity runs again, neither lost nor paid twice', async () => {
    world.lostRefundAnswers = 1;
    await expect(env.run(acts().refund, ID, 'org-1', 75_000)).rejects.toThrow('no publish acknowledgement');
    expect(world.claimed.has(KV_KEYS.refund(ID))).toBe(false);
    await env.run(acts().refund, ID, 'org-1', 75_000);
    await env.run(acts().refund, ID, 'org-1', 75_000);
    expect(world.credits).toEqual([['org-1', 75_000]]);
    expect(world.claimed.has(KV_KEYS.refund(ID))).toBe(true);
    expect(world.pendingRefunds.size).toBe(0);
  });
});
