// Back-pressure of the ingestion API (spec 2 §7: 429 "retry after"): the gateway's bus keeps
// the ingest writer's lag behind its own publishes (from the applied sequence in KV
// ingest_state), and past the lag limit a POST batch is a 429 with an empty body, Retry-After
// and X-RateLimit-Reset, nothing published; under it the batch is accepted as before. The lag
// is also the ingest_lag_seconds gauge and the `ingest` detail of /health.
import { loadConfig } from '../../config';
import express from 'express';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { IngestMessage } from '../../core/ingest';
import type { IngestBus, IngestLag } from '../../core/ingest/ports';
import type { Datasource } from '../../core/ingest/types';
import type { Principal } from '../../core/accounts/types';
import { registry } from '../../infra/metrics';
import { createLogger } from '../../infra/logger';
import { ErrorFormats, errorHandler } from '../../gateways/http/errors';
import { ingestErrorFormat, ingestRouter, retryAfterSeconds, type IngestServices } from '../../gateways/http/ingest-api';
import { opsRouter } from '../../gateways/http/ops';
import { JetStreamIngestBus } from '../../infra/bus/ingest-bus';

const T0 = Date.parse('2026-11-26T12:00:00.000Z');

function fakeBusEngines(): { js: JetStreamClient; kv: KV; setApplied(seq: number): void; published: () => number } {
  let seq = 0;
  let applied: number | undefined;
  const js = { publish: async () => ({ seq: ++seq }) } as unknown as JetStreamClient;
  const kv = { get: async () => (applied === undefined ? null : { operation: 'PUT', string: () => String(applied) }) } as unknown as KV;
  return { js, kv, setApplied: (s) => { applied = s; }, published: () => seq };
}

const message = (receivedAt: number): IngestMessage => ({ kind: 'delete', orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt: new Date(receivedAt).toISOString(), userId: 'u' });

describe('the bus keeps the writer\'s lag behind this gateway (spec 2 §7 back-pressure)', () => {
  test('the lag is the age of the oldest published message not applied yet; 0 once all are applied', async () => {
    const engines = fakeBusEngines();
    let now = T0;
    const bus = new JetStreamIngestBus(engines.js, engines.kv, () => undefined, () => now);
    try {
      expect(bus.lag()).toEqual({ seconds: 0, unapplied: 0 });
      await bus.publish(message(T0));
      await bus.publish(message(T0 + 1000));
      await bus.publish(message(T0 + 2000));
      now = T0 + 5000;
      expect(bus.lag()).toEqual({ seconds: 5, unapplied: 3 });
      engines.setApplied(1);
      await bus.poll();
      expect(bus.lag()).toEqual({ seconds: 4, unapplied: 2 });
      expect(/^ingest_lag_seconds 4$/m.test(await registry.metrics())).toBe(true);
      engines.setApplied(3);
      await bus.poll();
      expect(bus.lag()).toEqual({ seconds: 0, unapplied: 0 });
    } finally {
      bus.close();
    }
  });

  test('Retry-After: the seconds beyond the limit, at least 1 and at most 60', () => {
    expect(retryAfterSeconds({ seconds: 10.2, unapplied: 1 }, 10)).toBe(1);
    expect(retryAfterSeconds({ seconds: 14.5, unapplied: 1 }, 10)).toBe(5);
    expect(retryAfterSeconds({ seconds: 600, unapplied: 1 }, 10)).toBe(60);
  });
});

