// Two-way end to end on the real stack (DESIGN "Two-way", spec 1 §2.2, §2.6, §6): the carrier
// simulator sends a mobile-originated message to one of our numbers (the `simulator.mo`
// request, as `npm run admin -- simulator mo` makes it) → carrier connector → lifecycle bridge
// → an inbound DLR naming the handset (`from`) and our number (`to`) → the message stored and
// read by id (direction inbound) and in the list (direction_eq) → a reply, an ordinary
// POST /sms from our number to the handset → delivered. Another organization gets a 404.
import { SUBJECTS } from '../../core/bus/names';
import { inboundMessageId } from '../../core/sms/inbound';
import { eventually } from '../../support/eventually';
import { api } from '../../support/stack';
import { accountsMirrored, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';
import { startWebhookReceiver, type ReceivedDlr, type WebhookReceiver } from '../../support/webhook-receiver';

let receiver: WebhookReceiver;
let tenant: Tenant;
let other: Tenant;
const ours = `+4915551${String(Date.now() % 1000000).padStart(6, '0')}`;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  tenant = await createTenant({ name: 'Two-way Org' });
  other = await createTenant({ name: 'Another Org' });
  await withAccounts(async (accounts) => {
    await accounts.setWebhook(tenant.tokenId, receiver.url);
    await accounts.addNumber(tenant.tokenId, ours);
  });
  await accountsMirrored();
}, 60_000);
afterAll(() => receiver.close());

let counter = 0;
/** A German mobile number ending in 12: the simulator delivers a message to it (docs/carrier.md). */
function handset(): string {
  counter += 1;
  return `+491512${String(Date.now() % 10000).padStart(4, '0')}${counter % 10}12`;
}

async function simulateMo(from: string, text: string): Promise<void> {
  await withAccounts(async (_a, _b, nats) => {
    const reply = await nats.nc.request(SUBJECTS.simulatorMo, JSON.stringify({ from, to: ours, text }), { timeout: 5000 });
    expect(reply.json<{ ok: boolean }>()).toEqual({ ok: true });
  });
}

async function inboundDlr(from: string, text: string): Promise<ReceivedDlr> {
  await receiver.waitFor((all) => all.some((r) => r.body['message'] === text && r.body['from'] === from), 30_000);
  return receiver.received.find((r) => r.body['message'] === text && r.body['from'] === from) as ReceivedDlr;
}

type Entity = Record<string, unknown>;
const entityOf = (res: { body: unknown }): Entity => (res.body as { entity: Entity }).entity;
const idsOf = (res: { body: unknown }): string[] => (res.body as { entities: Entity[] }).entities.map((e) => String(e['id']));

/** GET /sms/{id} once the history writer has stored it (it arrives within about a second of its DLR). */
async function readBack(id: string, token = tenant.token): Promise<Entity> {
  return entityOf(await eventually(() => api(`${V1}/sms/${id}`, { token }), { what: `GET /sms/${id} to answer 200`, until: (res) => res.status === 200, timeoutMs: 20_000 }));
}

