// Charges held until the stream has what they paid for (docs/acceptance.md, "Charges held until
// the stream has them"; issue 15: "a 201 means durable on JetStream and charged exactly once";
// spec 1 §2.1, §4, §8): on the stack's real NATS, every accepted request's hold is settled and
// the balance charged once; a request that died after charging and before its publish (its
// queue never answers, as a killed process leaves it) is refunded by the charge settler, its
// stored state canceled and its clientId freed for a retry, which until then is not told the
// message is on its way; a request that died after its publish but before its own settle is
// settled from the stream's header and keeps its charge. A publish whose acknowledgement never
// came (it may be stored) keeps its charge held for the settler, which settles or refunds it.
import { BUCKETS, KV_KEYS } from '../../core/bus';
import { OutcomeUnknownError } from '../../core/errors';
import { batchOf } from '../../core/ids';
import { SmsAcceptance, type Submitter } from '../../core/sms/acceptance';
import type { SmsMessage } from '../../core/sms/message';
import type { ChargeHold } from '../../core/accounts/types';
import type { AcceptedQueue, Funds } from '../../core/sms/ports';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { CANCELED_CODE, startChargeSettler, type ChargeSettler } from '../../pipelines/charge-settler';
import { BalanceLedger } from '../../stores/balance-ledger';
import { KvLifecycleStates } from '../../stores/lifecycle-records';
import { JetStreamAcceptedQueue } from '../../infra/bus/accepted-queue';
import { KvClientIds } from '../../stores/client-ids';
import { KvMessageStates } from '../../stores/message-state';
import { eventually } from '../../support/eventually';
import { admin, api, stack } from '../../support/stack';
import { balanceMicros, createTenant, V1, type Tenant } from '../../support/tenants';

type Res = Awaited<ReturnType<typeof api>>;
interface Entity { id: string; clientId: string | null; status: string }
const entityOf = (res: Res): Entity => (res.body as { entity: Entity }).entity;

/** 0.075 EUR per DE message, 0.005 EUR per lookup in the test tenants' price lists. */
const PRICE_MICROS = 75_000;
const LOOKUP_MICROS = 5_000;
const REFUND_AFTER_MS = 1500;
/** A hold taken by the test itself, to show how far a sweep got. */
const CONTROL_HOLD = '0190a0b0-0000-7000-8000-00000000c0de';

const item = (clientId?: string): Record<string, unknown> => ({ from: 'TestCo', to: '+4915112345678', text: 'Your code is 1234', ...(clientId ? { clientId } : {}) });