describe('POST batches past the writer\'s lag limit are 429 with Retry-After (spec 2 §7)', () => {
  const datasource: Datasource = { id: 'ds1', orgId: 'org1', projectId: 'proj1', name: 'web', strict: false, createdAt: '2026-11-01T00:00:00.000Z' };
  const principal = { token: { kind: 'datasource', orgId: 'org1', projectId: 'proj1', datasourceId: 'ds1', scopes: [] }, org: { id: 'org1', name: 'Org' } } as unknown as Principal;
  let lag: IngestLag = { seconds: 0, unapplied: 0 };
  const published: IngestMessage[] = [];
  const bus: IngestBus = {
    publish: async (m) => { published.push(m); return published.length; },
    waitApplied: async () => true,
    lag: () => lag,
  };
  const services = {
    accounts: { authenticate: (value: string) => (value === 'good' ? principal : undefined), org: () => principal.org, project: () => undefined },
    datasources: {
      datasource: (id: string) => (id === 'ds1' ? datasource : undefined), attributes: () => [], eventTypes: () => [],
      specView: () => ({ datasource, attributeType: () => undefined, hasEventType: () => true, parameterType: () => 'number' as const }),
    },
    specs: { recordInferred: async () => null },
    bus,
    usage: { recent: async () => { throw new Error('not used'); } },
    contacts: { contact: async () => null },
    rateLimiter: { take: async () => ({ allowed: true, limit: 1000, remaining: 999, reset: Math.ceil(Date.now() / 1000) + 60 }) },
  } as unknown as IngestServices;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = express();
    app.use(express.json());
    const formats = new ErrorFormats();
    formats.register('/ingest/v1', ingestErrorFormat);
    app.use('/ingest/v1/project/:project/datasource/:datasource', ingestRouter(services, { ratePerMinute: 1000, authFailuresPerMinute: 1000, deleteWaitMs: 10, maxLagSeconds: 10 }));
    app.use(opsRouter({}));
    app.use(errorHandler(createLogger('error'), formats));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => { await new Promise((resolve) => server.close(resolve)); });

  const post = (path: string, body: unknown): Promise<Response> => fetch(`${base}/ingest/v1/project/proj1/datasource/ds1/stream/${path}`, {
    method: 'POST', headers: { authorization: 'Bearer good', 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  const event = { _user_id: 'u1', _event_id: 'e1', _event_type: 'view', _event_parameters: { n: 1 } };

  test('under the limit a batch is accepted and published', async () => {
    lag = { seconds: 9.5, unapplied: 40 };
    const before = published.length;
    const res = await post('events', [event]);
    expect(res.status).toBe(202);
    expect(published.length).toBe(before + 1);
  });

  test('past the limit: 429, empty body, Retry-After and X-RateLimit-Reset, nothing published (events and contacts)', async () => {
    lag = { seconds: 13.2, unapplied: 900 };
    const before = published.length;
    for (const [path, body] of [['events', [event]], ['contacts', [{ _user_id: 'u1', plan: 'gold' }]]] as const) {
      const res = await post(path, body);
      expect(res.status).toBe(429);
      expect(await res.text()).toBe('');
      expect(res.headers.get('retry-after')).toBe('4');
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(Math.abs(reset - (Math.ceil(Date.now() / 1000) + 4))).toBeLessThanOrEqual(1);
    }
    expect(published.length).toBe(before);
  });

  test('/health reports the lag as the ingest detail', async () => {
    lag = { seconds: 13.2, unapplied: 900 };
    const health = await (await fetch(`${base}/health`)).json() as { ingest: unknown };
    expect(health.ingest).toEqual({ writerLagSeconds: 13.2, unappliedRequests: 900, maxLagSeconds: 10, refusing: true });
  });
});

describe('INGEST_MAX_LAG_SECONDS sets the limit (docs/configuration.md)', () => {
  test('10 s by default, as written, 0 turns the 429 off', () => {
    expect(loadConfig({}).ingest.maxLagSeconds).toBe(10);
    expect(loadConfig({ INGEST_MAX_LAG_SECONDS: '30' }).ingest.maxLagSeconds).toBe(30);
    expect(loadConfig({ INGEST_MAX_LAG_SECONDS: '0' }).ingest.maxLagSeconds).toBe(0);
    expect(() => loadConfig({ INGEST_MAX_LAG_SECONDS: 'soon' })).toThrow(/INGEST_MAX_LAG_SECONDS/);
  });
});
