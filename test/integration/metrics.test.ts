// /metrics of the running stack (docs/metrics.md): the pipeline counters move by what was sent
// through the real engines (accepted, final statuses, refunds, DLR attempts by outcome), consumer
// lag and the oldest unprocessed age follow a real durable consumer, the Temporal worker's
// metrics are merged in, every metric the Grafana dashboard reads is exported, and no label
// value looks like an id. Other suites share the stack and send messages at the same time, so
// counters are checked to move by at least what this suite sent. On the scale-out topology a
// scrape reads every process (test/support/metrics-scrape.ts): counters are summed over the
// processes that own them, the pipeline gauges (one exporter per deployment) read with max.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AckPolicy } from '@nats-io/jetstream';
import { KV_KEYS, STREAMS } from '../../core/bus/names';
import type { DeadDlr } from '../../core/sms/dlr';
import { newId } from '../../core/ids';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { dashboardExpressions, idLikeLabels, isExported, maxOf, metricNamesOf, seriesPerFamily, sumOf, valuesPerLabel, type Exposition } from '../support/prometheus-text';
import { scrape, scrapeUntil } from '../support/metrics-scrape';
import { api, stack } from '../../support/stack';
import { accountsMirrored, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

const ROOT = join(__dirname, '..', '..');
const log = createLogger('warn');


let receiver: WebhookReceiver;
let tenant: Tenant;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  tenant = await createTenant({ name: 'Metrics Org', balance: 50 });
  await withAccounts(async (accounts) => { await accounts.setWebhook(tenant.tokenId, receiver.url); });
  await accountsMirrored();
});
afterAll(() => receiver.close());

let counter = 0;
/** A German mobile number whose last two digits select the simulator's path (docs/carrier.md). */
function number(lastTwo: string): string {
  counter += 1;
  return `+491512${String(Date.now() % 10000).padStart(4, '0')}${String(counter % 10)}${lastTwo}`.slice(0, 14);
}

async function send(to: string): Promise<string> {
  const res = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Metrics', to, text: 'metrics test' } });
  expect(res.status).toBe(201);
  return (res.body as { entity: { id: string } }).entity.id;
}

describe('docs/metrics.md: the pipeline counters move by what was sent', () => {
  test('3 delivered, 1 failed (90), 1 refused at submit (95, refunded); one webhook answer 503 then retried', async () => {
    const before = await scrape();
    let refusedOnce = false;
    receiver.respond = (dlr) => {
      if (!refusedOnce && dlr.body['status'] === 'failed') {
        refusedOnce = true;
        return 503;
      }
      return 200;
    };
    const ids = await Promise.all([send(number('12')), send(number('13')), send(number('14')), send(number('90')), send(number('95'))]);
    expect(new Set(ids).size).toBe(5);
    const delta = (exp: Exposition, name: string, labels: Record<string, string> = {}): number => sumOf(exp, name, labels) - sumOf(before, name, labels);

    const after = await scrapeUntil((exp) => {
      expect(delta(exp, 'sms_messages_accepted_total', { source: 'http' })).toBeGreaterThanOrEqual(5);
      expect(delta(exp, 'sms_messages_final_total', { status: 'delivered' })).toBeGreaterThanOrEqual(3);
      expect(delta(exp, 'sms_messages_final_total', { status: 'failed' })).toBeGreaterThanOrEqual(1);
      expect(delta(exp, 'sms_messages_final_total', { status: 'error' })).toBeGreaterThanOrEqual(1);
      expect(delta(exp, 'sms_messages_refunded_total')).toBeGreaterThanOrEqual(1);
      // Delivered path: sent, buffered, delivered; 90: sent, failed; 95: error. 12 DLRs, each delivered once.
      expect(delta(exp, 'sms_dlr_attempts_total', { outcome: 'delivered', response: '2xx' })).toBeGreaterThanOrEqual(12);
      expect(delta(exp, 'sms_dlr_attempts_total', { outcome: 'failed', response: '5xx' })).toBeGreaterThanOrEqual(1);
      // Other suites share the stack and move the counters too: wait for this test's own DLRs.
      expect(receiver.received.filter((r) => ids.includes(String(r.body['id']))).length).toBeGreaterThanOrEqual(13);
    });
    expect(delta(after, 'sms_status_transitions_total', { status: 'sent' })).toBeGreaterThanOrEqual(4);
    expect(delta(after, 'sms_dlr_attempt_duration_seconds_count', { outcome: 'delivered' })).toBeGreaterThanOrEqual(12);
    expect(delta(after, 'clickhouse_insert_batch_rows_count', { table: 'sms_messages' })).toBeGreaterThanOrEqual(1);
    expect(delta(after, 'clickhouse_insert_lag_seconds_count', { writer: 'history' })).toBeGreaterThanOrEqual(1);
  }, 90_000);
});

