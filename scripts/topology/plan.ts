// The scale-out topology on one machine, as data: every process, its port and its
// environment. Engines: a 3-node NATS JetStream cluster, PostgreSQL, the Temporal server
// (frontend, history, matching and worker services in one process, 8 history shards). The
// product: each role its own process (2 × gateway-http, gateway-smpp, 2 × worker, carrier,
// simulator and the writer that owns embedded ClickHouse and serves it to the gateways).
// compose/docker-compose.yml describes the same shape for Docker.
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
export const TOOLS_BIN = join(ROOT, '.tools', 'bin');
export const STATE = join(ROOT, 'data', 'topology');

/** Settings shared with compose/ (test/unit/compose-env.test.ts checks they agree). */
export const TOPOLOGY = {
  natsReplicas: 3,
  historyShards: 8,
  temporalVersion: 'v1.29.1',
  namespace: 'default',
  namespaceRetention: '7d',
} as const;

export const PORTS = {
  nats: [14222, 14223, 14224],
  natsCluster: [16222, 16223, 16224],
  natsMonitor: [18222, 18223, 18224],
  postgres: 15432,
  temporal: { frontend: 17233, frontendHttp: 17243, history: 17234, matching: 17235, worker: 17239, membership: 17933 },
  http: [18080, 18081],
  smpp: 12775,
  simulator: 12776,
  clickhouse: 18124,
  /** `--metrics-port` of each process without the HTTP gateway (compose/docker-compose.observability.yml: 9464 each). */
  metrics: { writer: 19464, carrier: 19465, 'worker-1': 19466, 'worker-2': 19467, 'gateway-smpp': 19468 },
} as const;

export const NATS_URL = PORTS.nats.map((p) => `nats://127.0.0.1:${p}`).join(',');
export const TEMPORAL_ADDRESS = `127.0.0.1:${PORTS.temporal.frontend}`;
export const CLICKHOUSE_URL = `chdb+http://127.0.0.1:${PORTS.clickhouse}`;
export const HTTP_URLS = PORTS.http.map((p) => `http://127.0.0.1:${p}`);

export interface ProductProcess {
  readonly name: string;
  readonly roles: readonly string[];
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** A TCP port that answers once the process is up (none for outbound-only roles). */
  readonly port?: number;
  /** Where this process serves /metrics (its API port for gateway-http, else `--metrics-port`); none for the simulator. */
  readonly metricsUrl?: string;
}

/** Environment every product process gets: the external engines, no embedded state. */
export function productEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NATS_URL,
    NATS_REPLICAS: String(TOPOLOGY.natsReplicas),
    TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: TOPOLOGY.namespace,
    SIMULATOR_PORT: String(PORTS.simulator),
    DEMO_SEED: 'false',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** The product's processes in start order (the ClickHouse owner first: it runs the migrations). */
export function productProcesses(overrides: Record<string, string> = {}): ProductProcess[] {
  const env = (name: string, extra: Record<string, string> = {}): Record<string, string> =>
    productEnv({ DATA_DIR: join(STATE, 'product', name), ...extra, ...overrides });
  const chClient = { CLICKHOUSE_URL };
  const m = PORTS.metrics;
  // HTTP_HOST is where `--metrics-port` binds too: loopback, like every port of the topology.
  const withMetrics = (p: ProductProcess, port: number): ProductProcess =>
    ({ ...p, args: [...p.args, `--metrics-port=${port}`], env: { ...p.env, HTTP_HOST: '127.0.0.1' }, metricsUrl: `http://127.0.0.1:${port}/metrics` });
  const http = (i: 0 | 1, extra: Record<string, string>): ProductProcess => ({
    name: `gateway-http-${i + 1}`, roles: ['gateway-http'], args: [], port: PORTS.http[i], metricsUrl: `${HTTP_URLS[i] as string}/metrics`,
    env: env(`gateway-http-${i + 1}`, { ...chClient, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(PORTS.http[i]), ...extra }),
  });
  return [
    withMetrics({ name: 'writer', roles: ['ingest-writer'], args: [`--serve-clickhouse=${PORTS.clickhouse}`], env: env('writer'), port: PORTS.clickhouse }, m.writer),
    { name: 'simulator', roles: ['simulator'], args: [], env: env('simulator'), port: PORTS.simulator },
    withMetrics({ name: 'carrier', roles: ['carrier'], args: [], env: env('carrier') }, m.carrier),
    withMetrics({ name: 'worker-1', roles: ['worker'], args: [], env: env('worker-1') }, m['worker-1']),
    withMetrics({ name: 'worker-2', roles: ['worker'], args: [], env: env('worker-2') }, m['worker-2']),
    http(0, { DEMO_SEED: 'true' }),
    http(1, {}),
    withMetrics({ name: 'gateway-smpp', roles: ['gateway-smpp'], args: [], env: env('gateway-smpp', { SMPP_PORT: String(PORTS.smpp) }), port: PORTS.smpp }, m['gateway-smpp']),
  ];
}

export const NATS_NODES = PORTS.nats.map((port, i) => ({ name: `nats-${i + 1}`, port, cluster: PORTS.natsCluster[i] as number, monitor: PORTS.natsMonitor[i] as number }));
