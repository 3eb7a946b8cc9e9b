// Workflows with mocked activities (samples-typescript's second kind of test): the real
// workflow code on the test stack's Temporal server, on a task queue of its own, with
// activities that only record what they were asked. docs/lifecycle.md; spec 1 §3, §6.
import { randomUUID } from 'node:crypto';
import type { LifecycleActivities } from '../../activities/lifecycle';
import type { BatchLifecycleActivities } from '../../activities/lifecycle-batch';
import type { ProbeActivities } from '../../activities/probe';
import { WORKFLOW_IDS } from '../../core/bus/temporal';
import type { CarrierEvent } from '../../core/carrier/types';
import type { DlrDelivery, Transition } from '../../core/sms/dlr';
import type { WebhookSchedule } from '../../workflows/presets';
import { carrierEventSignal, smsLifecycle } from '../../workflows/sms-lifecycle';
import type { BatchMember } from '../../workflows/batch-track';
import { batchEventsSignal, batchStatusQuery, smsBatchLifecycle, type BatchInput } from '../../workflows/sms-batch-lifecycle';
import type { LifecycleInput } from '../../workflows/types';
import { eventually } from '../../support/eventually';
import { mockedWorker, type MockedWorker } from '../support/mocked-worker';

const SCHEDULE: WebhookSchedule = { initialIntervalMs: 100, maximumIntervalMs: 200, retryHours: 1, attemptTimeoutMs: 1000 };

/** What the mocked activities saw, and how the webhook behaves. */
class Recorder {
  readonly dispatched: string[] = [];
  readonly transitions: Transition[] = [];
  readonly delivered: DlrDelivery[] = [];
  readonly refunds: Array<{ messageId: string; micros: number }> = [];
  readonly dead: string[] = [];
  /** Webhook attempts that fail before one succeeds. */
  failures = 0;
  /** Messages whose webhook always fails. */
  readonly failing = new Set<string>();
  /** Scheduled messages released at their time (releaseScheduled), and those whose recipient opted out. */
  readonly released: string[] = [];
  readonly optedOut = new Set<string>();
  /** Messages another batch already holds (dispatchBatch leaves them out). */
  readonly heldElsewhere = new Set<string>();

  private attempt(delivery: DlrDelivery): void {
    if (this.failing.has(delivery.messageId)) throw new Error('webhook answered 503');
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('webhook answered 503');
    }
    this.delivered.push(delivery);
  }

  activities(): LifecycleActivities & BatchLifecycleActivities & ProbeActivities {
    return {
      dispatchBatch: async (_owner, ids) => {
        const owned = ids.filter((id) => !this.heldElsewhere.has(id));
        this.dispatched.push(...owned);
        return owned;
      },
      settleBatch: async (_key, items) => {
        const delivered = items.map((item) => {
          this.transitions.push(...item.transitions);
          if (item.refund) this.refunds.push({ messageId: item.transitions[0]?.messageId ?? '', micros: item.refund.micros });
          let count = 0;
          for (const d of item.deliverNow) {
            try { this.attempt(d); } catch { break; }
            count += 1;
          }
          return count;
        });
        return { delivered, unattempted: [] };
      },
      dispatch: async (messageId) => { this.dispatched.push(messageId); },
      settle: async (_tokenId, transitions, deliverNow) => {
        this.transitions.push(...transitions);
        let delivered = 0;
        for (const d of deliverNow) {
          try { this.attempt(d); } catch { break; }
          delivered += 1;
        }
        return delivered;
      },
      deliverDlrOnce: async (delivery) => { this.attempt(delivery); },
      deliverDlr: async (delivery) => { this.attempt(delivery); },
      deadLetter: async (delivery) => { this.dead.push(`${delivery.messageId}#${delivery.seq}`); },
      refund: async (messageId, _orgId, micros) => { this.refunds.push({ messageId, micros }); },
      releaseScheduled: async (messageId) => { this.released.push(messageId); return this.optedOut.has(messageId) ? 'opted-out' : 'send'; },
      describeWorker: async () => 'mocked',
      noop: async () => undefined,
    };
  }
}

/** A worker of the real workflows over a Recorder's mocked activities, on its own task queue, for one describe block. */
function recordedWorker(prefix: string): MockedWorker & { readonly recorder: Recorder } {
  const recorder = new Recorder();
  // mockedWorker fills in `env` before the tests: the same object is handed back, not a copy.
  return Object.assign(mockedWorker(prefix, recorder.activities()), { recorder });
}

