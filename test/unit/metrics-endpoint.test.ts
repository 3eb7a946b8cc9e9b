// docs/metrics.md: one exposition per process. `--metrics-port` serves the registry on its own
// port (infra/metrics-server.ts), the registry appends other process-local exporters (the
// Temporal SDK's) and survives one that does not answer, and per-token SMPP receipt consumers
// fold into one bounded label (pipelines/pipeline-metrics.ts).
import { createServer, type Server } from 'node:http';
import { createLogger } from '../../infra/logger';
import { boundedRoute, httpRequests, registry, responseClass } from '../../infra/metrics';
import { serveMetrics, type MetricsServer } from '../../infra/metrics-server';
import { consumerLabel } from '../../pipelines/pipeline-metrics';
import { parseExposition } from '../support/prometheus-text';

const log = createLogger('silent');

describe('--metrics-port: the process registry on its own port', () => {
  let server: MetricsServer;
  beforeAll(async () => {
    server = await serveMetrics(0, '127.0.0.1', log);
  });
  afterAll(() => server.stop());

  test('GET /metrics answers the Prometheus text of the registry', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const exp = parseExposition(await res.text());
    expect(exp.types.get('sms_messages_accepted_total')).toBe('counter');
    expect(exp.types.get('jetstream_consumer_lag_messages')).toBe('gauge');
    expect(exp.types.get('process_cpu_seconds_total')).toBe('counter');
  });

  test('other paths are 404 and other methods 405', async () => {
    expect((await fetch(`http://127.0.0.1:${server.port}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: 'POST', body: 'x' })).status).toBe(405);
  });
});

describe('the process registry merges other local exporters', () => {
  let exporter: Server;
  let url = '';
  beforeAll(async () => {
    exporter = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('# TYPE temporal_probe_total counter\ntemporal_probe_total{task_queue="sms"} 3'));
    await new Promise<void>((resolve) => exporter.listen(0, '127.0.0.1', () => resolve()));
    const address = exporter.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/metrics`;
  });
  afterAll(() => new Promise<void>((resolve) => exporter.close(() => resolve())));

  test('samples of an added source follow ours; a source that does not answer is left out', async () => {
    registry.addSource(url);
    registry.addSource('http://127.0.0.1:1/metrics');
    const exp = parseExposition(await registry.metrics());
    expect(exp.types.get('temporal_probe_total')).toBe('counter');
    expect(exp.samples.find((s) => s.name === 'temporal_probe_total')).toEqual({ name: 'temporal_probe_total', labels: { task_queue: 'sms' }, value: 3 });
    expect(exp.types.get('sms_messages_final_total')).toBe('counter');
  });
});

describe('bounded labels', () => {
  test('consumer: the product\'s durables by name, every per-token SMPP feed as one, anything else as other', () => {
    expect(consumerLabel('history-writer')).toBe('history-writer');
    expect(consumerLabel('lifecycle-starter')).toBe('lifecycle-starter');
    expect(consumerLabel('smpp-dlr-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')).toBe('smpp-dlr');
    expect(consumerLabel('someone-elses-durable')).toBe('other');
  });

  test('route: id segments become :id, whatever the caller hands to the HTTP histogram', async () => {
    expect(boundedRoute('/ingest/v1/project/01a207a1-ced7-76a9-8121-186fa560e76e/datasource/01a207a1-d00d-74fe-b30c-0b87af6612db/stream/contacts'))
      .toBe('/ingest/v1/project/:id/datasource/:id/stream/contacts');
    expect(boundedRoute('/transactional/v1/sms/:id')).toBe('/transactional/v1/sms/:id');
    expect(boundedRoute('/legacy/123456789')).toBe('/legacy/:id');
    expect(boundedRoute('unmatched')).toBe('unmatched');
    httpRequests.labels('GET', '/unit/0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/x', '200').observe(0.01);
    httpRequests.labels({ method: 'GET', route: '/unit/0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c/y', status: '200' }).observe(0.01);
    const routes = parseExposition(await registry.metrics()).samples.filter((s) => s.name === 'http_request_duration_seconds_count').map((s) => s.labels['route']);
    expect(routes).toEqual(expect.arrayContaining(['/unit/:id/x', '/unit/:id/y']));
    expect(routes.some((r) => r?.includes('0199a1b2'))).toBe(false);
  });

  test('response: the class of a webhook answer, none without one', () => {
    expect([200, 204, 301, 404, 503, null, 0, 999].map(responseClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '5xx', 'none', 'none', 'none']);
  });
});
