// The observability files agree with each other and with the deployment (no engine needed):
// the compose override gives every role without the HTTP gateway a metrics port, Prometheus
// scrapes exactly those processes, Grafana's dashboard reads only metrics docs/metrics.md
// documents, and the helpers the metrics suites rely on read what they claim to read.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { dashboardExpressions, idLikeLabels, isExported, metricNamesOf, parseExposition, seriesPerFamily, sumOf, valuesPerLabel } from '../support/prometheus-text';

const ROOT = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const yamlOf = (path: string): Record<string, unknown> => parse(read(path), { merge: true }) as Record<string, unknown>;

type Services = Record<string, { command?: string[]; image?: string; ports?: string[]; volumes?: string[]; environment?: Record<string, string> }>;
const base = yamlOf('compose/docker-compose.yml')['services'] as Services;
const override = yamlOf('compose/docker-compose.observability.yml')['services'] as Services;
const grafana = yamlOf('compose/docker-compose.grafana.yml')['services'] as Services;
/** Product services run the product image (compose/Dockerfile, `npm run images`). */
const isProduct = (s: Services[string] | undefined): boolean => s?.image === 'localhost/sms-platform:latest';
const prometheus = yamlOf('compose/observability/prometheus.yml') as { scrape_configs: Array<{ metrics_path?: string; dns_sd_configs: Array<{ names: string[]; type: string; port: number }> }> };
const dashboard: unknown = JSON.parse(read('compose/observability/grafana/dashboards/sms-pipeline.json'));
const HTTP_PORT = '8080';

const roleOf = (command: readonly string[] | undefined): string | undefined => command?.find((a) => a.startsWith('--role='))?.slice('--role='.length);
const metricsPortOf = (command: readonly string[] | undefined): string | undefined => command?.find((a) => a.startsWith('--metrics-port='))?.slice('--metrics-port='.length);

describe('compose/docker-compose.observability.yml', () => {
  test('overrides only product services of the base file, keeping each one\'s role and flags (only --metrics-port is added)', () => {
    for (const [name, service] of Object.entries(override)) {
      if (!service.command?.some((a) => a.startsWith('--role='))) continue;
      expect({ name, product: isProduct(base[name]) }).toEqual({ name, product: true });
      expect(roleOf(service.command)).toBe(roleOf(base[name]?.command));
      expect(service.command.filter((a) => !a.startsWith('--metrics-port='))).toEqual(base[name]?.command);
    }
  });

  test('every product role without the HTTP gateway gets --metrics-port (else its metrics are never scraped)', () => {
    const products = Object.entries(base).filter(([, s]) => isProduct(s) && roleOf(s.command) !== 'gateway-http' && roleOf(s.command) !== 'simulator');
    expect(products.length).toBeGreaterThanOrEqual(4);
    for (const [name] of products) expect({ name, port: metricsPortOf(override[name]?.command) }).toEqual({ name, port: expect.stringMatching(/^\d+$/) });
  });

  test('Prometheus finds both HTTP gateways and every replica of each --metrics-port service by DNS, and nothing else', () => {
    const sd = prometheus.scrape_configs.flatMap((c) => c.dns_sd_configs);
    expect(sd.every((s) => s.type === 'A')).toBe(true);
    const targets = sd.flatMap((s) => s.names.map((name) => `${name}:${s.port}`)).sort();
    const gateways = Object.entries(base).filter(([, s]) => isProduct(s) && roleOf(s.command) === 'gateway-http').map(([name]) => name);
    expect(gateways.length).toBe(2);
    const expected = [
      ...gateways.map((name) => `${name}:${HTTP_PORT}`),
      ...Object.entries(override).flatMap(([name, s]) => (metricsPortOf(s.command) ? [`${name}:${metricsPortOf(s.command) as string}`] : [])),
    ].sort();
    expect(targets).toEqual(expected);
    expect(prometheus.scrape_configs.every((c) => (c.metrics_path ?? '/metrics') === '/metrics')).toBe(true);
  });

  test('the mounted configuration files exist in the repository', () => {
    const mounts = [...Object.values(override), ...Object.values(grafana)].flatMap((s) => s.volumes ?? []).filter((v) => v.startsWith('./')).map((v) => v.split(':')[0] as string);
    expect(mounts.length).toBeGreaterThanOrEqual(3);
    expect(mounts.filter((mount) => !existsSync(join(ROOT, 'compose', mount)))).toEqual([]);
  });
});