describe('smsLifecycle with mocked activities (docs/lifecycle.md)', () => {
  const mocked = recordedWorker('mocked');
  const { taskQueue } = mocked;

  const input = (overrides: Partial<LifecycleInput> = {}): LifecycleInput & { webhook: WebhookSchedule } => ({
    messageId: randomUUID(), orgId: 'org-1', tokenId: 'token-1', clientId: null, segments: 1, chargedMicros: 75_000,
    validityMs: 60_000, webhooks: true, webhook: SCHEDULE, ...overrides,
  });
  const event = (messageId: string, e: Partial<CarrierEvent> & Pick<CarrierEvent, 'kind'>): CarrierEvent =>
    ({ messageId, segment: 0, segments: 1, carrier: 'sim', carrierMessageId: 'c-1', at: new Date().toISOString(), ...e }) as CarrierEvent;
  const start = (args: LifecycleInput & { webhook: WebhookSchedule }) =>
    mocked.env.client.workflow.start(smsLifecycle, { taskQueue, workflowId: WORKFLOW_IDS.lifecycle(args.messageId), args: [args] });
  const statusesOf = (messageId: string): string[] => mocked.recorder.transitions.filter((t) => t.messageId === messageId).map((t) => t.status);

  test('§3: hands the message over, applies the carrier reports in order and delivers one DLR per transition', async () => {
    const args = input();
    const handle = await start(args);
    await handle.signal(carrierEventSignal, [event(args.messageId, { kind: 'submitted' }), event(args.messageId, { kind: 'receipt', state: 'ENROUTE', err: 0 })]);
    await handle.signal(carrierEventSignal, event(args.messageId, { kind: 'receipt', state: 'DELIVRD', err: 0 }));
    expect(await handle.result()).toEqual({ status: 'delivered', code: 0 });
    expect(mocked.recorder.dispatched).toContain(args.messageId);
    expect(statusesOf(args.messageId)).toEqual(['sent', 'buffered', 'delivered']);
    expect(mocked.recorder.delivered.filter((d) => d.messageId === args.messageId).map((d) => [d.seq, d.payload.status])).toEqual([[1, 'sent'], [2, 'buffered'], [3, 'delivered']]);
    expect(mocked.recorder.refunds.filter((r) => r.messageId === args.messageId)).toEqual([]);
  }, 30_000);

  test('DESIGN §4: no final report within the validity period ends as expired, code 1', async () => {
    const args = input({ validityMs: 1500 });
    const handle = await start(args);
    await handle.signal(carrierEventSignal, event(args.messageId, { kind: 'submitted' }));
    expect(await handle.result()).toEqual({ status: 'expired', code: 1 });
    expect(statusesOf(args.messageId)).toEqual(['sent', 'expired']);
  }, 30_000);

  test('DESIGN §4: a message that never reached a carrier is refunded once', async () => {
    const args = input();
    const handle = await start(args);
    await handle.signal(carrierEventSignal, event(args.messageId, { kind: 'submit_failed', commandStatus: null, reason: 'no route' }));
    expect(await handle.result()).toEqual({ status: 'error', code: 11 });
    expect(mocked.recorder.refunds.filter((r) => r.messageId === args.messageId)).toEqual([{ messageId: args.messageId, micros: 75_000 }]);
  }, 30_000);

  test('spec 1 §6: a failed webhook is retried by the server-side schedule, later DLRs wait in order', async () => {
    const args = input();
    mocked.recorder.failures = 3;
    const handle = await start(args);
    await handle.signal(carrierEventSignal, [event(args.messageId, { kind: 'submitted' }), event(args.messageId, { kind: 'receipt', state: 'DELIVRD', err: 0 })]);
    expect(await handle.result()).toEqual({ status: 'delivered', code: 0 });
    expect(mocked.recorder.delivered.filter((d) => d.messageId === args.messageId).map((d) => d.seq)).toEqual([1, 2]);
    expect(mocked.recorder.dead).toEqual([]);
  }, 30_000);

  test('legacy messages (webhooks false) record transitions but send no DLR', async () => {
    const args = input({ webhooks: false });
    const handle = await start(args);
    await handle.signal(carrierEventSignal, [event(args.messageId, { kind: 'submitted' }), event(args.messageId, { kind: 'receipt', state: 'UNDELIV', err: 5 })]);
    expect(await handle.result()).toEqual({ status: 'failed', code: 5 });
    expect(statusesOf(args.messageId)).toEqual(['sent', 'failed']);
    expect(mocked.recorder.delivered.filter((d) => d.messageId === args.messageId)).toEqual([]);
  }, 30_000);
});

