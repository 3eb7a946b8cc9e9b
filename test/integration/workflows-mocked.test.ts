// Workflows with mocked activities (samples-typescript's second kind of test): the real
// workflow code on the test stack's Temporal server, on a task queue of its own, with
// activities that only record what they were asked. docs/lifecycle.md; spec 1 §3, §6.
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { LifecycleActivities } from '../../activities/lifecycle';
import type { ProbeActivities } from '../../activities/probe';
import { WORKFLOW_IDS } from '../../core/bus/temporal';
import type { CarrierEvent } from '../../core/carrier/types';
import type { DlrDelivery, Transition } from '../../core/sms/dlr';
import type { WebhookSchedule } from '../../workflows/presets';
import { carrierEventSignal, smsLifecycle } from '../../workflows/sms-lifecycle';
import type { LifecycleInput } from '../../workflows/types';
import { stack } from '../support/stack';

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

  private attempt(delivery: DlrDelivery): void {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('webhook answered 503');
    }
    this.delivered.push(delivery);
  }

  activities(): LifecycleActivities & ProbeActivities {
    return {
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
      describeWorker: async () => 'mocked',
      noop: async () => undefined,
    };
  }
}

describe('smsLifecycle with mocked activities (docs/lifecycle.md)', () => {
  let env: TestWorkflowEnvironment;
  let recorder: Recorder;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `mocked-${randomUUID()}`;

  beforeAll(async () => {
    const info = stack();
    env = await TestWorkflowEnvironment.createFromExistingServer({ address: info.temporalAddress, namespace: info.namespace });
    recorder = new Recorder();
    worker = await Worker.create({ connection: env.nativeConnection, namespace: info.namespace, taskQueue, workflowsPath: require.resolve('../../workflows'), activities: recorder.activities() });
    running = worker.run();
  }, 60_000);

  afterAll(async () => {
    worker.shutdown();
    await running;
    await env.teardown();
  });

  const input = (overrides: Partial<LifecycleInput> = {}): LifecycleInput & { webhook: WebhookSchedule } => ({
    messageId: randomUUID(), orgId: 'org-1', tokenId: 'token-1', clientId: null, segments: 1, chargedMicros: 75_000,
    validityMs: 60_000, webhooks: true, webhook: SCHEDULE, ...overrides,
  });
  const event = (messageId: string, e: Partial<CarrierEvent> & Pick<CarrierEvent, 'kind'>): CarrierEvent =>
    ({ messageId, segment: 0, segments: 1, carrier: 'sim', carrierMessageId: 'c-1', at: new Date().toISOString(), ...e }) as CarrierEvent;
  const start = (args: LifecycleInput & { webhook: WebhookSchedule }) =>
    env.client.workflow.start(smsLifecycle, { taskQueue, workflowId: WORKFLOW_IDS.lifecycle(args.messageId), args: [args] });
  const statusesOf = (messageId: string): string[] => recorder.transitions.filter((t) => t.messageId === messageId).map((t) => t.status);

  test('§3: hands the message over, applies the carrier reports in order and delivers one DLR per transition', async () => {
    const args = input();
    const handle = await start(args);
    await handle.signal(carrierEventSignal, [event(args.messageId, { kind: 'submitted' }), event(args.messageId, { kind: 'receipt', state: 'ENROUTE', err: 0 })]);
    await handle.signal(carrierEventSignal, event(args.messageId, { kind: 'receipt', state: 'DELIVRD', err: 0 }));
    expect(await handle.result()).toEqual({ status: 'delivered', code: 0 });
    expect(recorder.dispatched).toContain(args.messageId);
    expect(statusesOf(args.messageId)).toEqual(['sent', 'buffered', 'delivered']);
    expect(recorder.delivered.filter((d) => d.messageId === args.messageId).map((d) => [d.seq, d.payload.status])).toEqual([[1, 'sent'], [2, 'buffered'], [3, 'delivered']]);
    expect(recorder.refunds.filter((r) => r.messageId === args.messageId)).toEqual([]);
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
    expect(recorder.refunds.filter((r) => r.messageId === args.messageId)).toEqual([{ messageId: args.messageId, micros: 75_000 }]);
  }, 30_000);

  test('spec 1 §6: a failed webhook is retried by the server-side schedule, later DLRs wait in order', async () => {
    const args = input();
    recorder.failures = 3;
    const handle = await start(args);
    await handle.signal(carrierEventSignal, [event(args.messageId, { kind: 'submitted' }), event(args.messageId, { kind: 'receipt', state: 'DELIVRD', err: 0 })]);
    expect(await handle.result()).toEqual({ status: 'delivered', code: 0 });
    expect(recorder.delivered.filter((d) => d.messageId === args.messageId).map((d) => d.seq)).toEqual([1, 2]);
    expect(recorder.dead).toEqual([]);
  }, 30_000);

  test('legacy messages (webhooks false) record transitions but send no DLR', async () => {
    const args = input({ webhooks: false });
    const handle = await start(args);
    await handle.signal(carrierEventSignal, [event(args.messageId, { kind: 'submitted' }), event(args.messageId, { kind: 'receipt', state: 'UNDELIV', err: 5 })]);
    expect(await handle.result()).toEqual({ status: 'failed', code: 5 });
    expect(statusesOf(args.messageId)).toEqual(['sent', 'failed']);
    expect(recorder.delivered.filter((d) => d.messageId === args.messageId)).toEqual([]);
  }, 30_000);
});
