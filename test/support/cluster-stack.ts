// TEST_TOPOLOGY=cluster: the integration suites run against the scale-out topology
// (scripts/topology: 3 clustered nats-servers, the Temporal server on PostgreSQL, each role its
// own process) instead of the one-process stack. The product processes run with the test
// settings of the embedded stack (those already running are restarted with them); the topology
// is brought down afterwards unless it was up before the run (then it is left as found, with
// the product on the test settings).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTP_URLS, NATS_URL, PORTS, productEnv, productProcesses, STATE, TEMPORAL_ADDRESS, TOPOLOGY } from '../../scripts/topology/plan';
import { pidOf, stop } from '../../scripts/topology/processes';
import { down, startProduct, up } from '../../scripts/topology/topology';
import type { RunningStack } from '../../support/stack';
import type { StackInfo } from '../../support/stack';

/** The settings startStack gives the embedded product, so that the same assertions hold. */
export const CLUSTER_TEST_ENV: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BULK_PER_MINUTE: '100000', SIMULATOR_LATENCY_MS: '30',
  MESSAGE_VALIDITY_SECONDS: '15', WEBHOOK_RETRY_INITIAL_MS: '1000', WEBHOOK_RETRY_MAX_MS: '4000', WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};

export async function startClusterStack(log: (line: string) => void = (l) => process.stderr.write(l)): Promise<RunningStack> {
  const started = Date.now();
  const wasUp = pidOf('nats-1') !== undefined;
  process.env['TOPOLOGY_ENV'] = JSON.stringify(CLUSTER_TEST_ENV);
  log(`\n[test stack] the scale-out topology (scripts/topology); state in ${STATE}\n`);
  // Product processes running before this run may have other settings: restarted. What up()
  // starts has the test settings already.
  const before = productProcesses().filter((p) => pidOf(p.name) !== undefined);
  await up();
  for (const p of [...before].reverse()) await stop(p.name);
  if (before.length > 0) await startProduct();
  const info: StackInfo = {
    httpUrl: HTTP_URLS[0] as string, natsUrl: NATS_URL, temporalAddress: TEMPORAL_ADDRESS, namespace: TOPOLOGY.namespace, taskQueue: 'sms',
    dataDir: mkdtempSync(join(tmpdir(), 'sms-platform-cluster-test-')), productDataDir: join(STATE, 'product', 'gateway-http-1'),
    productEnv: { ...productEnv(CLUSTER_TEST_ENV), HTTP_PORT: String(PORTS.http[0]), SMPP_PORT: String(PORTS.smpp) },
    metrics: productProcesses().flatMap((p) => (p.metricsUrl ? [{ instance: p.name, url: p.metricsUrl }] : [])),
  };
  log(`[test stack] topology ready in ${((Date.now() - started) / 1000).toFixed(1)} s; suites use ${info.httpUrl}\n`);
  return {
    info,
    pid: pidOf('gateway-http-1'),
    stop: async () => {
      rmSync(info.dataDir, { recursive: true, force: true });
      if (!wasUp) await down();
    },
  };
}