describe('DESIGN Two-way: an inbound message, read back, answered', () => {
  test('spec 1 §2.6: the inbound DLR names the handset and our number; GET /sms/{id} answers it as direction inbound; a reply to `from` is delivered', async () => {
    const phone = handset();
    await simulateMo(phone, 'hi there, is my order ready?');
    const dlr = await inboundDlr(phone, 'hi there, is my order ready?');
    expect(dlr.body).toEqual({
      id: expect.any(String), status: 'inbound', code: 0, eventAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      message: 'hi there, is my order ready?', from: phone, to: ours,
    });
    const id = String(dlr.body['id']);
    // The bridge published it on sms.inbound.<token> under msgID inbound-<carrier's inbound id> (a redelivery is a duplicate).
    await withAccounts(async (_a, _b, nats) => {
      const subject = SUBJECTS.smsInbound(tenant.tokenId);
      const stored = await nats.jsm.streams.getMessage(await nats.jsm.streams.find(subject), { last_by_subj: subject });
      const record = stored?.json<{ inbound: Array<{ id: string; at: string }> }>().inbound[0];
      expect(record?.id).toBe(id);
      const msgId = stored?.header.get('Nats-Msg-Id') ?? '';
      expect(msgId).toMatch(/^inbound-./);
      expect(inboundMessageId(msgId.slice('inbound-'.length), record?.at ?? '')).toBe(id);
    });

    const inbound = await readBack(id);
    expect(inbound).toMatchObject({
      id, direction: 'inbound', status: 'inbound', statusCode: 0, from: phone, to: ours, country: 'DE',
      text: 'hi there, is my order ready?', message: 'hi there, is my order ready?', charged: false, pricePerSms: 0, priceUser: 0, clientId: null,
    });
    // Its DLR and webhook attempt, as for any message (GET /sms/{id}/dlrs).
    await eventually(() => api(`${V1}/sms/${id}/dlrs`, { token: tenant.token }), {
      what: 'the inbound DLR and its attempt in /dlrs',
      until: (res) => {
        const [entry] = (res.body as { entities: Array<{ seq: number; status: string; attempts: Array<{ outcome: string }> }> }).entities;
        return entry?.seq === 1 && entry.status === 'inbound' && entry.attempts.some((a) => a.outcome === 'delivered');
      },
    });

    // The reply: an ordinary send from the number that received it to the handset that sent it.
    const sent = await api(`${V1}/sms`, { token: tenant.token, body: { from: dlr.body['to'], to: dlr.body['from'], text: 'Yes, it is ready.' } });
    expect(sent.status).toBe(201);
    const reply = entityOf(sent);
    expect(reply).toMatchObject({ direction: 'outbound', from: ours, to: phone, charged: true });
    await receiver.waitFor(() => receiver.forMessage(String(reply['id'])).some((r) => r.body['status'] === 'delivered'), 30_000);
    expect(receiver.forMessage(String(reply['id'])).every((r) => r.body['from'] === undefined && r.body['to'] === undefined)).toBe(true);
    expect(await readBack(String(reply['id']))).toMatchObject({ direction: 'outbound' });

    // GET /sms: both in the normal list, each on its side of direction_eq.
    await eventually(async () => {
      const [all, inboundOnly, outboundOnly] = await Promise.all(['', '?direction_eq=inbound', '?direction_eq=outbound'].map((qs) => api(`${V1}/sms${qs}`, { token: tenant.token })));
      expect(idsOf(all as { body: unknown })).toEqual(expect.arrayContaining([id, String(reply['id'])]));
      expect(idsOf(inboundOnly as { body: unknown })).toContain(id);
      expect(idsOf(inboundOnly as { body: unknown })).not.toContain(String(reply['id']));
      expect(idsOf(outboundOnly as { body: unknown })).toContain(String(reply['id']));
      expect(idsOf(outboundOnly as { body: unknown })).not.toContain(id);
    }, { what: 'the list split by direction' });

    // Another organization: 404, as for any message it does not own.
    const foreign = await api(`${V1}/sms/${id}`, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ status: 404 });
    expect(idsOf(await api(`${V1}/sms?direction_eq=inbound`, { token: other.token }))).not.toContain(id);
  }, 90_000);

  test('spec 1 §2.6: a STOP keyword is a stop DLR with from/to, stored as an inbound message with status stop', async () => {
    const phone = handset();
    await simulateMo(phone, 'STOP');
    const dlr = await inboundDlr(phone, 'STOP');
    expect(dlr.body).toMatchObject({ status: 'stop', code: 0, message: 'STOP', from: phone, to: ours });
    const id = String(dlr.body['id']);
    expect(await readBack(id)).toMatchObject({ id, direction: 'inbound', status: 'stop', from: phone, to: ours, message: 'STOP', charged: false });
    await eventually(() => api(`${V1}/sms?direction_eq=inbound&status_eq=stop`, { token: tenant.token }), {
      what: 'the stop message in the filtered list', until: (res) => idsOf(res).includes(id),
    });
  }, 60_000);
});
