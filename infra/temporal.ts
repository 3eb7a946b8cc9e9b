// Temporal: the client connection used by gateways and the admin CLI, the spec of the
// embedded dev server (SQLite file under DATA_DIR, UI on its own port, tuned for throughput),
// and the SDK runtime's metrics (workflow task latency, schedule-to-start...) merged into this
// process's /metrics.
import { Client, Connection } from '@temporalio/client';
import type { TelemetryOptions } from '@temporalio/worker';
import { join } from 'node:path';
import { registry } from './metrics';
import { freePort } from './ports';
import type { ChildSpec } from './supervisor';

export interface TemporalOptions {
  readonly address: string;
  readonly namespace: string;
}

export interface Temporal {
  readonly connection: Connection;
  readonly client: Client;
  readonly namespace: string;
  close(): Promise<void>;
}

/** One connection attempt's deadline (the SDK's connectTimeout). */
const CONNECT_ATTEMPT_MS = 10_000;
/**
 * How long a process keeps trying to reach the Temporal frontend at start-up. On a busy machine
 * the embedded server and the role processes run at BACKGROUND_NICE and can take well over one
 * attempt's deadline to answer; the role process supervisor waits 120 s for a role to be ready.
 */
export const TEMPORAL_CONNECT_WAIT_MS = 90_000;

export interface ConnectWait {
  /** Keep trying this long (0: one attempt). */
  readonly waitMs: number;
  /** Told of each failed attempt that will be tried again. */
  readonly onRetry?: (err: unknown, attempt: number) => void;
  /** One attempt's deadline. */
  readonly attemptMs?: number;
}

/** Runs `attempt` until it succeeds or `wait.waitMs` has passed since the first try; the last error is thrown. */
export async function untilConnected<T>(attempt: (attemptMs: number) => Promise<T>, wait: ConnectWait): Promise<T> {
  const deadline = Date.now() + wait.waitMs;
  for (let n = 1; ; n += 1) {
    try {
      return await attempt(wait.attemptMs ?? CONNECT_ATTEMPT_MS);
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      wait.onRetry?.(err, n);
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, Math.max(0, deadline - Date.now()))));
    }
  }
}

export async function connectTemporal(options: TemporalOptions, wait: ConnectWait = { waitMs: 0 }): Promise<Temporal> {
  const connection = await untilConnected((connectTimeout) => Connection.connect({ address: options.address, connectTimeout }), wait);
  const client = new Client({ connection, namespace: options.namespace });
  return { connection, client, namespace: options.namespace, close: () => connection.close() };
}

/** Round-trip to the frontend and the namespace, for /health and readiness checks. */
export async function temporalRtt(temporal: Pick<Temporal, 'connection' | 'namespace'>): Promise<number> {
  const started = performance.now();
  await temporal.connection.workflowService.describeNamespace({ namespace: temporal.namespace });
  return performance.now() - started;
}

export interface DevServerOptions {
  readonly binary: string;
  readonly dataDir: string;
  readonly port: number;
  readonly uiPort: number;
  readonly namespace: string;
}

/** SQLite pragmas, dynamic config and Go runtime settings of the embedded dev server. */
export interface DevServerTuning {
  readonly pragmas: readonly string[];
  readonly dynamicConfig: readonly string[];
  /** Environment of the server process (Go runtime settings such as GOGC). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Measured one by one with `npm run bench:temporal-tuning` (README, docs/lifecycle.md): WAL with
 * synchronous=NORMAL doubles the single-shard server's throughput (×2.08); no dynamic-config
 * setting moved it beyond run-to-run noise, so only two are kept, for reasons other than that
 * benchmark: lifted rate limits (the defaults would throttle a burst of starts and signals) and
 * eager activity execution (a DLR's retry activity starts without a trip through matching).
 */
export const DEV_SERVER_TUNING: DevServerTuning = {
  pragmas: ['journal_mode=wal', 'synchronous=NORMAL'],
  dynamicConfig: [
    'system.enableActivityEagerExecution=true',
    'frontend.namespaceRPS=100000',
    'frontend.namespaceCount=100000',
    'history.rps=100000',
    'matching.rps=100000',
  ],
  env: {},
};

export function devServerSpec(options: DevServerOptions, ready: () => Promise<boolean>, tuning: DevServerTuning = DEV_SERVER_TUNING): ChildSpec {
  return {
    name: 'temporal',
    command: options.binary,
    args: [
      'server', 'start-dev',
      '--db-filename', join(options.dataDir, 'temporal.db'),
      '--ip', '127.0.0.1',
      '--port', String(options.port),
      '--ui-port', String(options.uiPort),
      // "default" always exists; -n creates any other namespace at launch.
      ...(options.namespace === 'default' ? [] : ['--namespace', options.namespace]),
      '--log-level', 'warn',
      ...tuning.pragmas.flatMap((p) => ['--sqlite-pragma', p]),
      ...tuning.dynamicConfig.flatMap((d) => ['--dynamic-config-value', d]),
    ],
    env: tuning.env,
    ready,
    readyTimeoutMs: 90_000,
  };
}

let metricsAddress: string | undefined;

/**
 * Gives the Temporal SDK runtime a Prometheus exporter on a loopback port (a free one unless
 * `port` is set) and appends what it serves to this process's registry, so the worker's
 * workflow-task and activity metrics come out of the same /metrics as ours. Call before the
 * runtime is installed (before any Worker is created); later calls return the same address.
 */
export async function enableTemporalMetrics(port = 0): Promise<string> {
  if (metricsAddress) return metricsAddress;
  metricsAddress = `127.0.0.1:${port === 0 ? await freePort() : port}`;
  registry.addSource(`http://${metricsAddress}/metrics`);
  return metricsAddress;
}

/** The runtime's telemetry options (spread into Runtime.install): Prometheus once enableTemporalMetrics ran. */
export function temporalTelemetry(): { telemetryOptions?: TelemetryOptions } {
  if (!metricsAddress) return {};
  return {
    telemetryOptions: {
      metrics: {
        prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
      },
    },
  };
}
