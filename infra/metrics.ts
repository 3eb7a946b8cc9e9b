// Prometheus metrics (prom-client): one registry per process, with default process metrics.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequests = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

export const smsAccepted = new Counter({
  name: 'sms_accepted_total',
  help: 'Messages accepted (HTTP and SMPP)',
  labelNames: ['source'] as const,
  registers: [registry],
});

export const clickhouseRowsWritten = new Counter({
  name: 'clickhouse_rows_written_total',
  help: 'Rows inserted into ClickHouse by the batch writers',
  labelNames: ['table'] as const,
  registers: [registry],
});

export const ingestVisibility = new Histogram({
  name: 'ingest_visibility_seconds',
  help: 'From the 202 of an ingestion request to its rows being queryable in ClickHouse (the ingest writer\'s lag), per stream message',
  buckets: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60],
  registers: [registry],
});

export const ingestItems = new Counter({
  name: 'ingest_items_total',
  help: 'Ingested items applied by the ingest writer, by endpoint and outcome (accepted, failed, duplicate, skipped)',
  labelNames: ['endpoint', 'outcome'] as const,
  registers: [registry],
});

export const ingestWriterPhase = new Histogram({
  name: 'ingest_writer_phase_seconds',
  help: 'Time the ingest writer spends per run of stream messages, by phase (decode, load, plan, triggers, write)',
  labelNames: ['phase'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});
