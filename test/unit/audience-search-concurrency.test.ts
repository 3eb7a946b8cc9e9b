// An organization runs at most SEARCHES_IN_FLIGHT_PER_ORG audience searches at once (spec 3
// §4.2; docs/grammar-b.md): beyond, a 429 with Retry-After that changes nothing, while another
// organization's searches go on; a slot is held until the search's statements are done, also
// when its client has gone. Analysts' SQL (POST /analytics/v1/sql) has the same bound
// (gateways/http/rate-limit.ts InFlight), ANALYTICS_IN_FLIGHT_PER_ORG.
import express from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ANALYTICS_IN_FLIGHT_PER_ORG } from '../../core/analytics';
import { SEARCHES_IN_FLIGHT_PER_ORG } from '../../core/filters/grammar-b';
import { createLogger } from '../../infra/logger';
import { analyticsRouter, ANALYTICS_SQL_PATH, type AnalyticsServices } from '../../gateways/http/analytics-api';
import { audienceRouter, type AudienceServices } from '../../gateways/http/audience-api';
import { errorHandler } from '../../gateways/http/errors';

interface Pending { readonly org: string; readonly resolve: () => void }

async function harness() {
  const pending: Pending[] = [];
  const principal = (org: string) => ({ token: { id: `t-${org}`, kind: 'product', orgId: org, projectId: `p-${org}`, scopes: ['audience:search'] }, org: { id: org, name: org } });
  const services = {
    accounts: {
      authenticate: (value: string) => (value.startsWith('tok-') ? principal(value.slice(4)) : null),
      project: (id: string) => ({ id, orgId: id.slice(2), timezone: 'UTC' }),
    },
    rateLimiter: { take: async () => ({ allowed: true, limit: 1000, remaining: 999, reset: Math.floor(Date.now() / 1000) + 60 }) },
    segments: { getRoot: async () => null },
    search: {
      search: (_request: unknown, scope: { project: string }) => new Promise((resolve) => {
        pending.push({ org: scope.project.slice(2), resolve: () => resolve({ entities: [], total: 0, cursor: null }) });
      }),
    },
  } as unknown as AudienceServices;
  const app = express();
  app.use(express.json());
  app.use('/audience/v1/project/:project', audienceRouter(services, { ratePerMinute: 1000, authFailuresPerMinute: 1000 }));
  app.use(errorHandler(createLogger('error')));
  const server = createServer(app);
  await new Promise<void>((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  let closed = 0;
  server.on('connection', (socket) => socket.on('close', () => { closed += 1; }));
  const socketClosed = async (): Promise<void> => {
    for (let i = 0; i < 1000 && closed === 0; i++) await new Promise((r) => setImmediate(r));
    expect(closed).toBeGreaterThan(0);
  };
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const search = (org: string, signal?: AbortSignal) => fetch(`${base}/audience/v1/project/p-${org}/audience/search`, {
    method: 'POST', headers: { authorization: `Bearer tok-${org}`, 'content-type': 'application/json' }, body: JSON.stringify({ version: '0.0.1' }), ...(signal ? { signal } : {}),
  });
  const started = async (n: number): Promise<void> => {
    for (let i = 0; i < 500 && pending.length < n; i++) await new Promise((r) => setImmediate(r));
    expect(pending.length).toBe(n);
  };
  return { pending, search, started, socketClosed, close: () => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }) };
}

