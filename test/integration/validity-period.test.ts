// Per-message validity period (DESIGN §4 Scheduling: "validityPeriod per message overrides the
// default"): the batch lifecycle with mocked activities (each member's own deadline beside the
// batch's), then end to end on the stack (MESSAGE_VALIDITY_SECONDS=15, test/support/global-setup.ts).
import { randomInt, randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { BatchLifecycleActivities } from '../../activities/lifecycle-batch';
import type { PduOptions } from 'smpp';
import { QUERIES, WORKFLOW_IDS } from '../../core/bus/temporal';
import { toGsm7Bytes } from '../../core/sms/encoding';
import { STATUS } from '../../gateways/smpp/protocol';
import type { CarrierEvent } from '../../core/carrier/types';
import type { MessageStatus } from '../../core/sms/message';
import type { Transition } from '../../core/sms/dlr';
import type { WebhookSchedule } from '../../workflows/presets';
import type { BatchMember } from '../../workflows/batch-track';
import { batchEventsSignal, batchStatusQuery, smsBatchLifecycle, type BatchInput } from '../../workflows/sms-batch-lifecycle';
import { eventually } from '../../support/eventually';
import { mockedWorker } from '../support/mocked-worker';
import { api, stack } from '../../support/stack';
import { issueSmpp, startGatewayHarness, TestSmppClient, type GatewayHarness } from '../../support/smpp-client';
import { accountsMirrored, createTenant, V1, type Tenant } from '../../support/tenants';

const SCHEDULE: WebhookSchedule = { initialIntervalMs: 100, maximumIntervalMs: 200, retryHours: 1, attemptTimeoutMs: 1000 };

describe('DESIGN §4 Scheduling: smsBatchLifecycle with per-member validity periods (mocked activities)', () => {
  const transitions: Transition[] = [];
  const activities: Pick<BatchLifecycleActivities, 'dispatchBatch' | 'settleBatch'> = {
    dispatchBatch: async (_owner, ids) => ids,
    settleBatch: async (_key, items) => {
      for (const item of items) transitions.push(...item.transitions);
      return { delivered: items.map((i) => i.deliverNow.length), unattempted: [] };
    },
  };
  const worker = mockedWorker('validity', activities);

  const member = (overrides: Partial<BatchMember> = {}): BatchMember => ({ id: randomUUID(), orgId: 'org-1', tokenId: 'token-1', clientId: null, segments: 1, chargedMicros: 75_000, webhooks: false, ...overrides });
  const start = (members: BatchMember[], overrides: Partial<BatchInput> = {}) =>
    worker.env.client.workflow.start(smsBatchLifecycle, { taskQueue: worker.taskQueue, workflowId: WORKFLOW_IDS.batch(members[0]?.id ?? '', 'validity'), args: [{ members, validityMs: 60_000, webhook: SCHEDULE, ...overrides }] });
  const submitted = (messageId: string): CarrierEvent => ({ messageId, segment: 0, segments: 1, carrier: 'sim', carrierMessageId: 'c-1', at: new Date().toISOString(), kind: 'submitted' }) as CarrierEvent;
  const delivered = (messageId: string): CarrierEvent => ({ ...submitted(messageId), kind: 'receipt', state: 'DELIVRD', err: 0 }) as CarrierEvent;
  const statusesOf = (messageId: string): string[] => transitions.filter((t) => t.messageId === messageId).map((t) => `${t.status}:${t.code}`);
  const expiredOf = (id: string) => () => expect(statusesOf(id)).toContain('expired:1');

  test('a member with a short validityPeriod expires at its own deadline; another of the same batch keeps the batch default', async () => {
    // The batch default is 60 s; the short member's own is 1.5 s.
    const [short, usual] = [member({ validityMs: 1_500 }), member()] as [BatchMember, BatchMember];
    const handle = await start([short, usual]);
    await handle.signal(batchEventsSignal, [submitted(short.id), submitted(usual.id)]);
    await eventually(expiredOf(short.id), { what: 'the short member expired' });
    // The short member's expiry has been applied (a settle happened): the other is still open.
    const held = await handle.query(batchStatusQuery);
    expect(held.find((s) => s.id === short.id)).toMatchObject({ status: 'expired', code: 1 });
    expect(held.find((s) => s.id === usual.id)).toMatchObject({ status: 'sent', code: 0 });
    await handle.signal(batchEventsSignal, [delivered(usual.id)]);
    expect(await handle.result()).toEqual({ messages: 2, statuses: { expired: 1, delivered: 1 } });
    expect(statusesOf(usual.id)).toEqual(['sent:0', 'delivered:0']);
  }, 30_000);

  test('a member with a longer validityPeriod outlives the batch default that expires its neighbour', async () => {
    const [usual, long] = [member(), member({ validityMs: 60_000 })] as [BatchMember, BatchMember];
    const handle = await start([usual, long], { validityMs: 1_500 });
    await handle.signal(batchEventsSignal, [submitted(usual.id), submitted(long.id)]);
    await eventually(expiredOf(usual.id), { what: 'the default member expired' });
    expect((await handle.query(batchStatusQuery)).find((s) => s.id === long.id)).toMatchObject({ status: 'sent' });
    await handle.signal(batchEventsSignal, [delivered(long.id)]);
    expect(await handle.result()).toEqual({ messages: 2, statuses: { expired: 1, delivered: 1 } });
  }, 30_000);

  test('a continued-as-new batch keeps each member\'s own deadline (counted from the first run\'s start)', async () => {
    const [short, usual] = [member({ validityMs: 3_000 }), member()] as [BatchMember, BatchMember];
    const handle = await start([short, usual], { historyLimit: 5 });
    await eventually(async () => (await handle.query(batchStatusQuery)).length === 2, { what: 'both members dispatched' });
    await handle.signal(batchEventsSignal, [submitted(short.id), submitted(usual.id)]);
    await eventually(async () => expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId), { what: 'the batch to continue as new' });
    await eventually(expiredOf(short.id), { what: 'the short member expired in the continued run' });
    const continued = worker.env.client.workflow.getHandle(handle.workflowId);
    expect((await continued.query(batchStatusQuery)).find((s) => s.id === usual.id)).toMatchObject({ status: 'sent' });
    await continued.signal(batchEventsSignal, [delivered(usual.id)]);
    expect(await continued.result()).toMatchObject({ statuses: { delivered: 1 } });
    expect(statusesOf(short.id)).toEqual(['sent:0', 'expired:1']);
  }, 30_000);
});