describe('Grafana dashboard', () => {
  const exprs = dashboardExpressions(dashboard);
  const names = [...new Set(exprs.flatMap(metricNamesOf))].sort();

  test('has panels reading the pipeline (accepted, final statuses, DLRs, lag, Temporal, ClickHouse, SMPP, ingestion)', () => {
    expect(exprs.length).toBeGreaterThan(20);
    for (const needed of ['sms_messages_accepted_total', 'sms_messages_final_total', 'sms_messages_refunded_total', 'sms_dlr_attempts_total', 'sms_dlr_attempt_duration_seconds_bucket', 'sms_dlr_dead_letters',
      'jetstream_consumer_lag_messages', 'jetstream_consumer_oldest_unprocessed_age_seconds', 'temporal_workflow_task_schedule_to_start_latency_seconds_bucket',
      'temporal_workflow_task_execution_latency_seconds_bucket', 'clickhouse_insert_batch_rows_bucket', 'clickhouse_insert_lag_seconds_bucket', 'smpp_sessions_bound', 'smpp_pdus_total', 'ingest_items_total']) {
      expect(names).toContain(needed);
    }
  });

  test('every metric it reads is documented in docs/metrics.md', () => {
    const doc = read('docs/metrics.md');
    const family = (n: string): string => n.replace(/_(bucket|sum|count)$/, '');
    const undocumented = names.filter((n) => !doc.includes(`\`${n}\``) && !doc.includes(`\`${family(n)}\``));
    expect(undocumented).toEqual([]);
  });

  /** Every `datasource` value anywhere in the dashboard (panels, their queries, annotations, variables). */
  const datasourceRefs = (node: unknown): unknown[] => {
    if (Array.isArray(node)) return node.flatMap(datasourceRefs);
    if (typeof node !== 'object' || node === null) return [];
    return Object.entries(node).flatMap(([key, value]) => (key === 'datasource' ? [value] : datasourceRefs(value)));
  };

  test('every panel and query reads the datasource variable ${DS_PROMETHEUS}, a templating variable of type datasource (prometheus): no hard-coded uid', () => {
    const board = dashboard as { panels: Array<{ type: string; datasource?: unknown; targets?: Array<{ datasource?: unknown }> }>; templating: { list: Array<Record<string, unknown>> } };
    const variable = board.templating.list.find((v) => v['name'] === 'DS_PROMETHEUS');
    expect(variable).toMatchObject({ name: 'DS_PROMETHEUS', type: 'datasource', query: 'prometheus' });
    const refs = datasourceRefs(dashboard);
    const panels = board.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(10);
    expect(panels.filter((p) => p.datasource === undefined).map((p) => p.type)).toEqual([]);
    expect(refs.length).toBeGreaterThanOrEqual(panels.length);
    expect(refs.filter((r) => JSON.stringify(r) !== JSON.stringify({ type: 'prometheus', uid: '${DS_PROMETHEUS}' }))).toEqual([]);
    // The variable resolves to the provisioned Prometheus, the default datasource of its type.
    const provisioned = yamlOf('compose/observability/grafana/provisioning/datasources/prometheus.yml') as { datasources: Array<{ type: string; isDefault?: boolean }> };
    expect(provisioned.datasources.filter((d) => d.type === 'prometheus' && d.isDefault === true)).toHaveLength(1);
  });
});

describe('metrics suites\' helpers', () => {
  test('metricNamesOf: names only, not functions, labels, values, durations or keywords', () => {
    expect(metricNamesOf('histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{status=~"5.."}[5m])))')).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNamesOf('sum(rate(a_total{x="delivered"}[15m])) / clamp_min(sum(rate(b_total[15m])), 1e-9) offset 5m')).toEqual(['a_total', 'b_total']);
    expect(metricNamesOf('max by (stream, consumer) (lag_messages) and on (stream) up')).toEqual(['lag_messages', 'up']);
  });

  const text = [
    '# TYPE h histogram',
    'h_bucket{le="1",table="t"} 2',
    'h_bucket{le="+Inf",table="t"} 3',
    'h_count{table="t"} 3',
    '# TYPE c_total counter',
    'c_total{status="delivered"} 4',
    'c_total{status="failed"} 1',
    'c_total{org="0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"} 1',
    'c_total{to="+491511234567"} 1',
    'g{escaped="a\\"b"} 7',
  ].join('\n');

  test('parseExposition and sumOf read samples, labels (escapes too) and types', () => {
    const exp = parseExposition(text);
    expect(sumOf(exp, 'c_total')).toBe(7);
    expect(sumOf(exp, 'c_total', { status: 'failed' })).toBe(1);
    expect(exp.samples.find((s) => s.name === 'g')?.labels).toEqual({ escaped: 'a"b' });
    expect(isExported(exp, 'h_bucket')).toBe(true);
    expect(isExported(exp, 'h_sum')).toBe(true);
    expect(isExported(exp, 'c_total')).toBe(true);
    expect(isExported(exp, 'c_total_bucket')).toBe(false);
    expect(isExported(exp, 'missing_total')).toBe(false);
  });

  test('idLikeLabels flags UUIDs and phone numbers, and seriesPerFamily folds histogram buckets', () => {
    const exp = parseExposition(text);
    expect(idLikeLabels(exp)).toEqual([
      'c_total{org="0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}: a UUID',
      'c_total{to="+491511234567"}: a phone number or long digit string',
    ]);
    expect(seriesPerFamily(exp).get('h')).toBe(1);
    expect(seriesPerFamily(exp).get('c_total')).toBe(4);
    expect(valuesPerLabel(exp).get('h{table}')).toBe(1);
    expect(valuesPerLabel(exp).get('c_total{status}')).toBe(2);
    expect(valuesPerLabel(exp).has('h{le}')).toBe(false);
  });
});