describe('charge holds (the charge settler on the real bus)', () => {
  let nats: Nats;
  let ledger: BalanceLedger;
  let settler: ChargeSettler;
  let states: KvMessageStates;

  /** The acceptance core of a gateway process, over this test's own connection: `queue` and `funds` say how it dies. */
  const gateway = (queue: AcceptedQueue, funds: Funds = ledger): SmsAcceptance => new SmsAcceptance({
    prices: { price: () => ({ priceMicros: PRICE_MICROS, currency: 'EUR' }) } as never,
    funds, states, queue, clientIds: new KvClientIds(nats.kv.idempotency), optOuts: { isOptedOut: () => false },
  });
  const submitter = (t: Tenant): Submitter => ({ orgId: t.orgId, projectId: t.projectId, tokenId: t.tokenId, source: 'http', currency: 'EUR' });
  const holdsOf = async (orgId: string): Promise<Readonly<Record<string, ChargeHold>>> => (await ledger.get(orgId))?.holds ?? {};

  /**
   * Sweeps `orgId` until the settler refunds something (a hold aged past REFUND_AFTER_MS of the
   * stream time it has handled) and returns how many that sweep refunded; none was refunded
   * before the oldest hold open now was REFUND_AFTER_MS old.
   */
  const sweepUntilRefunded = async (orgId: string): Promise<number> => {
    const oldest = Math.min(...Object.values(await holdsOf(orgId)).map((h) => h.at));
    const refunded = await eventually(() => settler.sweep([orgId]), { what: `the settler to refund a stale hold of ${orgId}`, until: (n) => n > 0, intervalMs: 100 });
    expect(Date.now() - oldest).toBeGreaterThanOrEqual(REFUND_AFTER_MS);
    return refunded;
  };

  /**
   * Shows that the charges of `orgId` so far are not refunded even once aged: a control hold
   * taken now is refunded alone when a sweep has passed its age (so theirs too), and the
   * balance is what it was.
   */
  const expectOnlyControlRefunded = async (orgId: string): Promise<void> => {
    const before = await balanceMicros(orgId);
    expect(await ledger.charge(orgId, LOOKUP_MICROS, { id: CONTROL_HOLD })).toBe(true);
    expect(await sweepUntilRefunded(orgId)).toBe(1);
    expect(await holdsOf(orgId)).toEqual({});
    expect(await balanceMicros(orgId)).toBe(before);
  };

  /**
   * `holdId` (a message with `clientId`, charged from a balance of 1 EUR) never reached the
   * stream: a retry is not told it is on its way while the charge is held (it waits, then 500);
   * the settler refunds it and cancels its state; the retry is then accepted as a new message,
   * charged once.
   */
  const expectRefundedThenRetried = async (t: Tenant, holdId: string, clientId: string): Promise<void> => {
    const early = await api(`${V1}/sms`, { token: t.token, body: item(clientId) });
    expect(early.status).toBe(500);
    expect((early.body as { detail: string }).detail).toMatch(/held by a request still being accepted/);

    expect(await sweepUntilRefunded(t.orgId)).toBe(1);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000);
    expect(await holdsOf(t.orgId)).toEqual({});
    expect(await states.get(holdId)).toMatchObject({ status: 'canceled', statusCode: CANCELED_CODE, charged: false });
    expect(await settler.sweep([t.orgId])).toBe(0);

    const retry = await api(`${V1}/sms`, { token: t.token, body: item(clientId) });
    expect(retry.status).toBe(201);
    expect(entityOf(retry).id).not.toBe(holdId);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
  };

  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'charge-settler-test' }, createLogger('error'));
    ledger = new BalanceLedger(nats.kv.balances, nats.pipeline);
    states = new KvMessageStates(nats.pipeline);
    // Shares the durable with the stack's own settler; sweeps only when asked, only the tenants asked for.
    settler = await startChargeSettler({
      nats, ledger, refundAfterMs: REFUND_AFTER_MS, sweepEveryMs: 3_600_000, log: createLogger('error'),
      states: new KvLifecycleStates(nats.kv.messages, { jetstream: nats.pipeline, bucket: BUCKETS.messages }), clientIds: new KvClientIds(nats.kv.idempotency),
    });
  });

  afterAll(async () => {
    await settler.stop();
    await nats.close();
  });

  test('accepted through the API (a send with a clientId, a bulk, a lookup): charged exactly once, no hold left open', async () => {
    const t = await createTenant({ balance: 1 });
    expect((await api(`${V1}/sms`, { token: t.token, body: item('settled-1') })).status).toBe(201);
    expect((await api(`${V1}/sms/bulk`, { token: t.token, body: [item(), item(), item()] })).status).toBe(201);
    expect((await api(`${V1}/lookup`, { token: t.token, body: { to: '+4915112345678' } })).status).toBe(201);
    expect(await eventually(() => holdsOf(t.orgId), { what: 'no hold left open', until: (h) => Object.keys(h).length === 0 })).toEqual({});
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - 4 * PRICE_MICROS - LOOKUP_MICROS);
    expect(await settler.sweep([t.orgId])).toBe(0);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - 4 * PRICE_MICROS - LOOKUP_MICROS);
  });

  test('died after charging and storing, before the publish: refunded, its state canceled, its clientId accepted again as a new message', async () => {
    const t = await createTenant({ balance: 1 });
    const never: AcceptedQueue = { enqueue: () => new Promise<void>(() => undefined) };
    void gateway(never).submitOne(submitter(t), item('dead-before-publish'));
    const held = await eventually(() => holdsOf(t.orgId), { what: 'the one hold', until: (h) => Object.keys(h).length === 1 });
    expect(Object.keys(held)).toHaveLength(1);
    const [holdId] = Object.keys(held) as [string];
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
    const stored = await eventually(() => states.get(holdId), { what: 'the stored state', until: (m) => m !== null });
    expect(stored?.status).toBe('queued');

    // An operator sees the held charge.
    expect(await admin('balance', 'show', '--org', t.orgId)).toMatchObject({ available: 0.925, held: { count: 1, amount: 0.075 } });

    await expectRefundedThenRetried(t, holdId, 'dead-before-publish');
  });

  test('a bulk died after charging and storing its one state record, before the publish: refunded, every clientId message canceled, each accepted again', async () => {
    const t = await createTenant({ balance: 1 });
    const never: AcceptedQueue = { enqueue: () => new Promise<void>(() => undefined) };
    void gateway(never).submitBulk(submitter(t), [item('bulk-dead-a'), item(), item('bulk-dead-c')]);
    const held = await eventually(() => holdsOf(t.orgId), { what: 'the one hold', until: (h) => Object.keys(h).length === 1 });
    const [holdId] = Object.keys(held) as [string];
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - 3 * PRICE_MICROS);
    // The three states are one record (core/bus/state-batch.ts): no message has a key of its own yet.
    expect(await nats.kv.messages.get(KV_KEYS.messageState(holdId))).toBeNull();
    expect(await nats.kv.messages.get(KV_KEYS.messageBatch(batchOf(holdId)))).not.toBeNull();
    const first = await eventually(() => states.get(holdId), { what: 'the stored state', until: (m) => m !== null });
    expect(first).toMatchObject({ status: 'queued', clientId: 'bulk-dead-a' });

    expect(await sweepUntilRefunded(t.orgId)).toBe(1);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000);
    const retry = await api(`${V1}/sms/bulk`, { token: t.token, body: [item('bulk-dead-a'), item('bulk-dead-c')] });
    expect(retry.status).toBe(201);
    const [a, c] = (retry.body as { entities: Entity[] }).entities as [Entity, Entity];
    for (const e of [a, c]) expect(batchOf(e.id)).not.toBe(batchOf(holdId));
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - 2 * PRICE_MICROS);
    // The canceled ones were written to keys of their own, which win over the record.
    const record = (await nats.kv.messages.get(KV_KEYS.messageBatch(batchOf(holdId))))?.string() ?? '';
    const accepted = record.split('\n').map((line) => JSON.parse(line) as SmsMessage);
    expect(accepted.map((m) => m.clientId)).toEqual(['bulk-dead-a', null, 'bulk-dead-c']);
    const canceled = await Promise.all(accepted.filter((m) => m.clientId).map((m) => states.get(m.id)));
    for (const m of canceled) expect(m).toMatchObject({ status: 'canceled', statusCode: CANCELED_CODE, charged: false });
  });

  test('died after the publish, before its own settle: settled from the stream, the charge kept, the message delivered', async () => {
    const t = await createTenant({ balance: 1 });
    const noSettle: Funds = { charge: ledger.charge.bind(ledger), credit: ledger.credit.bind(ledger), isHeld: ledger.isHeld.bind(ledger), settle: () => undefined };
    const accepted: SmsMessage = await gateway(new JetStreamAcceptedQueue(nats.pipeline), noSettle).submitOne(submitter(t), item('dead-after-publish'));
    expect(await eventually(() => holdsOf(t.orgId), { what: 'no hold left open', until: (h) => Object.keys(h).length === 0 })).toEqual({});
    await expectOnlyControlRefunded(t.orgId);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
    const state = await eventually(() => states.get(accepted.id), { what: 'the message delivered', until: (m) => m?.status === 'delivered' });
    expect(state).toMatchObject({ status: 'delivered', charged: true });
  });

  test('the stream stored the messages but its acknowledgement was lost: 500 naming it, the charge neither refunded on the spot nor twice, settled from the stream, sent once', async () => {
    const t = await createTenant({ balance: 1 });
    const real = new JetStreamAcceptedQueue(nats.pipeline);
    const ackLost: AcceptedQueue = {
      enqueue: async (messages, hold) => {
        await real.enqueue(messages, hold);
        throw new OutcomeUnknownError('sms.accepted: no publish acknowledgement within 5000 ms');
      },
    };
    const failed = await gateway(ackLost).submitOne(submitter(t), item('ack-lost')).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: 'INTERNAL' });
    expect((failed as Error).message).toMatch(/did not confirm the messages in time: the charge stays if it stored/);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
    // The settler reads the stream message's header and settles the hold; nothing is refunded later.
    expect(await eventually(() => holdsOf(t.orgId), { what: 'no hold left open', until: (h) => Object.keys(h).length === 0 })).toEqual({});
    await expectOnlyControlRefunded(t.orgId);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
    // The retry with the same clientId is the stored message, not a second one.
    const retry = await api(`${V1}/sms`, { token: t.token, body: item('ack-lost') });
    expect(retry.status).toBe(201);
    const sent = entityOf(retry);
    expect(await eventually(() => states.get(sent.id), { what: 'the message delivered', until: (m) => m?.status === 'delivered' })).toMatchObject({ status: 'delivered', charged: true, clientId: 'ack-lost' });
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
  });

  test('unconfirmed and never stored: 500, the clientId kept until the settler refunds and cancels, then accepted as a new message', async () => {
    const t = await createTenant({ balance: 1 });
    const lost: AcceptedQueue = { enqueue: () => Promise.reject(new OutcomeUnknownError('sms.accepted: no publish acknowledgement within 5000 ms')) };
    const failed = await gateway(lost).submitOne(submitter(t), item('never-stored')).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: 'INTERNAL' });
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
    const [holdId] = Object.keys(await holdsOf(t.orgId)) as [string];
    expect(holdId).toBeDefined();
    await expectRefundedThenRetried(t, holdId, 'never-stored');
  });

  test('a queue that fails for sure (the stream refused): refunded on the spot, the clientId free at once', async () => {
    const t = await createTenant({ balance: 1 });
    const refused: AcceptedQueue = { enqueue: () => Promise.reject(new Error('no responders: no stream stores this subject')) };
    const failed = await gateway(refused).submitOne(submitter(t), item('refused')).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: 'INTERNAL' });
    expect((failed as Error).message).toMatch(/nothing was charged/);
    expect(await eventually(() => balanceMicros(t.orgId), { what: 'the charge refunded', until: (b) => b === 1_000_000 })).toBe(1_000_000);
    expect(await holdsOf(t.orgId)).toEqual({});
    const retry = await api(`${V1}/sms`, { token: t.token, body: item('refused') });
    expect(retry.status).toBe(201);
  });

  test('the lookup path: died after charging, before the lookup was stored: refunded', async () => {
    const t = await createTenant({ balance: 1 });
    await ledger.charge(t.orgId, LOOKUP_MICROS, { id: '0190a0b0-0000-7000-8000-00000000dead' });
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - LOOKUP_MICROS);
    expect(await sweepUntilRefunded(t.orgId)).toBe(1);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000);
  });
});
