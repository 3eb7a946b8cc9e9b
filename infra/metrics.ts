// Prometheus metrics (prom-client): one registry per process, with default process metrics.
// Labels are bounded sets only (status, outcome, stream, consumer, command...): never an
// organization, token, message, phone number or anything else a customer chooses
// (docs/metrics.md lists every metric and which process exports it).
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const SCRAPE_SOURCE_TIMEOUT_MS = 1000;

/** One process's metrics as another process takes them in: prom-client's JSON to aggregate, exporter text to append. */
export interface PeerMetrics {
  readonly json: object[];
  readonly text: string;
}

/** Ends a non-empty exposition with a newline, so that expositions can be concatenated. */
const terminated = (text: string): string => (text.length === 0 || text.endsWith('\n') ? text : `${text}\n`);

/**
 * The process's registry. Exposition in another process-local exporter (the Temporal SDK's
 * Rust core serves its own Prometheus text on a loopback port) is appended to ours, so one
 * scrape of /metrics covers the whole process. With role processes (infra/role-processes.ts)
 * their samples are added in: counters and histograms summed, so one scrape covers `npm start`.
 */
class ProcessRegistry extends Registry {
  private readonly sources = new Set<string>();
  private peers: (() => Promise<readonly PeerMetrics[]>) | undefined;

  /** Adds a Prometheus text endpoint whose samples are appended to every exposition. */
  addSource(url: string): void {
    this.sources.add(url);
  }

  /** Adds the metrics of this process's role processes to every exposition. */
  setPeers(peers: () => Promise<readonly PeerMetrics[]>): void {
    this.peers = peers;
  }

  /** This process's samples with its exporters' text, for a parent to aggregate. */
  async ownMetrics(): Promise<PeerMetrics> {
    const [json, text] = await Promise.all([this.getMetricsAsJSON(), this.sourcesText()]);
    return { json, text };
  }

  override async metrics(): Promise<string> {
    const peers = this.peers ? await this.peers() : [];
    const own = peers.length === 0 ? await super.metrics() : await AggregatorRegistry.aggregate([await this.getMetricsAsJSON(), ...peers.map((p) => p.json)]).metrics();
    return [own, await this.sourcesText(), ...peers.map((p) => p.text)].map(terminated).join('');
  }

  private async sourcesText(): Promise<string> {
    if (this.sources.size === 0) return '';
    const texts = await Promise.all([...this.sources].map(async (url) => {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(SCRAPE_SOURCE_TIMEOUT_MS) });
        return res.ok ? await res.text() : '';
      } catch {
        return ''; // the exporter is not up yet (or gone): our own metrics still answer
      }
    }));
    return texts.map(terminated).join('');
  }
}

export const registry = new ProcessRegistry();
collectDefaultMetrics({ register: registry });

const SIZE_BUCKETS = [1, 5, 10, 50, 100, 250, 500, 1000, 2000, 5000, 10_000];
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 300];

export const roleProcessRestarts = new Counter({
  name: 'role_process_restarts_total',
  help: 'Role processes of npm start (PROCESS_LAYOUT=split) that exited on their own and were started again',
  labelNames: ['process'] as const,
  registers: [registry],
});

export const httpRequests = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

/** A path segment that is an id: a UUID, a long hex string or a long number. */
const ID_SEGMENT = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|\d{4,})$/i;

/** A route label with every id segment as `:id`: the label stays bounded even when a caller hands over a concrete path. */
export function boundedRoute(route: string): string {
  if (!route.includes('/')) return route;
  return route.split('/').map((segment) => (ID_SEGMENT.test(segment) ? ':id' : segment)).join('/');
}

// The route label is bounded here, at the metric, whatever the caller passes: routers mounted
// on a parameterised path (ingestion's /project/:projectId/datasource/:datasourceId/stream)
// were labelled with the concrete ids, one series per datasource (docs/metrics.md).
const histogramLabels = httpRequests.labels.bind(httpRequests) as (...args: unknown[]) => ReturnType<typeof httpRequests.labels>;
httpRequests.labels = ((...args: unknown[]) => {
  const [first] = args;
  if (typeof first === 'object' && first !== null) {
    const labels = first as { route?: string };
    return histogramLabels(labels.route === undefined ? labels : { ...labels, route: boundedRoute(labels.route) });
  }
  return histogramLabels(args[0], typeof args[1] === 'string' ? boundedRoute(args[1]) : args[1], ...args.slice(2));
}) as typeof httpRequests.labels;

