// The message lifecycle end to end on the real stack (spec 1 §2.6, §3, §6; DESIGN §4, §6):
// HTTP accept → JetStream → Temporal workflow → carrier connector → simulator SMSC →
// receipts → signals → DLR webhooks to a receiver on loopback.
import { Client, Connection } from '@temporalio/client';
import { newId } from '../../core/ids';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { CONSUMERS, STREAMS, SUBJECTS } from '../../core/bus/names';
import { QUERIES } from '../../core/bus/temporal';
import { FINAL_STATUSES, type MessageStatus } from '../../core/sms/message';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consumerPassed } from '../support/bus-conditions';
import { eventually } from '../../support/eventually';
import { admin, api, stack } from '../../support/stack';
import { accountsMirrored, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';
import { startWebhookReceiver, type ReceivedDlr, type WebhookReceiver } from '../../support/webhook-receiver';

let receiver: WebhookReceiver;
let tenant: Tenant;
let secret: string;
let temporal: Client;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  tenant = await createTenant({ name: 'Lifecycle Org', balance: 50 });
  secret = await withAccounts(async (accounts) => (await accounts.setWebhook(tenant.tokenId, receiver.url)).webhook?.secret ?? '');
  await accountsMirrored();
  temporal = new Client({ connection: await Connection.connect({ address: stack().temporalAddress }), namespace: stack().namespace });
});
afterAll(async () => {
  await temporal.connection.close();
  await receiver.close();
});

let counter = 0;
/** A German mobile number whose last two digits select the simulator's path (docs/carrier.md). */
function number(lastTwo: string): string {
  counter += 1;
  return `+491511${String(Date.now() % 10000).padStart(4, '0')}${String(counter % 10)}${lastTwo}`.slice(0, 14);
}

async function send(to: string, extra: Record<string, unknown> = {}): Promise<{ id: string; clientId: string }> {
  const clientId = `c-${newId()}`.slice(0, 40);
  const res = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Lifecycle', to, text: 'lifecycle test', clientId, ...extra } });
  expect(res.status).toBe(201);
  return { id: (res.body as { entity: { id: string } }).entity.id, clientId };
}

const statuses = (dlrs: ReceivedDlr[]): string[] => dlrs.map((d) => `${String(d.body['status'])}:${String(d.body['code'])}`);

/** What the workflow holding message `id` says of it: final status, transitions (one DLR each), DLRs still to deliver. */
interface Held { status: MessageStatus; dlrs: number | null; pendingDlrs: number }

async function heldBy(id: string): Promise<Held | 'dropped'> {
  const res = await api(`${V1}/sms/${id}/dlrs`, { token: tenant.token });
  expect(res.status).toBe(200);
  const workflow = (res.body as { workflow: { id: string } }).workflow;
  const handle = temporal.workflow.getHandle(workflow.id);
  if (workflow.id.startsWith('smsb-')) {
    const messages = await handle.query<Array<{ id: string; status: MessageStatus; dlrs: number; pendingDlrs: number }>>(QUERIES.batchStatus);
    // A continued-as-new batch carries only its open messages: one it dropped was done.
    return messages.find((m) => m.id === id) ?? 'dropped';
  }
  return { ...(await handle.query<{ status: MessageStatus; pendingDlrs: number }>(QUERIES.status)), dlrs: null };
}

/**
 * Waits until the message's workflow holds it final with no DLR left to deliver and `count`
 * transitions: no further DLR can follow (one DLR per transition, and none is pending).
 */
async function settled(id: string, count: number): Promise<void> {
  await eventually(() => heldBy(id), {
    what: `message ${id} final in its workflow with ${count} transitions and no DLR pending`,
    until: (held) => held === 'dropped' || (FINAL_STATUSES.includes(held.status) && held.pendingDlrs === 0 && (held.dlrs === null || held.dlrs === count)),
    timeoutMs: 30_000,
  });
}

async function dlrsFor(id: string, count: number, timeoutMs = 20_000): Promise<ReceivedDlr[]> {
  await receiver.waitFor(() => receiver.forMessage(id).length >= count, timeoutMs);
  await settled(id, count); // nothing more can follow
  return receiver.forMessage(id);
}

