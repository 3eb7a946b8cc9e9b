// Scheduled sends (DESIGN §4 Scheduling; spec 1 §2.2 scheduledAt, §2.6 `canceled`): the
// smsScheduled workflow with mocked activities on the stack's Temporal server (the timer, a
// cancel before it, a cancel after it, an opt-out meanwhile), then end to end through HTTP on
// the real stack, and submit_sm schedule_delivery_time + cancel_sm over an SMPP gateway.
import { randomInt, randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { PduOptions } from 'smpp';
import type { LifecycleActivities } from '../../activities/lifecycle';
import { UPDATE_IDS, WORKFLOW_IDS } from '../../core/bus/temporal';
import type { CarrierEvent } from '../../core/carrier/types';
import type { DlrDelivery, Transition } from '../../core/sms/dlr';
import { toGsm7Bytes } from '../../core/sms/encoding';
import { newId } from '../../core/ids';
import { ScheduledCancel } from '../../core/sms/schedule';
import { STATUS } from '../../gateways/smpp/protocol';
import { startSmppGateway, buildSmppServices, type SmppGatewayRole } from '../../roles/gateway-smpp';
import { AccountDirectory } from '../../stores/account-directory';
import { BalanceLedger } from '../../stores/balance-ledger';
import { TemporalScheduledSends } from '../../stores/scheduled-sends';
import { connectNats, type Nats } from '../../infra/nats';
import { createLogger } from '../../infra/logger';
import type { WebhookSchedule } from '../../workflows/presets';
import { cancelScheduledUpdate, carrierEventSignal, smsScheduled } from '../../workflows/sms-lifecycle';
import { eventually } from '../../support/eventually';
import { mockedWorker } from '../support/mocked-worker';
import { api, stack } from '../../support/stack';
import { issueSmpp, TestSmppClient } from '../../support/smpp-client';
import { accountsMirrored, balanceMicros, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

const SCHEDULE: WebhookSchedule = { initialIntervalMs: 100, maximumIntervalMs: 200, retryHours: 1, attemptTimeoutMs: 1000 };

describe('DESIGN §4 Scheduling: smsScheduled with mocked activities', () => {
  const transitions: Transition[] = [];
  const released = new Map<string, number>();
  const dispatched: string[] = [];
  const refunds: string[] = [];
  const delivered: DlrDelivery[] = [];
  const optedOut = new Set<string>();
  const activities: Pick<LifecycleActivities, 'dispatch' | 'settle' | 'refund' | 'releaseScheduled' | 'deliverDlrOnce' | 'deliverDlr' | 'deadLetter'> = {
    releaseScheduled: async (id) => { released.set(id, Date.now()); return optedOut.has(id) ? 'opted-out' : 'send'; },
    dispatch: async (id) => { dispatched.push(id); },
    settle: async (_token, ts, deliverNow) => { transitions.push(...ts); delivered.push(...deliverNow); return deliverNow.length; },
    refund: async (id) => { refunds.push(id); },
    deliverDlrOnce: async (d) => { delivered.push(d); },
    deliverDlr: async (d) => { delivered.push(d); },
    deadLetter: async () => undefined,
  };
  const worker = mockedWorker('scheduled', activities);

  const start = (id: string, scheduledAt: Date) => worker.env.client.workflow.start(smsScheduled, {
    taskQueue: worker.taskQueue, workflowId: WORKFLOW_IDS.lifecycle(id),
    args: [{ messageId: id, orgId: 'org-1', tokenId: 'token-1', clientId: 'c-1', segments: 1, chargedMicros: 75_000, validityMs: 60_000, webhooks: true, webhook: SCHEDULE, scheduledAt: scheduledAt.toISOString() }],
  });
  const statusesOf = (id: string): string[] => transitions.filter((t) => t.messageId === id).map((t) => `${t.status}:${t.code}`);
  const event = (messageId: string, kind: 'submitted' | 'receipt'): CarrierEvent => ({ messageId, segment: 0, segments: 1, carrier: 'sim', carrierMessageId: 'c-1', at: new Date().toISOString(), kind, ...(kind === 'receipt' ? { state: 'DELIVRD', err: 0 } : {}) }) as CarrierEvent;

  test('waits until scheduledAt, then lives the lifecycle; a cancel after the timer fired answers canceled false', async () => {
    const id = randomUUID();
    const at = new Date(Date.now() + 3_000);
    const handle = await start(id, at);
    await eventually(() => dispatched.includes(id), { what: 'the message dispatched at its time', timeoutMs: 15_000 });
    expect(released.get(id)).toBeGreaterThanOrEqual(at.getTime() - 1_000);
    expect(await handle.executeUpdate(cancelScheduledUpdate, { updateId: UPDATE_IDS.cancel(id) })).toEqual({ canceled: false, status: 'queued' });
    await handle.signal(carrierEventSignal, [event(id, 'submitted'), event(id, 'receipt')]);
    expect(await handle.result()).toEqual({ status: 'delivered', code: 0 });
    expect(statusesOf(id)).toEqual(['sent:0', 'delivered:0']);
    expect(refunds).not.toContain(id);
  }, 30_000);

  test('canceled before its time: canceled (code 0) with its DLR, refunded, never dispatched; a repeated cancel gets the same answer', async () => {
    const id = randomUUID();
    const handle = await start(id, new Date(Date.now() + 60_000));
    expect(await handle.executeUpdate(cancelScheduledUpdate, { updateId: UPDATE_IDS.cancel(id) })).toEqual({ canceled: true });
    // Answered once the transition is recorded and the charge refunded.
    expect(statusesOf(id)).toEqual(['canceled:0']);
    expect(refunds).toContain(id);
    expect(await handle.executeUpdate(cancelScheduledUpdate, { updateId: UPDATE_IDS.cancel(id) })).toEqual({ canceled: true });
    expect(await handle.result()).toEqual({ status: 'canceled', code: 0 });
    expect(dispatched).not.toContain(id);
    expect(released.has(id)).toBe(false);
    expect(delivered.filter((d) => d.messageId === id).map((d) => d.payload)).toEqual([expect.objectContaining({ id, clientId: 'c-1', status: 'canceled', code: 0 })]);
  }, 30_000);

  test('a recipient that opted out before its time: rejected (code 4, blocked subscriber), refunded, never dispatched', async () => {
    const id = randomUUID();
    optedOut.add(id);
    const handle = await start(id, new Date(Date.now() + 2_000));
    expect(await handle.result()).toEqual({ status: 'rejected', code: 4 });
    expect(statusesOf(id)).toEqual(['rejected:4']);
    expect(refunds).toContain(id);
    expect(dispatched).not.toContain(id);
  }, 30_000);
});

describe('DESIGN §4 Scheduling: scheduled sends and cancel through HTTP on the stack', () => {
  let receiver: WebhookReceiver;
  let tenant: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    tenant = await createTenant({ name: 'Scheduling Org', balance: 50 });
    other = await createTenant({ name: 'Scheduling Other Org', balance: 50 });
    await withAccounts(async (accounts) => { await accounts.setWebhook(tenant.tokenId, receiver.url); });
    await accountsMirrored();
  });
  afterAll(async () => { await receiver.close(); });

  let counter = 0;
  /** A German mobile number ending in 00: the simulator delivers it (docs/carrier.md). */
  const number = (): string => {
    counter += 1;
    return `+491511${String(Date.now() % 10000).padStart(4, '0')}${String(counter % 10)}00`.slice(0, 14);
  };
  interface Entity { id: string; status: string; statusCode: number | null; scheduledAt: string | null }
  const entity = async (id: string): Promise<Entity> => ((await api(`${V1}/sms/${id}`, { token: tenant.token })).body as { entity: Entity }).entity;
  const schedule = async (secondsAhead: number): Promise<Entity & { at: string }> => {
    const at = new Date(Date.now() + secondsAhead * 1000).toISOString();
    const res = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Scheduler', to: number(), text: 'scheduled test', scheduledAt: at } });
    expect(res.status).toBe(201);
    return { ...(res.body as { entity: Entity }).entity, at };
  };

  test('201 scheduled → GET and the list show it scheduled → delivered no earlier than scheduledAt - 1 s (the sent DLR\'s eventAt)', async () => {
    const m = await schedule(5);
    expect(m).toMatchObject({ status: 'scheduled', scheduledAt: m.at });
    expect(await entity(m.id)).toMatchObject({ status: 'scheduled', scheduledAt: m.at });
    const listed = await eventually(async () => ((await api(`${V1}/sms?status_eq=scheduled&id_eq=${m.id}`, { token: tenant.token })).body as { entities: Entity[] }).entities, {
      what: 'the scheduled message in GET /sms?status_eq=scheduled', until: (list) => list.length === 1, timeoutMs: 10_000,
    });
    expect(listed[0]).toMatchObject({ id: m.id, status: 'scheduled', scheduledAt: m.at });
    await receiver.waitFor(() => receiver.forMessage(m.id).some((d) => d.body['status'] === 'delivered'), 40_000);
    const sent = receiver.forMessage(m.id).find((d) => d.body['status'] === 'sent');
    expect(Date.parse(String(sent?.body['eventAt']))).toBeGreaterThanOrEqual(Date.parse(m.at) - 1_000);
    expect(receiver.forMessage(m.id).map((d) => d.body['status'])).toEqual(['sent', 'buffered', 'delivered']);
    expect(await entity(m.id)).toMatchObject({ status: 'delivered', scheduledAt: m.at });
  }, 60_000);

  test('cancel while scheduled → 200 canceled, a canceled DLR, the balance back; again → 409; another organization → 404; unknown → 404', async () => {
    const before = await balanceMicros(tenant.orgId);
    const m = await schedule(30);
    expect(await balanceMicros(tenant.orgId)).toBeLessThan(before ?? 0);
    const res = await api(`${V1}/sms/${m.id}/cancel`, { token: tenant.token, body: {} });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect((res.body as { entity: Entity }).entity).toMatchObject({ id: m.id, status: 'canceled', statusCode: 0, scheduledAt: m.at });
    await receiver.waitFor(() => receiver.forMessage(m.id).some((d) => d.body['status'] === 'canceled'));
    expect(receiver.forMessage(m.id).map((d) => `${String(d.body['status'])}:${String(d.body['code'])}`)).toEqual(['canceled:0']);
    await eventually(() => balanceMicros(tenant.orgId), { what: 'the charge refunded', until: (b) => b === before, timeoutMs: 10_000 });
    expect(await entity(m.id)).toMatchObject({ status: 'canceled' });
    // Refunded, so it costs nothing in the delivery statistics (once the history has its canceled state).
    const stats = await eventually(async () => ((await api(`${V1}/sms/stats?id_eq=${m.id}`, { token: tenant.token })).body as { entities: Array<Record<string, unknown>> }).entities, {
      what: 'the canceled state in the statistics', until: (rows) => rows[0]?.['canceled'] === 1, timeoutMs: 15_000,
    });
    expect(stats[0]).toMatchObject({ messages: 1, canceled: 1, cost: 0 });

    const again = await api(`${V1}/sms/${m.id}/cancel`, { token: tenant.token, body: {} });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ title: 'Conflict', status: 409, detail: expect.stringContaining('canceled already') });
    const foreign = await api(`${V1}/sms/${(await schedule(30)).id}/cancel`, { token: other.token, body: {} });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ title: 'Not Found', status: 404, detail: expect.any(String) });
    expect((await api(`${V1}/sms/${newId()}/cancel`, { token: tenant.token, body: {} })).status).toBe(404);
  }, 60_000);

  test('cancel once it left → 409 saying it already left', async () => {
    const m = await schedule(2);
    await eventually(() => entity(m.id), { what: 'the message left', until: (e) => e.status !== 'scheduled', timeoutMs: 20_000 });
    const res = await api(`${V1}/sms/${m.id}/cancel`, { token: tenant.token, body: {} });
    expect(res.status).toBe(409);
    expect((res.body as { detail: string }).detail).toContain('already left');
  }, 30_000);

  test('in the past, beyond 35 days or without an offset → 422 on scheduledAt (bulk: per item)', async () => {
    const item = (scheduledAt: string) => ({ from: 'Scheduler', to: number(), text: 'bad schedule', scheduledAt });
    const past = await api(`${V1}/sms`, { token: tenant.token, body: item('2020-01-01T00:00:00Z') });
    expect(past.status).toBe(422);
    expect(past.body).toEqual({ errors: { fields: { scheduledAt: [expect.stringContaining('from now to 35 days ahead')] } } });
    const naive = await api(`${V1}/sms/quote`, { token: tenant.token, body: item('2030-01-01T00:00:00') });
    expect(naive.status).toBe(422);
    const bulk = await api(`${V1}/sms/bulk`, { token: tenant.token, body: [item(new Date(Date.now() + 36 * 86_400_000).toISOString()), item(new Date(Date.now() + 60_000).toISOString())] });
    expect(bulk.status).toBe(201);
    expect((bulk.body as { entities: Entity[] }).entities.map((e) => e.status)).toEqual(['scheduled']);
    expect((bulk.body as { errors: Array<{ index: number; fields: Record<string, string[]> }> }).errors).toEqual([{ index: 0, clientId: null, fields: { scheduledAt: [expect.stringContaining('more than 35 days ahead')] } }]);
  });
});