export const smsAccepted = new Counter({
  name: 'sms_accepted_total',
  help: 'Messages accepted by the SMPP gateway of this process, counted at submit_sm (see sms_messages_accepted_total for every source)',
  labelNames: ['source'] as const,
  registers: [registry],
});

// --- The SMS pipeline, derived from the bus by the history writer (sms.accepted, sms.status.*, sms.dlr.attempt) ---

export const smsMessagesAccepted = new Counter({
  name: 'sms_messages_accepted_total',
  help: 'Messages accepted (one per message of sms.accepted), by source (http, legacy, smpp); counted by the history writer once their rows are stored',
  labelNames: ['source'] as const,
  registers: [registry],
});

export const smsStatusTransitions = new Counter({
  name: 'sms_status_transitions_total',
  help: 'Status transitions of messages (sms.status.*), by the status reached',
  labelNames: ['status'] as const,
  registers: [registry],
});

export const smsMessagesFinal = new Counter({
  name: 'sms_messages_final_total',
  help: 'Messages that reached a final status (delivered, failed, expired, canceled, rejected, error, unknown), by that status',
  labelNames: ['status'] as const,
  registers: [registry],
});

export const smsRefunds = new Counter({
  name: 'sms_messages_refunded_total',
  help: 'Messages refunded (an error before any carrier took it): refund markers created in KV idempotency, seen by the pipeline-metrics role',
  registers: [registry],
});

export const chargeHoldsRefunded = new Counter({
  name: 'charge_holds_refunded_total',
  help: 'Charges refunded by the charge settler because what they paid for never reached the stream (the process taking them died in between)',
  registers: [registry],
});

export const chargeHoldsSettled = new Counter({
  name: 'charge_holds_settled_total',
  help: 'Charge holds named by accepted batches and lookups that the charge settler read from the stream',
  registers: [registry],
});

export const dlrAttempts = new Counter({
  name: 'sms_dlr_attempts_total',
  help: 'DLR webhook attempts (sms.dlr.attempt), by outcome (delivered, failed, skipped) and response class (2xx, 3xx, 4xx, 5xx, none)',
  labelNames: ['outcome', 'response'] as const,
  registers: [registry],
});

export const dlrAttemptLatency = new Histogram({
  name: 'sms_dlr_attempt_duration_seconds',
  help: 'Duration of DLR webhook attempts, by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const dlrDeadLetters = new Gauge({
  name: 'sms_dlr_dead_letters',
  help: 'DLRs whose retry window closed and that wait for a re-drive (keys in KV bucket dead_dlrs)',
  registers: [registry],
});

// --- JetStream consumers, polled by the pipeline-metrics role ---

export const consumerPending = new Gauge({
  name: 'jetstream_consumer_pending_messages',
  help: 'Messages of the stream matching the consumer\'s filter and not yet delivered (num_pending); smpp-dlr sums every per-token consumer',
  labelNames: ['stream', 'consumer'] as const,
  registers: [registry],
});

export const consumerAckPending = new Gauge({
  name: 'jetstream_consumer_ack_pending_messages',
  help: 'Messages delivered to the consumer and not yet acknowledged (num_ack_pending)',
  labelNames: ['stream', 'consumer'] as const,
  registers: [registry],
});

export const consumerLag = new Gauge({
  name: 'jetstream_consumer_lag_messages',
  help: 'Unprocessed messages of the consumer: num_pending + num_ack_pending',
  labelNames: ['stream', 'consumer'] as const,
  registers: [registry],
});

export const consumerOldestAge = new Gauge({
  name: 'jetstream_consumer_oldest_unprocessed_age_seconds',
  help: 'Age of the oldest message the consumer has not acknowledged (0 when it has none)',
  labelNames: ['stream', 'consumer'] as const,
  registers: [registry],
});

// --- ClickHouse batch writers ---

export const clickhouseRowsWritten = new Counter({
  name: 'clickhouse_rows_written_total',
  help: 'Rows inserted into ClickHouse by the batch writers',
  labelNames: ['table'] as const,
  registers: [registry],
});

export const clickhouseInsertRows = new Histogram({
  name: 'clickhouse_insert_batch_rows',
  help: 'Rows per ClickHouse insert of the batch writers, by table',
  labelNames: ['table'] as const,
  buckets: SIZE_BUCKETS,
  registers: [registry],
});

export const clickhouseInsertLag = new Histogram({
  name: 'clickhouse_insert_lag_seconds',
  help: 'From a stream message\'s publication to its rows being inserted into ClickHouse, by writer (history, ingest)',
  labelNames: ['writer'] as const,
  buckets: LAG_BUCKETS,
  registers: [registry],
});

