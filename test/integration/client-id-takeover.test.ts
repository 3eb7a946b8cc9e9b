// A clientId claim left by a request that died (kill -9) between its claim and its message
// state (docs/acceptance.md, "A clientId claim orphaned by kill -9"; DESIGN §4 clientId
// idempotency): a retry older than the takeover age takes it over and is accepted once; a
// younger one is answered 500 naming when to retry and changes nothing; a request never frees a
// claim that was taken from it. The orphans are planted in the stack's real NATS KV exactly as
// a dead request leaves them.
import { CLAIM_TAKEOVER_MS } from '../../core/sms/acceptance';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { KvClientIds } from '../../stores/client-ids';
import { KV_KEYS } from '../../core/bus/names';
import { CANCELED_CODE } from '../../pipelines/charge-settler';
import { idAt, makeMessage } from '../../support/message-rows';
import { api, stack } from '../../support/stack';
import { balanceMicros, createTenant, V1, type Tenant } from '../../support/tenants';

type Res = Awaited<ReturnType<typeof api>>;
interface Entity { id: string; clientId: string | null; status: string }

const item = (clientId: string): Record<string, unknown> => ({ from: 'TestCo', to: '+4915112345678', text: 'Your code is 1234', clientId });
const send = (t: Tenant, body: unknown): Promise<Res> => api(`${V1}/sms`, { token: t.token, body });
const bulk = (t: Tenant, body: unknown): Promise<Res> => api(`${V1}/sms/bulk`, { token: t.token, body });
const entityOf = (res: Res): Entity => (res.body as { entity: Entity }).entity;
const entitiesOf = (res: Res): Entity[] => (res.body as { entities: Entity[] }).entities;

/** 0.075 EUR per DE message in the test tenants' price list. */
const PRICE_MICROS = 75_000;

describe('clientId claims orphaned by a dead request', () => {
  let nats: Nats;
  let claims: KvClientIds;

  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'client-id-takeover' }, createLogger('error'));
    claims = new KvClientIds(nats.kv.idempotency);
  });

  afterAll(async () => { await nats.close(); });

  test('a claim older than the takeover age with no message: the retry is accepted as a new message, charged once, and replays after', async () => {
    const t = await createTenant({ balance: 1 });
    const orphan = idAt(Date.now() - CLAIM_TAKEOVER_MS - 5000);
    expect(await claims.claim(t.projectId, 'order-dead-1', orphan)).toBeNull();

    const res = await send(t, item('order-dead-1'));
    expect(res.status).toBe(201);
    const accepted = entityOf(res);
    expect(accepted.id).not.toBe(orphan);
    expect(accepted.clientId).toBe('order-dead-1');
    expect(await claims.claim(t.projectId, 'order-dead-1', idAt(Date.now()))).toBe(accepted.id);

    const again = await send(t, item('order-dead-1'));
    expect([200, 201]).toContain(again.status);
    expect(entityOf(again).id).toBe(accepted.id);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
  });

  test('a young claim with no message: 500 naming when it is released, nothing charged, the claim unchanged', async () => {
    const t = await createTenant({ balance: 1 });
    const inFlight = idAt(Date.now() - 1000);
    expect(await claims.claim(t.projectId, 'order-young', inFlight)).toBeNull();

    const res = await send(t, item('order-young'));
    expect(res.status).toBe(500);
    expect((res.body as { detail: string }).detail).toMatch(/clientId "order-young" is held by a request still being accepted; retry shortly .*released to a retry in \d+ s/);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000);
    expect(await claims.claim(t.projectId, 'order-young', idAt(Date.now()))).toBe(inFlight);
  });

  test('a bulk whose items hold orphaned and replayable claims: orphans become new messages, the stored one replays', async () => {
    const t = await createTenant({ balance: 1 });
    const stored = entityOf(await send(t, item('bulk-stored')));
    const old = Date.now() - CLAIM_TAKEOVER_MS - 1000;
    await claims.claim(t.projectId, 'bulk-dead-a', idAt(old));
    await claims.claim(t.projectId, 'bulk-dead-b', idAt(old));

    const res = await bulk(t, [item('bulk-dead-a'), item('bulk-stored'), item('bulk-dead-b'), item('bulk-new')]);
    expect(res.status).toBe(201);
    const ids = entitiesOf(res).map((e) => e.id);
    expect(ids[1]).toBe(stored.id);
    expect(new Set(ids).size).toBe(4);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - 4 * PRICE_MICROS);
  });

  test('a young claim whose message the charge settler canceled and refunded, not yet released: the retry is accepted as a new message (found by a reliability run)', async () => {
    const t = await createTenant({ balance: 1 });
    // What the settler leaves between its cancel and its release: a young claim (the settler refunds
    // holds from 30 s on; a claim is taken over from 60 s) naming a canceled, uncharged message.
    const dead = idAt(Date.now() - 35_000);
    expect(await claims.claim(t.projectId, 'order-refunded', dead)).toBeNull();
    const canceled = makeMessage({ id: dead, orgId: t.orgId, projectId: t.projectId, clientId: 'order-refunded', status: 'canceled', statusCode: CANCELED_CODE, charged: false });
    await nats.kv.messages.put(KV_KEYS.messageState(dead), JSON.stringify(canceled));

    const res = await send(t, item('order-refunded'));
    expect(res.status).toBe(201);
    const accepted = entityOf(res);
    expect(accepted.id).not.toBe(dead);
    expect(accepted.status).toBe('queued');
    expect(await claims.claim(t.projectId, 'order-refunded', idAt(Date.now()))).toBe(accepted.id);
    expect(await balanceMicros(t.orgId)).toBe(1_000_000 - PRICE_MICROS);
    // The settler's release comes after: it frees nothing that another message holds.
    await claims.release(t.projectId, 'order-refunded', dead);
    expect(await claims.claim(t.projectId, 'order-refunded', idAt(Date.now()))).toBe(accepted.id);
  });

  test('release frees only the claim its own message holds; takeOver needs the holder it names', async () => {
    const scope = `takeover-${Date.now()}`;
    const first = idAt(Date.now() - 1000);
    const second = idAt(Date.now());
    expect(await claims.claim(scope, 'c', first)).toBeNull();
    expect(await claims.takeOver(scope, 'c', second, idAt(Date.now()))).toBe(false);
    expect(await claims.takeOver(scope, 'c', first, second)).toBe(true);
    await claims.release(scope, 'c', first);
    expect(await claims.claim(scope, 'c', idAt(Date.now()))).toBe(second);
    await claims.release(scope, 'c', second);
    expect(await claims.claim(scope, 'c', first)).toBeNull();
  });
});