describe('docs/metrics.md: JetStream consumer lag and the oldest unprocessed message', () => {
  let nats: Nats;
  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'metrics-test' }, log);
  });
  afterAll(() => nats.close());

  test('a durable consumer nobody pulls shows its 3 messages as lag and their age; the product\'s consumers are listed by name', async () => {
    const probe = `sms.metricsprobe.${newId()}`;
    const durable = `metrics-probe-${newId()}`;
    await nats.jsm.consumers.add(STREAMS.sms.name, { durable_name: durable, ack_policy: AckPolicy.Explicit, filter_subject: probe });
    try {
      for (let i = 0; i < 3; i += 1) await nats.js.publish(probe, JSON.stringify({ i }));
      const published = Date.now();
      const exp = await scrapeUntil((e) => {
        expect(maxOf(e, 'jetstream_consumer_pending_messages', { stream: 'SMS', consumer: 'other' })).toBeGreaterThanOrEqual(3);
        expect(maxOf(e, 'jetstream_consumer_lag_messages', { stream: 'SMS', consumer: 'other' })).toBeGreaterThanOrEqual(3);
        expect(maxOf(e, 'jetstream_consumer_oldest_unprocessed_age_seconds', { stream: 'SMS', consumer: 'other' })).toBeGreaterThanOrEqual(1);
      }, 20_000);
      const age = maxOf(exp, 'jetstream_consumer_oldest_unprocessed_age_seconds', { stream: 'SMS', consumer: 'other' });
      expect(age).toBeLessThanOrEqual((Date.now() - published) / 1000 + 1);
      for (const [stream, consumer] of [['SMS', 'history-writer'], ['SMS', 'lifecycle-starter'], ['CARRIER', 'carrier-connector'], ['INGEST', 'ingest-writer']]) {
        expect(exp.samples.some((s) => s.name === 'jetstream_consumer_lag_messages' && s.labels['stream'] === stream && s.labels['consumer'] === consumer)).toBe(true);
      }
    } finally {
      await nats.jsm.consumers.delete(STREAMS.sms.name, durable);
    }
  }, 60_000);
});

describe('docs/metrics.md: dead letters', () => {
  let nats: Nats;
  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'metrics-test-dead' }, log);
  });
  afterAll(() => nats.close());

  test('a DLR put in KV dead_dlrs is counted by sms_dlr_dead_letters within a dead-letter poll (15 s)', async () => {
    const before = maxOf(await scrape(), 'sms_dlr_dead_letters');
    const tokenId = newId();
    const messageId = newId();
    const dead: DeadDlr = {
      tokenId, messageId, seq: 1, payload: { id: messageId, status: 'delivered', code: 0, eventAt: new Date().toISOString() },
      reason: 'metrics test: retry window closed', failedAt: new Date().toISOString(),
    };
    const key = KV_KEYS.deadDlr(tokenId, messageId, 1);
    await nats.kv.deadDlrs.put(key, JSON.stringify(dead));
    try {
      await scrapeUntil((exp) => expect(maxOf(exp, 'sms_dlr_dead_letters')).toBeGreaterThanOrEqual(before + 1), 25_000);
    } finally {
      await nats.kv.deadDlrs.delete(key);
    }
  }, 40_000);
});

describe('docs/metrics.md: one scrape covers the process', () => {
  test('the Temporal worker\'s metrics are merged in (workflow task schedule-to-start and execution latency)', async () => {
    const exp = await scrapeUntil((e) => {
      expect(sumOf(e, 'temporal_workflow_task_schedule_to_start_latency_seconds_count')).toBeGreaterThan(0);
      expect(sumOf(e, 'temporal_workflow_task_execution_latency_seconds_count')).toBeGreaterThan(0);
    }, 20_000);
    expect(exp.types.get('temporal_workflow_task_schedule_to_start_latency_seconds')).toBe('histogram');
  });

  test('every metric the Grafana dashboard reads is exported by the running stack', async () => {
    const dashboard: unknown = JSON.parse(readFileSync(join(ROOT, 'compose', 'observability', 'grafana', 'dashboards', 'sms-pipeline.json'), 'utf8'));
    const names = [...new Set(dashboardExpressions(dashboard).flatMap(metricNamesOf))];
    expect(names.length).toBeGreaterThan(20);
    const exp = await scrapeUntil((e) => {
      expect(names.filter((n) => !isExported(e, n))).toEqual([]);
    }, 20_000);
    expect(names.every((n) => isExported(exp, n))).toBe(true);
  });

  test('label sets stay bounded: no label value looks like an id, no label has more than 150 values, no family more than 2,000 series', async () => {
    const exp = await scrape();
    expect(exp.samples.length).toBeGreaterThan(100);
    expect(idLikeLabels(exp)).toEqual([]);
    // Routes are the app's route patterns (some 60), statuses and methods the few HTTP has:
    // after the fuzz suites the HTTP histogram holds a few hundred series, none per customer.
    expect([...valuesPerLabel(exp)].filter(([, n]) => n > 150)).toEqual([]);
    expect([...seriesPerFamily(exp)].filter(([, n]) => n > 2000)).toEqual([]);
    const forbidden = new Set(['org', 'org_id', 'organization', 'project', 'token', 'token_id', 'message', 'message_id', 'to', 'from', 'phone', 'number', 'datasource']);
    expect([...new Set(exp.samples.flatMap((s) => Object.keys(s.labels)))].filter((l) => forbidden.has(l))).toEqual([]);
  });
});