// --- Ingestion ---

export const ingestVisibility = new Histogram({
  name: 'ingest_visibility_seconds',
  help: 'From the 202 of an ingestion request to its rows being queryable in ClickHouse (the ingest writer\'s lag), per stream message',
  buckets: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60],
  registers: [registry],
});

export const ingestItems = new Counter({
  name: 'ingest_items_total',
  help: 'Ingested items applied by the ingest writer, by endpoint and outcome (accepted, failed, duplicates, skipped)',
  labelNames: ['endpoint', 'outcome'] as const,
  registers: [registry],
});

export const ingestLag = new Gauge({
  name: 'ingest_lag_seconds',
  help: 'Age of the oldest ingestion request this gateway published that the ingest writer has not applied yet (0: all applied); past INGEST_MAX_LAG_SECONDS the ingestion API answers 429',
  registers: [registry],
});

export const ingestWriterPhase = new Histogram({
  name: 'ingest_writer_phase_seconds',
  help: 'Time the ingest writer spends per run of stream messages, by phase (decode, load, plan, triggers, write)',
  labelNames: ['phase'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const ingestKeyFilterChecks = new Counter({
  name: 'ingest_key_filter_checks_total',
  help: 'Keys the ingest writer checked before a run (event ids for an earlier copy, contacts for a stored state), by what answered: the in-memory filter (none stored, certainly) or the table (the filter was not ready, over INGEST_KEY_FILTER_MB, or could not rule the key out)',
  labelNames: ['keys', 'answered_by'] as const,
  registers: [registry],
});

export const ingestKeyFilterBytes = new Gauge({
  name: 'ingest_key_filter_bytes',
  help: 'Memory of the ingest writer\'s key filters, by keys (event_ids, contacts); all together at most INGEST_KEY_FILTER_MB',
  labelNames: ['keys'] as const,
  registers: [registry],
});

// --- SMPP customer server ---

export const smppSessionsBound = new Gauge({
  name: 'smpp_sessions_bound',
  help: 'Customer SMPP sessions bound in this process, by bind mode (transmitter, receiver, transceiver)',
  labelNames: ['mode'] as const,
  registers: [registry],
});

export const smppBindFailures = new Counter({
  name: 'smpp_bind_failures_total',
  help: 'Binds the customer SMPP server refused for their credentials (reason unknown_system_id, wrong_password) or without reading them during a lockout (locked_out)',
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const smppBindLockouts = new Counter({
  name: 'smpp_bind_lockouts_total',
  help: 'Lockouts started by failed SMPP binds, by what is locked out (system_id, address)',
  labelNames: ['scope'] as const,
  registers: [registry],
});

/** submit_sm answered ESME_ROK since the last scrape: the hot path adds to a number, the scrape hands it over. */
let submitOkPending = 0;

export const smppPdus = new Counter({
  name: 'smpp_pdus_total',
  help: 'Requests the customer SMPP server answered, by request command and the command_status of its answer',
  labelNames: ['command', 'status'] as const,
  registers: [registry],
  collect() {
    if (submitOkPending === 0) return;
    this.inc({ command: 'submit_sm', status: 'ESME_ROK' }, submitOkPending);
    submitOkPending = 0;
  },
});

/** submit_sm answered ESME_ROK, the one hot series: a plain addition per submit (prom-client hashes the labels of every inc, a child's too). */
export const smppSubmitOk = {
  inc(): void {
    submitOkPending += 1;
  },
};

/** The class of a webhook's HTTP answer, a bounded label ('none' when there was no answer). */
export function responseClass(status: number | null): string {
  if (status === null || status < 100 || status > 599) return 'none';
  return `${Math.floor(status / 100)}xx`;
}

// Known label values start at 0, so rate() and increase() have a base from the first scrape.
for (const source of ['http', 'legacy', 'smpp']) smsMessagesAccepted.inc({ source }, 0);
for (const status of ['delivered', 'failed', 'expired', 'canceled', 'rejected', 'error', 'unknown']) smsMessagesFinal.inc({ status }, 0);
for (const reason of ['unknown_system_id', 'wrong_password', 'locked_out']) smppBindFailures.inc({ reason }, 0);
for (const scope of ['system_id', 'address']) smppBindLockouts.inc({ scope }, 0);
smsRefunds.inc(0);
chargeHoldsRefunded.inc(0);
chargeHoldsSettled.inc(0);
