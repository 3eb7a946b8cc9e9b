// Wiring of the running services (pipelines/): each built from its factory over this process's
// engines and the ports the roles hand in, then started. Which process runs which is main.ts's
// choice (the worker's bridge, the history writer where ClickHouse is, the one-per-deployment
// jobs of the ingest-writer role).
import type { Config } from '../config';
import { BUCKETS } from '../core/bus/names';
import type { HelpReplies, LifecycleOwners, OptOutRecorder } from '../core/sms';
import type { Logger } from '../infra/logger';
import { startChargeSettler } from '../pipelines/charge-settler';
import { startHistoryWriter } from '../pipelines/history-writer';
import { startIngestWriter } from '../pipelines/ingest-writer';
import { startLifecycleBridge } from '../pipelines/lifecycle-bridge';
import { startPipelineMetrics } from '../pipelines/pipeline-metrics';
import { startStatsRollup } from '../pipelines/stats-rollup';
import { KvLifecycleStates } from '../stores/lifecycle-records';
import { KvClientIds } from '../stores/client-ids';
import { StatsRollup } from '../stores/stats-rollup';
import type { Engines } from './engines';
import type { WorkerRole } from './worker';

interface Stoppable {
  stop(): Promise<void>;
}

/** The JetStream → Temporal bridges next to this process's worker: eager starts on the worker's own connection. */
export function startWorkerBridge(engines: Pick<Engines, 'nats' | 'directory'>, config: Config, worker: Pick<WorkerRole, 'client'>, ports: { optOuts: OptOutRecorder; owners: LifecycleOwners; helpReplies?: HelpReplies }, log: Logger): Promise<Stoppable> {
  return startLifecycleBridge({
    nats: engines.nats, client: worker.client, eagerStart: true, taskQueue: config.temporal.taskQueue, directory: engines.directory, optOuts: ports.optOuts,
    ...(ports.helpReplies ? { helpReplies: ports.helpReplies } : {}),
    validityMs: config.lifecycle.validitySeconds * 1000, webhook: config.lifecycle.webhook, batchMax: config.lifecycle.batchMaxMessages, owners: ports.owners, log,
  });
}

/** The history writer of a process with ClickHouse (none without); its inserts at `backgroundNice` (BACKGROUND_NICE). */
export async function startHistory(engines: Pick<Engines, 'nats' | 'clickhouse'>, log: Logger, options: { readonly backgroundNice: number } = { backgroundNice: 0 }): Promise<Stoppable | undefined> {
  return engines.clickhouse ? startHistoryWriter(engines.nats, engines.clickhouse, log, options) : undefined;
}

/**
 * The one-per-deployment jobs of the ingest-writer role, each added to `running` as soon as it
 * runs (stopped in reverse): the ingest writer (with ClickHouse); the pipeline metrics (consumer
 * lag, dead letters, refunds); the statistics rollup (with ClickHouse: pipelines/stats-rollup.ts);
 * the charge settler (settles charge holds from the stream, refunds those it never saw, over the
 * message states and clientId claims in KV).
 */
export async function startDeploymentJobs(engines: Pick<Engines, 'nats' | 'clickhouse' | 'balances'>, config: Config, log: Logger, running: Stoppable[]): Promise<void> {
  const { nats } = engines;
  if (engines.clickhouse) running.push(await startIngestWriter(nats, engines.clickhouse, log, { keyFilterBytes: config.ingest.keyFilterBytes }));
  if (engines.clickhouse) running.push(startStatsRollup({ rollup: new StatsRollup(engines.clickhouse), log }));
  running.push(await startPipelineMetrics(nats, log));
  running.push(await startChargeSettler({
    nats, ledger: engines.balances, refundAfterMs: config.chargeHoldRefundSeconds * 1000, log,
    states: new KvLifecycleStates(nats.kv.messages, { jetstream: nats.pipeline, bucket: BUCKETS.messages }),
    clientIds: new KvClientIds(nats.kv.idempotency),
  }));
}