describe(`spec 3 §4.2: at most ${SEARCHES_IN_FLIGHT_PER_ORG} searches of one organization in flight`, () => {
  test('the next search of the same organization is a 429 with Retry-After; another organization is not held back; a finished search frees its slot', async () => {
    const h = await harness();
    try {
      const running = Array.from({ length: SEARCHES_IN_FLIGHT_PER_ORG }, () => h.search('A'));
      await h.started(SEARCHES_IN_FLIGHT_PER_ORG);
      const refused = await h.search('A');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { message: string }).message).toContain(`${SEARCHES_IN_FLIGHT_PER_ORG} audience searches`);
      expect(h.pending.length).toBe(SEARCHES_IN_FLIGHT_PER_ORG);
      // Another organization runs meanwhile.
      const other = h.search('B');
      await h.started(SEARCHES_IN_FLIGHT_PER_ORG + 1);
      h.pending.find((p) => p.org === 'B')?.resolve();
      expect((await other).status).toBe(200);
      // One of A's finishes: A may search again.
      h.pending[0]?.resolve();
      expect((await running[0])?.status).toBe(200);
      const again = h.search('A');
      await h.started(SEARCHES_IN_FLIGHT_PER_ORG + 2);
      for (const p of h.pending) p.resolve();
      expect((await again).status).toBe(200);
      expect((await running[1])?.status).toBe(200);
    } finally {
      await h.close();
    }
  });

  test('a client that goes away does not free the slot while its search still runs', async () => {
    const h = await harness();
    try {
      const abort = new AbortController();
      const gone = h.search('A', abort.signal).catch(() => null);
      const kept = h.search('A');
      await h.started(2);
      abort.abort();
      await gone;
      await h.socketClosed();
      expect((await h.search('A')).status).toBe(429);
      // Once its statements are done, the slot is free again.
      for (const p of h.pending.splice(0)) p.resolve();
      expect((await kept).status).toBe(200);
      const next = h.search('A');
      await h.started(1);
      for (const p of h.pending) p.resolve();
      expect((await next).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});

describe(`docs/analytics.md: at most ${ANALYTICS_IN_FLIGHT_PER_ORG} analytics queries of one organization in flight (the same bound as the searches)`, () => {
  test('the next query of the same organization is a 429 with Retry-After that runs nothing; another organization is not held back; a finished query frees its slot', async () => {
    const pending: Array<{ org: string; resolve: () => void }> = [];
    const principal = (org: string) => ({ token: { id: `t-${org}`, kind: 'product', orgId: org, projectId: `p-${org}`, scopes: ['analytics:read'] }, org: { id: org, name: org } });
    const services = {
      accounts: { authenticate: (value: string) => (value.startsWith('tok-') ? principal(value.slice(4)) : null), entries: () => [] },
      rateLimiter: { take: async () => ({ allowed: true, limit: 1000, remaining: 999, reset: Math.floor(Date.now() / 1000) + 60 }) },
      sql: {
        run: (_query: string, format: string, scope: { orgId: string }) => new Promise((resolve) => {
          pending.push({ org: scope.orgId, resolve: () => resolve({ body: Buffer.from('{}'), format }) });
        }),
      },
    } as unknown as AnalyticsServices;
    const app = express();
    app.use(express.json());
    app.use(analyticsRouter(services, { ratePerMinute: 1000, authFailuresPerMinute: 1000 }));
    app.use(errorHandler(createLogger('error')));
    const server = createServer(app);
    await new Promise<void>((resolve) => { server.listen(0, '127.0.0.1', resolve); });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const query = (org: string) => fetch(`${base}${ANALYTICS_SQL_PATH}`, { method: 'POST', headers: { authorization: `Bearer tok-${org}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'SELECT 1' }) });
    const started = async (n: number): Promise<void> => {
      for (let i = 0; i < 500 && pending.length < n; i++) await new Promise((r) => setImmediate(r));
      expect(pending.length).toBe(n);
    };
    try {
      const running = Array.from({ length: ANALYTICS_IN_FLIGHT_PER_ORG }, () => query('A'));
      await started(ANALYTICS_IN_FLIGHT_PER_ORG);
      const refused = await query('A');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { message: string }).message).toContain(`${ANALYTICS_IN_FLIGHT_PER_ORG} analytics queries`);
      expect(pending.length).toBe(ANALYTICS_IN_FLIGHT_PER_ORG);
      const other = query('B');
      await started(ANALYTICS_IN_FLIGHT_PER_ORG + 1);
      pending.find((p) => p.org === 'B')?.resolve();
      expect((await other).status).toBe(200);
      pending[0]?.resolve();
      expect((await running[0])?.status).toBe(200);
      const again = query('A');
      await started(ANALYTICS_IN_FLIGHT_PER_ORG + 2);
      for (const p of pending) p.resolve();
      expect((await again).status).toBe(200);
      expect((await running[1])?.status).toBe(200);
    } finally {
      await new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); });
    }
  });
});