describe('spec 1 §2.6 / DESIGN §6: each simulator path yields exactly its DLR sequence', () => {
  const paths: Array<[string, string, string[]]> = [
    ['default (delivered via sent → buffered → delivered)', '12', ['sent:0', 'buffered:0', 'delivered:0']],
    ['90: failed, absent temporarily', '90', ['sent:0', 'failed:2']],
    ['91: failed, absent permanently', '91', ['sent:0', 'failed:3']],
    ['92: rejected, antispam', '92', ['sent:0', 'rejected:6']],
    ['93: expired by the carrier', '93', ['sent:0', 'expired:1']],
    ['95: refused at submit → error, code 100', '95', ['error:100']],
    ['96: accepted then delivered', '96', ['sent:0', 'accepted:0', 'delivered:0']],
    ['97: unknown', '97', ['sent:0', 'unknown:99']],
    ['98: canceled (DELETED)', '98', ['sent:0', 'canceled:0']],
    ['89: buffered then failed, network error', '89', ['sent:0', 'buffered:0', 'failed:8']],
  ];
  test.each(paths)('%s', async (_name, lastTwo, expected) => {
    const { id, clientId } = await send(number(lastTwo));
    const dlrs = await dlrsFor(id, expected.length);
    expect(statuses(dlrs)).toEqual(expected);
    for (const d of dlrs) {
      expect(d.body).toEqual({ id, clientId, status: expect.any(String), code: expect.any(Number), eventAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
      expect(new StandardWebhook(secret).verify(d.raw, d.headers as Record<string, string>)).toEqual(d.body);
    }
    const final = await api(`${V1}/sms/${id}`, { token: tenant.token });
    expect((final.body as { entity: { status: string; statusCode: number } }).entity).toMatchObject({ status: expected.at(-1)?.split(':')[0], statusCode: Number(expected.at(-1)?.split(':')[1]) });
  });

  test('a signature made with another secret does not verify', async () => {
    const { id } = await send(number('13'));
    const [first] = await dlrsFor(id, 3);
    expect(first).toBeDefined();
    expect(() => new StandardWebhook(`whsec_${Buffer.from('another secret').toString('base64')}`).verify(first?.raw ?? '', (first?.headers ?? {}) as Record<string, string>)).toThrow('No matching signature');
  });

  test('DESIGN §4: a message refused before reaching any carrier (error) is refunded', async () => {
    const before = await api(`${V1}/organization/account`, { token: tenant.token });
    const { id } = await send(number('95'));
    await dlrsFor(id, 1);
    const available = async (): Promise<number> => ((await api(`${V1}/organization/account`, { token: tenant.token })).body as { entity: { available: number } }).entity.available;
    const refunded = (before.body as { entity: { available: number } }).entity.available;
    const after = await eventually(available, { what: 'the refund of the message refused at submit', until: (a) => Math.abs(a - refunded) < 5e-7 });
    expect(after).toBeCloseTo(refunded, 6);
  });

  test('DESIGN §4: no final report within the validity period → expired, code 1 (94: the carrier stays silent)', async () => {
    const { id } = await send(number('94'));
    const dlrs = await dlrsFor(id, 2, 30_000);
    expect(statuses(dlrs)).toEqual(['sent:0', 'expired:1']);
  }, 40_000);
});

describe('spec 1 §6 rule 3: one DLR per transition, in per-message order', () => {
  test('a multi-segment message yields one DLR per transition of its aggregate', async () => {
    const { id } = await send(number('14'), { text: 'x'.repeat(400) });
    const dlrs = await dlrsFor(id, 3);
    expect(statuses(dlrs)).toEqual(['sent:0', 'buffered:0', 'delivered:0']);
  });

  test('spec 1 §4 bulk rule 4: each accepted bulk item gets its own DLRs', async () => {
    const items = ['15', '16', '90'].map((lastTwo, i) => ({ from: 'Lifecycle', to: number(lastTwo), text: `bulk ${i}`, clientId: `bulk-${newId()}`.slice(0, 40) }));
    const res = await api(`${V1}/sms/bulk`, { token: tenant.token, body: items });
    expect(res.status).toBe(201);
    const ids = (res.body as { entities: Array<{ id: string }> }).entities.map((e) => e.id);
    expect(ids).toHaveLength(3);
    expect(statuses(await dlrsFor(ids[0] as string, 3))).toEqual(['sent:0', 'buffered:0', 'delivered:0']);
    expect(statuses(await dlrsFor(ids[1] as string, 3))).toEqual(['sent:0', 'buffered:0', 'delivered:0']);
    expect(statuses(await dlrsFor(ids[2] as string, 2))).toEqual(['sent:0', 'failed:2']);
    expect(receiver.forMessage(ids[2] as string).every((d) => d.body['clientId'] === items[2]?.clientId)).toBe(true);
  });

  test('a receipt delivered twice changes nothing twice', async () => {
    const { id } = await send(number('17'));
    await dlrsFor(id, 3);
    const ack = await withAccounts(async (_a, _b, nats) => nats.js.publish(SUBJECTS.carrierEvents, JSON.stringify({ kind: 'receipt', messageId: id, segment: 0, segments: 1, carrier: 'simulator', carrierMessageId: 'dup', state: 'DELIVRD', err: 0, at: new Date().toISOString() }), { msgID: `dup-${id}` }));
    // The lifecycle bridge has handed the duplicate on (its ack floor passed it), and the
    // workflow, asked after that, still holds three transitions and nothing pending.
    await consumerPassed(STREAMS.carrier.name, CONSUMERS.lifecycleEvents, ack.seq, 'the duplicate receipt');
    await settled(id, 3);
    expect(statuses(receiver.forMessage(id))).toEqual(['sent:0', 'buffered:0', 'delivered:0']);
  });
});

describe('DESIGN §4 webhook retries: durable, backoff from the initial interval doubling to the cap', () => {
  test('the webhook down then up: every DLR arrives, in order, and retry gaps follow the schedule', async () => {
    const down = new Set<string>();
    const to = number('18');
    receiver.respond = (dlr) => (down.has(String(dlr.body['id'])) ? 503 : 200);
    const clientId = `retry-${newId()}`.slice(0, 40);
    const res = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Lifecycle', to, text: 'retry', clientId } });
    const id = (res.body as { entity: { id: string } }).entity.id;
    down.add(id);
    await receiver.waitFor((all) => all.filter((r) => r.body['id'] === id).length >= 4, 30_000);
    down.delete(id);
    const dlrs = await dlrsFor(id, 3, 20_000);
    receiver.respond = () => 200;
    expect(statuses(dlrs)).toEqual(['sent:0', 'buffered:0', 'delivered:0']);
    const attempts = receiver.received.filter((r) => r.body['id'] === id && r.body['status'] === 'sent');
    const failed = attempts.filter((a) => a.answered === 503);
    expect(failed.length).toBeGreaterThanOrEqual(3);
    // The test stack's schedule (WEBHOOK_RETRY_*): 1 s, doubling, 4 s cap. Attempt 1 is the local
    // one; the workflow waits the initial interval before the server-side retries take over.
    const gaps = failed.slice(1).map((a, i) => a.at - (failed[i] as ReceivedDlr).at);
    expect(failed.map((a) => a.headers['x-webhook-attempt'])).toEqual(failed.map((_, i) => String(i + 1)));
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[1]).toBeGreaterThanOrEqual(900);
    expect(gaps[2]).toBeGreaterThanOrEqual(1800);
    expect(gaps[2]).toBeLessThan(4500);
    const history = await pollDlrHistory(id, 3);
    expect(history[0]?.attempts.length).toBeGreaterThanOrEqual(failed.length + 1);
    expect(history[0]?.attempts.at(-1)).toMatchObject({ outcome: 'delivered', responseStatus: 200 });
  }, 60_000);
});

interface HistoryEntry { seq: number; status: string; code: number; attempts: Array<{ attempt: number; outcome: string; responseStatus: number | null }> }

async function pollDlrHistory(id: string, transitions: number): Promise<HistoryEntry[]> {
  return eventually(async () => ((await api(`${V1}/sms/${id}/dlrs`, { token: tenant.token })).body as { entities?: HistoryEntry[] }).entities ?? [], {
    what: `${transitions} transitions of ${id}, each with a delivered attempt, in GET /sms/{id}/dlrs`,
    until: (entities) => entities.length >= transitions && entities.every((e) => e.attempts.some((a) => a.outcome === 'delivered')),
    timeoutMs: 30_000,
  });
}

describe('GET /sms/{id}/dlrs: transitions with their webhook attempts', () => {
  test('lists every transition in order with the attempt that delivered it', async () => {
    const { id } = await send(number('19'));
    await dlrsFor(id, 3);
    const history = await pollDlrHistory(id, 3);
    expect(history.map((h) => `${h.seq}:${h.status}:${h.code}`)).toEqual(['1:sent:0', '2:buffered:0', '3:delivered:0']);
    expect(history.every((h) => h.attempts[0]?.outcome === 'delivered' && h.attempts[0]?.responseStatus === 200)).toBe(true);
  });
});

describe('issue 13 operations: from a message to the batch workflow that holds it', () => {
  test("a bulk's messages share one batch workflow, named by GET /sms/{id}/dlrs and admin message story; message history exports it", async () => {
    const items = ['21', '22'].map((lastTwo, i) => ({ from: 'Lifecycle', to: number(lastTwo), text: `ops ${i}` }));
    const res = await api(`${V1}/sms/bulk`, { token: tenant.token, body: items });
    const ids = (res.body as { entities: Array<{ id: string }> }).entities.map((e) => e.id);
    for (const id of ids) await dlrsFor(id, 3);
    const workflows = await Promise.all(ids.map(async (id) => ((await api(`${V1}/sms/${id}/dlrs`, { token: tenant.token })).body as { workflow: { id: string; firstRunId: string | null } }).workflow));
    expect(workflows[0]?.id).toMatch(/^smsb-/);
    expect(workflows[1]).toEqual(workflows[0]);
    const story = await admin<{ message: { status: string }; workflow: { id: string; type: string; runId: string; ui: string; messagesInBatch: number }; carrierEvents: Array<{ kind: string; carrierMessageId?: string }>; transitions: Array<{ status: string }>; attempts: Array<{ seq: number; outcome: string; responseStatus: number; latencyMs: number }> }>('message', 'story', '--id', ids[0] as string);
    expect(story.message.status).toBe('delivered');
    expect(story.workflow).toMatchObject({ id: workflows[0]?.id, type: 'smsBatchLifecycle', messagesInBatch: 2 });
    expect(story.workflow.ui).toContain(encodeURIComponent(story.workflow.runId));
    expect(story.carrierEvents.map((e) => e.kind)).toEqual(expect.arrayContaining(['submitted', 'receipt']));
    expect(story.carrierEvents.every((e) => typeof e.carrierMessageId === 'string')).toBe(true);
    expect(story.transitions.map((t) => t.status)).toEqual(['sent', 'buffered', 'delivered']);
    expect(story.attempts.map((a) => `${a.seq}:${a.outcome}:${a.responseStatus}`)).toEqual(['1:delivered:200', '2:delivered:200', '3:delivered:200']);
    const out = join(mkdtempSync(join(tmpdir(), 'history-')), 'h.json');
    const exported = await admin<{ workflowId: string; events: number }>('message', 'history', '--id', ids[1] as string, '--out', out);
    expect(exported.workflowId).toBe(workflows[0]?.id);
    expect(existsSync(out)).toBe(true);
    const history = JSON.parse(readFileSync(out, 'utf8')) as { events: Array<{ eventType: string }> };
    expect(history.events).toHaveLength(exported.events);
    expect(history.events[0]?.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
  }, 60_000);
});

describe('spec 1 §6: two-way, inbound and stop', () => {
  test('inbound text and STOP reach the webhook with `message`; STOP opts the sender out (422 on the next send)', async () => {
    const ours = `+4915550${String(Date.now() % 1000000).padStart(6, '0')}`;
    const handset = number('20');
    await withAccounts(async (accounts) => { await accounts.addNumber(tenant.tokenId, ours); });
    await accountsMirrored();
    await withAccounts(async (_a, _b, nats) => {
      for (const text of ['hello there', 'STOP']) {
        const reply = await nats.nc.request('simulator.mo', JSON.stringify({ from: handset, to: ours, text }), { timeout: 5000 });
        expect(reply.json<{ ok: boolean }>().ok).toBe(true);
      }
    });
    await receiver.waitFor((all) => all.filter((r) => r.body['message'] !== undefined && String(r.body['eventAt']).length > 0 && ['inbound', 'stop'].includes(String(r.body['status']))).length >= 2, 15_000);
    const inbound = receiver.received.filter((r) => r.body['message'] === 'hello there');
    const stop = receiver.received.filter((r) => r.body['message'] === 'STOP');
    expect(inbound[0]?.body).toMatchObject({ status: 'inbound', code: 0, message: 'hello there', id: expect.any(String) });
    expect(stop[0]?.body).toMatchObject({ status: 'stop', code: 0, message: 'STOP' });
    const refused = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Lifecycle', to: handset, text: 'after stop' } });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ errors: { fields: { to: [expect.stringMatching(/opted out/)] } } });
  }, 30_000);
});