describe('DESIGN §4 Scheduling: validityPeriod end to end (MESSAGE_VALIDITY_SECONDS=15 on the stack)', () => {
  let tenant: Tenant;
  let temporal: Client;
  beforeAll(async () => {
    tenant = await createTenant({ name: 'Validity Org', balance: 50 });
    await accountsMirrored();
    temporal = new Client({ connection: await Connection.connect({ address: stack().temporalAddress }), namespace: stack().namespace });
  });
  afterAll(async () => { await temporal.connection.close(); });

  let counter = 0;
  /** A German mobile number ending in 94: the simulator stays silent after the submit (docs/carrier.md). */
  const silent = (): string => {
    counter += 1;
    return `+491511${String(Date.now() % 10000).padStart(4, '0')}${String(counter % 10)}94`.slice(0, 14);
  };
  const entity = async (id: string): Promise<{ status: string; statusCode: number | null; validityPeriod: number | null }> =>
    ((await api(`${V1}/sms/${id}`, { token: tenant.token })).body as { entity: { status: string; statusCode: number | null; validityPeriod: number | null } }).entity;
  /** What the message's lifecycle workflow holds of it. */
  const held = async (id: string): Promise<MessageStatus | 'dropped'> => {
    const workflow = ((await api(`${V1}/sms/${id}/dlrs`, { token: tenant.token })).body as { workflow: { id: string } }).workflow;
    const handle = temporal.workflow.getHandle(workflow.id);
    if (!workflow.id.startsWith('smsb-')) return (await handle.query<{ status: MessageStatus }>(QUERIES.status)).status;
    const messages = await handle.query<Array<{ id: string; status: MessageStatus }>>(QUERIES.batchStatus);
    return messages.find((m) => m.id === id)?.status ?? 'dropped';
  };

  test('201 and GET show validityPeriod (null for the default); past the default 15 s the message with 60 s is still sent, then expires (code 1)', async () => {
    const res = await api(`${V1}/sms/bulk`, { token: tenant.token, body: [{ from: 'Validity', to: silent(), text: 'own validity', validityPeriod: 60 }, { from: 'Validity', to: silent(), text: 'default validity' }] });
    expect(res.status).toBe(201);
    const [own, usual] = (res.body as { entities: Array<{ id: string; validityPeriod: number | null }> }).entities as [{ id: string; validityPeriod: number | null }, { id: string; validityPeriod: number | null }];
    expect(own.validityPeriod).toBe(60);
    expect(usual.validityPeriod).toBeNull();
    const sentAt = Date.now();
    await eventually(() => entity(usual.id), { what: 'the default message expired', until: (e) => e.status === 'expired', timeoutMs: 40_000 });
    // The default's deadline has passed and was applied; the other message's workflow still holds it open.
    expect(await held(own.id)).toBe('sent');
    expect(await entity(own.id)).toMatchObject({ status: 'sent', validityPeriod: 60 });
    expect(Date.now() - sentAt).toBeLessThan(60_000);
    const expired = await eventually(() => entity(own.id), { what: 'the 60 s message expired', until: (e) => e.status === 'expired', timeoutMs: 90_000 });
    expect(expired).toMatchObject({ statusCode: 1, validityPeriod: 60 });
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(55_000);
  }, 150_000);

  test('out of bounds → 422 on validityPeriod naming the bounds, on a send and a quote alike, and as a bulk item error', async () => {
    const body = { from: 'Validity', to: silent(), text: 'bad validity', validityPeriod: 59 };
    for (const path of [`${V1}/sms`, `${V1}/sms/quote`]) {
      const res = await api(path, { token: tenant.token, body });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: { fields: { validityPeriod: ['must be a whole number of seconds from 60 (1 minute) to 259200 (72 hours)'] } } });
    }
    const bulk = await api(`${V1}/sms/bulk`, { token: tenant.token, body: [{ ...body, validityPeriod: 259_201 }] });
    expect(bulk.status).toBe(201);
    expect((bulk.body as { errors: Array<{ fields: Record<string, string[]> }> }).errors[0]?.fields['validityPeriod']).toBeDefined();
  });
});