describe('DESIGN §4 Scheduling: submit_sm schedule_delivery_time and cancel_sm (SMPP 3.4 §4.9) over an SMPP gateway', () => {
  let nats: Nats;
  let directory: AccountDirectory;
  let gateway: SmppGatewayRole;
  let temporal: Client;
  let close: () => void;
  let tenant: Tenant;
  let client: TestSmppClient;
  beforeAll(async () => {
    const log = createLogger('warn', { component: 'smpp-scheduled' });
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'smpp-scheduled' }, log);
    directory = await AccountDirectory.open(nats.kv.accounts);
    temporal = new Client({ connection: await Connection.connect({ address: stack().temporalAddress }), namespace: stack().namespace });
    const built = await buildSmppServices({ nats, directory, balances: new BalanceLedger(nats.kv.balances, nats.pipeline) });
    close = built.close;
    const scheduled = new ScheduledCancel({ states: built.services.states, scheduled: new TemporalScheduledSends(temporal) });
    gateway = await startSmppGateway({ port: 0, engines: { nats, directory }, services: { ...built.services, scheduled }, log, options: { host: '127.0.0.1' } });
    tenant = await createTenant({ name: 'SMPP Scheduling Org' });
    const creds = await issueSmpp(stack().natsUrl, tenant.orgId, tenant.tokenId, directory);
    client = await TestSmppClient.connect(gateway.port);
    expect((await client.bind('transceiver', creds.systemId, creds.password)).command_status).toBe(0);
  });
  afterAll(async () => {
    await client?.close();
    await gateway?.stop();
    close?.();
    directory?.stop();
    await nats?.close();
    await temporal?.connection.close();
  });
  const submit = (schedule: string) => client.submit({ source_addr: 'Acme', destination_addr: `49151${String(randomInt(100_000, 999_999))}00`, short_message: toGsm7Bytes('scheduled'), schedule_delivery_time: schedule } as PduOptions);
  const read = async (id: string): Promise<{ status: string; scheduledAt: string | null }> => ((await api(`${V1}/sms/${id}`, { token: tenant.token })).body as { entity: { status: string; scheduledAt: string | null } }).entity;
  const cancel = (messageId: string) => client.request('cancel_sm', { message_id: messageId, source_addr: 'Acme', destination_addr: '' } as PduOptions);

  test('relative and absolute schedule_delivery_time are scheduled; cancel_sm cancels one; again, or unknown → ESME_RCANCELFAIL', async () => {
    const relative = await submit('000000000030000R');
    expect(relative.command_status).toBe(0);
    const id = relative.message_id ?? '';
    const scheduled = await read(id);
    expect(scheduled.status).toBe('scheduled');
    expect(Math.abs(Date.parse(scheduled.scheduledAt ?? '') - (Date.now() + 30_000))).toBeLessThan(5_000);
    const at = new Date(Date.now() + 3_600_000 + 2 * 3_600_000);
    const two = (n: number): string => String(n).padStart(2, '0');
    const absolute = await submit(`${two(at.getUTCFullYear() % 100)}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}008+`);
    expect(absolute.command_status).toBe(0);
    expect(Math.abs(Date.parse((await read(absolute.message_id ?? '')).scheduledAt ?? '') - (Date.now() + 3_600_000))).toBeLessThan(5_000);

    expect((await cancel(id)).command_status).toBe(STATUS.ESME_ROK);
    expect((await read(id)).status).toBe('canceled');
    expect((await cancel(id)).command_status).toBe(STATUS.ESME_RCANCELFAIL);
    expect((await cancel(newId())).command_status).toBe(STATUS.ESME_RCANCELFAIL);
    expect((await cancel(absolute.message_id ?? '')).command_status).toBe(STATUS.ESME_ROK);
    // Past schedule: refused by the acceptance core's bounds.
    expect((await submit('200101000000000+')).command_status).toBe(STATUS.ESME_RINVSCHED);
  }, 60_000);
});