describe('smsBatchLifecycle with mocked activities (docs/lifecycle.md: one workflow per batch)', () => {
  const mocked = recordedWorker('mocked-batch');
  const { taskQueue } = mocked;

  const member = (overrides: Partial<BatchMember> = {}): BatchMember => ({ id: randomUUID(), orgId: 'org-1', tokenId: 'token-1', clientId: null, segments: 1, chargedMicros: 75_000, webhooks: true, ...overrides });
  const start = (members: BatchMember[], overrides: Partial<BatchInput> = {}) =>
    mocked.env.client.workflow.start(smsBatchLifecycle, { taskQueue, workflowId: WORKFLOW_IDS.batch(members[0]?.id ?? '', 'test'), args: [{ members, validityMs: 60_000, webhook: SCHEDULE, ...overrides }] });
  const event = (messageId: string, e: Partial<CarrierEvent> & Pick<CarrierEvent, 'kind'>): CarrierEvent =>
    ({ messageId, segment: 0, segments: 1, carrier: 'sim', carrierMessageId: 'c-1', at: new Date().toISOString(), ...e }) as CarrierEvent;
  const statusesOf = (messageId: string): string[] => mocked.recorder.transitions.filter((t) => t.messageId === messageId).map((t) => t.status);
  const dlrsOf = (messageId: string): string[] => mocked.recorder.delivered.filter((d) => d.messageId === messageId).map((d) => `${d.seq}:${d.payload.status}`);

  test('§3: one workflow holds many messages; events of several messages in one signal; one DLR per transition each, in order', async () => {
    const [a, b, c] = [member(), member({ clientId: 'mine' }), member()] as [BatchMember, BatchMember, BatchMember];
    const handle = await start([a, b, c]);
    await handle.signal(batchEventsSignal, [event(a.id, { kind: 'submitted' }), event(b.id, { kind: 'submitted' }), event(a.id, { kind: 'receipt', state: 'ENROUTE', err: 0 }), event(c.id, { kind: 'submit_failed', commandStatus: null, reason: 'no route' })]);
    await handle.signal(batchEventsSignal, [event(a.id, { kind: 'receipt', state: 'DELIVRD', err: 0 }), event(b.id, { kind: 'receipt', state: 'UNDELIV', err: 5 })]);
    expect(await handle.result()).toEqual({ messages: 3, statuses: { delivered: 1, failed: 1, error: 1 } });
    expect(mocked.recorder.dispatched).toEqual(expect.arrayContaining([a.id, b.id, c.id]));
    expect(dlrsOf(a.id)).toEqual(['1:sent', '2:buffered', '3:delivered']);
    expect(dlrsOf(b.id)).toEqual(['1:sent', '2:failed']);
    expect(mocked.recorder.delivered.find((d) => d.messageId === b.id)?.payload).toMatchObject({ id: b.id, clientId: 'mine', status: 'sent', code: 0 });
    expect(statusesOf(c.id)).toEqual(['error']);
    // DESIGN §4: only the message that never reached a carrier is refunded, once.
    expect(mocked.recorder.refunds.filter((r) => [a.id, b.id, c.id].includes(r.messageId))).toEqual([{ messageId: c.id, micros: 75_000 }]);
  }, 30_000);

  test('a failing webhook retries only that message, in order; the others finish undisturbed; the window closes into a dead letter', async () => {
    const [ok, bad] = [member(), member()] as [BatchMember, BatchMember];
    mocked.recorder.failing.add(bad.id);
    const handle = await start([ok, bad], { webhook: { ...SCHEDULE, retryHours: 2 / 3600 } });
    await handle.signal(batchEventsSignal, [ok, bad].flatMap((m) => [event(m.id, { kind: 'submitted' }), event(m.id, { kind: 'receipt', state: 'DELIVRD', err: 0 })]));
    await eventually(() => expect(dlrsOf(ok.id)).toEqual(['1:sent', '2:delivered']), { what: 'the healthy message\'s two DLRs' });
    const status = await handle.query(batchStatusQuery);
    expect(status.find((s) => s.id === bad.id)).toMatchObject({ status: 'delivered', pendingDlrs: 2 });
    expect(await handle.result()).toEqual({ messages: 2, statuses: { delivered: 2 } });
    // The first DLR dies when its window closes; the next one is attempted only after it.
    expect(mocked.recorder.dead.filter((d) => d.startsWith(bad.id))).toEqual([`${bad.id}#1`, `${bad.id}#2`]);
    mocked.recorder.failing.delete(bad.id);
  }, 30_000);

  test('spec 1 §6: a webhook down then up: the held-back DLRs of that message arrive in order', async () => {
    const m = member();
    mocked.recorder.failing.add(m.id);
    const handle = await start([m]);
    const held = async () => (await handle.query(batchStatusQuery)).find((s) => s.id === m.id);
    await handle.signal(batchEventsSignal, [event(m.id, { kind: 'submitted' })]);
    await eventually(held, { what: 'the sent DLR held back by the failing webhook', until: (s) => s?.status === 'sent' && s.pendingDlrs === 1 });
    await handle.signal(batchEventsSignal, [event(m.id, { kind: 'receipt', state: 'ENROUTE', err: 0 }), event(m.id, { kind: 'receipt', state: 'DELIVRD', err: 0 })]);
    await eventually(held, { what: 'all three DLRs held back while the webhook is down', until: (s) => s?.status === 'delivered' && s.dlrs === 3 && s.pendingDlrs === 3 });
    expect(dlrsOf(m.id)).toEqual([]);
    mocked.recorder.failing.delete(m.id);
    expect(await handle.result()).toEqual({ messages: 1, statuses: { delivered: 1 } });
    expect(dlrsOf(m.id)).toEqual(['1:sent', '2:buffered', '3:delivered']);
  }, 30_000);

  test('DESIGN §4: one validity timer: open messages expire (code 1), finished ones are untouched', async () => {
    const [quick, silent] = [member(), member()] as [BatchMember, BatchMember];
    const handle = await start([quick, silent], { validityMs: 1500 });
    await handle.signal(batchEventsSignal, [event(quick.id, { kind: 'submitted' }), event(quick.id, { kind: 'receipt', state: 'DELIVRD', err: 0 }), event(silent.id, { kind: 'submitted' })]);
    expect(await handle.result()).toEqual({ messages: 2, statuses: { delivered: 1, expired: 1 } });
    expect(statusesOf(silent.id)).toEqual(['sent', 'expired']);
    expect(mocked.recorder.transitions.find((t) => t.messageId === silent.id && t.status === 'expired')?.code).toBe(1);
    expect(statusesOf(quick.id)).toEqual(['sent', 'delivered']);
  }, 30_000);

  test('a message another batch already holds is left out (a start repeated after a crash hands it over once)', async () => {
    const [mine, theirs] = [member(), member()] as [BatchMember, BatchMember];
    mocked.recorder.heldElsewhere.add(theirs.id);
    const handle = await start([mine, theirs]);
    await handle.signal(batchEventsSignal, [event(mine.id, { kind: 'submitted' }), event(mine.id, { kind: 'receipt', state: 'DELIVRD', err: 0 }), event(theirs.id, { kind: 'submitted' })]);
    expect(await handle.result()).toEqual({ messages: 1, statuses: { delivered: 1 } });
    expect(mocked.recorder.dispatched).not.toContain(theirs.id);
    expect(statusesOf(theirs.id)).toEqual([]);
  }, 30_000);

  test('continues as new before its history grows large, carrying each open message, its sequence and its waiting DLRs', async () => {
    const [a, b] = [member(), member({ webhooks: false })] as [BatchMember, BatchMember];
    const handle = await start([a, b], { historyLimit: 5 });
    // The limit is checked against the history length a workflow task starts with. A signal the
    // server holds before the first task starts is handled in that task (history 4 events long,
    // under the limit) and nothing follows it until the receipts: wait for the first task (it
    // dispatches the batch) so that the signal starts a task of its own, as it does whenever
    // the worker is quicker than the signal (the dev server; not the loaded Temporal server).
    await eventually(() => expect(mocked.recorder.dispatched).toEqual(expect.arrayContaining([a.id, b.id])), { what: 'both messages dispatched' });
    await handle.signal(batchEventsSignal, [event(a.id, { kind: 'submitted' }), event(b.id, { kind: 'submitted' })]);
    await eventually(async () => expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId), { what: 'the batch to continue as new' });
    await handle.signal(batchEventsSignal, [event(a.id, { kind: 'receipt', state: 'ENROUTE', err: 0 }), event(a.id, { kind: 'receipt', state: 'DELIVRD', err: 0 }), event(b.id, { kind: 'receipt', state: 'UNDELIV', err: 5 })]);
    expect(await mocked.env.client.workflow.getHandle(handle.workflowId).result()).toEqual({ messages: 2, statuses: { delivered: 1, failed: 1 } });
    expect(dlrsOf(a.id)).toEqual(['1:sent', '2:buffered', '3:delivered']);
    expect(statusesOf(b.id)).toEqual(['sent', 'failed']);
    expect(dlrsOf(b.id)).toEqual([]);
  }, 30_000);
});