describe('DESIGN §4 Scheduling: submit_sm validity_period (SMPP 3.4 §7.1.1) over the SMPP gateway', () => {
  let harness: GatewayHarness;
  let tenant: Tenant;
  let client: TestSmppClient;
  beforeAll(async () => {
    harness = await startGatewayHarness(stack().natsUrl);
    tenant = await createTenant({ name: 'SMPP Validity Org' });
    const creds = await issueSmpp(stack().natsUrl, tenant.orgId, tenant.tokenId, harness.directory);
    client = await TestSmppClient.connect(harness.port);
    expect((await client.bind('transmitter', creds.systemId, creds.password)).command_status).toBe(0);
  });
  afterAll(async () => {
    await client?.close();
    await harness?.stop();
  });
  const submit = (validity: string) => client.submit({ source_addr: 'Acme', destination_addr: `49151${String(randomInt(100_000, 999_999))}78`, short_message: toGsm7Bytes('validity'), validity_period: validity } as PduOptions);
  const validityOf = async (id: string): Promise<number | null> => ((await api(`${V1}/sms/${id}`, { token: tenant.token })).body as { entity: { validityPeriod: number | null } }).entity.validityPeriod;

  test('relative and absolute become the message\'s validityPeriod; empty is the default (null); out of range is ESME_RINVEXPIRY', async () => {
    const relative = await submit('000000010000000R');
    expect(relative.command_status).toBe(0);
    expect(await validityOf(relative.message_id ?? '')).toBe(3_600);
    // Two hours from now in UTC+2 (08 quarter hours ahead): the absolute format, seconds counted at the gateway.
    const at = new Date(Date.now() + 2 * 3_600_000 + 2 * 3_600_000);
    const two = (n: number): string => String(n).padStart(2, '0');
    const absolute = await submit(`${two(at.getUTCFullYear() % 100)}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}008+`);
    expect(absolute.command_status).toBe(0);
    expect(Math.abs(((await validityOf(absolute.message_id ?? '')) ?? 0) - 7_200)).toBeLessThanOrEqual(5);
    const plain = await submit('');
    expect(plain.command_status).toBe(0);
    expect(await validityOf(plain.message_id ?? '')).toBeNull();
    for (const bad of ['000000000030000R', '000004000000000R', 'soon']) expect((await submit(bad)).command_status).toBe(STATUS.ESME_RINVEXPIRY);
  });
});
