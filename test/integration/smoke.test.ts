// Smoke suite: each engine proven for real through the project's own code.
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { newId } from '../../core/ids';
import type { SmsMessage } from '../../core/sms/message';
import { loadMigrations, migrate, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { STREAMS } from '../../core/bus/names';
import { connectNats, type Nats } from '../../infra/nats';
import { connectTemporal, type Temporal } from '../../infra/temporal';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { MessageHistory } from '../../stores/message-history';
import { admin, api, stack } from '../../support/stack';

const log = createLogger('warn');

describe('smoke: NATS JetStream', () => {
  let nats: Nats;
  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'smoke' }, log);
  });
  afterAll(() => nats.close());

  test('a message published on the SMS stream is consumed back with its payload', async () => {
    const subject = `sms.smoke.${newId()}`;
    const ack = await nats.js.publish(subject, JSON.stringify({ hello: 'jetstream' }));
    expect(ack.stream).toBe(STREAMS.sms.name);
    const consumer = await nats.js.consumers.get(STREAMS.sms.name, { filter_subjects: [subject], deliver_policy: DeliverPolicy.All });
    const msg = await consumer.next({ expires: 5000 });
    expect(msg?.subject).toBe(subject);
    expect(msg?.json()).toEqual({ hello: 'jetstream' });
    expect(AckPolicy.None).toBe('none');
  });

  test('KV buckets exist and hold what is put', async () => {
    const key = `smoke.${newId()}`;
    await nats.kv.messages.put(key, 'v1');
    expect((await nats.kv.messages.get(key))?.string()).toBe('v1');
  });
});

describe('smoke: Temporal', () => {
  let temporal: Temporal;
  beforeAll(async () => {
    temporal = await connectTemporal({ address: stack().temporalAddress, namespace: stack().namespace });
  });
  afterAll(() => temporal.close());

  test("the product's worker executes the systemProbe workflow on the real server", async () => {
    const result = await temporal.client.workflow.execute('systemProbe', {
      taskQueue: stack().taskQueue,
      workflowId: `smoke-${newId()}`,
      args: ['hello'],
      workflowExecutionTimeout: '30 seconds',
    });
    expect(result).toEqual({ echo: 'hello', worker: expect.stringMatching(/^worker-\d+@/) });
  });
});

describe('smoke: ClickHouse (chdb) through the project store', () => {
  let engine: EmbeddedClickHouse;
  let ch: ClickHouse;
  // Not migrated: the first test applies the migrations itself.
  beforeAll(async () => { engine = await openEmbeddedClickHouse('smoke_db', { migrated: false }); ch = engine.ch; });
  afterAll(() => engine.close());

  test('migrations apply once and are idempotent', async () => {
    const first = await migrate(ch, log);
    expect(first).toEqual(loadMigrations().map((m) => m.version));
    expect(await migrate(ch, log)).toEqual([]);
  });

  test('a message written through MessageHistory reads back equal, and a later state replaces it', async () => {
    const history = new MessageHistory(ch);
    const now = new Date().toISOString();
    const message: SmsMessage = {
      id: newId(), orgId: 'org-smoke', projectId: 'p1', tokenId: 't1', source: 'http', clientId: 'c-1', status: 'queued', statusCode: null,
      from: 'Smoke', country: 'DE', to: '+4915112345678', normalizedTo: '+4915112345678', charsCount: 5, text: 'hello', deliveredText: 'hello',
      messagesCount: 1, encoding: 'GSM-7', unicode: false, allowUnicode: false, charged: true, pricePerSmsMicros: 75000, priceUserMicros: 75000,
      currency: 'EUR', createdAt: now, chargedAt: now, scheduledAt: null, sentAt: null, deliveredAt: null, updatedAt: now,
    };
    await history.insert([message]);
    expect(await history.get({ orgId: 'org-smoke', projectId: null }, message.id)).toEqual(message);
    expect(await history.get({ orgId: 'other-org', projectId: null }, message.id)).toBeNull();
    const later = { ...message, status: 'delivered' as const, statusCode: 0, updatedAt: new Date(Date.parse(now) + 1000).toISOString() };
    await history.insert([later]);
    expect((await history.get({ orgId: 'org-smoke', projectId: 'p1' }, message.id))?.status).toBe('delivered');
  });
});

describe('smoke: accounts through the admin CLI and HTTP', () => {
  test('a token created by the admin CLI authenticates; once revoked it gets 401 (spec 1 §5)', async () => {
    const org = await admin<{ id: string }>('org', 'create', '--name', 'Smoke Org');
    const project = await admin<{ id: string }>('project', 'create', '--org', org.id, '--name', 'smoke');
    const token = await admin<{ id: string; value: string }>('token', 'create', '--org', org.id, '--project', project.id, '--kind', 'api_sms');
    await admin('balance', 'set', '--org', org.id, '--amount', '12.5');

    const ok = await api('/transactional/v1/organization/account', { token: token.value });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ entity: { currency: 'EUR', available: 12.5 } });

    await admin('token', 'revoke', '--token', token.value);
    const refused = await api('/transactional/v1/organization/account', { token: token.value });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ title: 'Unauthorized', status: 401, detail: expect.any(String) });
  });

  test('/health reports every engine up with a round-trip time', async () => {
    const health = await api('/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'up',
      engines: { nats: { status: 'up', rttMs: expect.any(Number) }, temporal: { status: 'up', rttMs: expect.any(Number) }, clickhouse: { status: 'up', rttMs: expect.any(Number) } },
    });
  });

  test('/health answers for the role processes of npm start, and only where there are some (README, "Processes of `npm start`")', async () => {
    const health = await api('/health');
    const engines = (health.body as { engines: Record<string, unknown> }).engines;
    if (stack().metrics) {
      // The scale-out topology (TEST_TOPOLOGY=cluster) runs each role alone: no role processes.
      expect(Object.keys(engines).filter((name) => name.startsWith('process:'))).toEqual([]);
      return;
    }
    expect(engines).toMatchObject({ 'process:lifecycle': { status: 'up', rttMs: expect.any(Number) }, 'process:carrier': { status: 'up', rttMs: expect.any(Number) } });
  });

  test('/metrics answers in Prometheus text format', async () => {
    const metrics = await api('/metrics');
    expect(metrics.status).toBe(200);
    expect(String(metrics.body)).toMatch(/^# HELP http_request_duration_seconds/m);
  });
});
