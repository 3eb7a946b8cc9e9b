// The worker role: a Temporal worker running the product workflows and activities.
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel } from '@temporalio/worker';
import type { LifecycleDeps } from '../activities/lifecycle';
import { BUCKETS } from '../core/bus/names';
import type { WebhookTargetPolicy } from '../core/sms';
import { PipelinedBus } from '../infra/bus/event-bus';
import type { Logger } from '../infra/logger';
import { TEMPORAL_CONNECT_WAIT_MS, temporalTelemetry, untilConnected } from '../infra/temporal';
import type { Nats } from '../infra/nats';
import { HttpWebhookSender } from '../infra/webhook-sender';
import type { AccountDirectory } from '../stores/account-directory';
import type { BalanceLedger } from '../stores/balance-ledger';
import { KvDeadLetters, KvLifecycleOwners, KvLifecycleStates, KvOnceKeys } from '../stores/lifecycle-records';
import { KvOptOutReader } from '../stores/opt-out-reader';
import { createActivities, type ActivityDeps } from '../activities';

export interface WorkerRole {
  readonly running: Promise<void>;
  /**
   * A client on the worker's own connection: its starts can ask for eager execution (the first
   * workflow task comes back with the start and runs here, skipping the task queue).
   */
  readonly client: Client;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  readonly address: string;
  readonly namespace: string;
  readonly taskQueue: string;
}

/**
 * The lifecycle activities' ports over this process's engines; the per-message KV records and
 * publishes go through the pipelined JetStream client (infra/pipelined-jetstream.ts).
 */
export function lifecyclePorts(nats: Nats, tokens: AccountDirectory, funds: BalanceLedger, webhookTimeoutMs: number, log: Logger, webhookTargets: WebhookTargetPolicy): LifecycleDeps {
  const idempotency = { jetstream: nats.pipeline, bucket: BUCKETS.idempotency };
  return {
    states: new KvLifecycleStates(nats.kv.messages, { jetstream: nats.pipeline, bucket: BUCKETS.messages }),
    bus: new PipelinedBus(nats.pipeline),
    webhooks: new HttpWebhookSender({ allowPrivateTargets: webhookTargets.allowPrivateTargets }),
    deadLetters: new KvDeadLetters(nats.kv.deadDlrs),
    once: new KvOnceKeys(nats.kv.idempotency, idempotency),
    tokens,
    owners: new KvLifecycleOwners(nats.kv.idempotency, idempotency),
    funds,
    optOuts: new KvOptOutReader(nats.kv.optouts),
    webhookTimeoutMs,
    log,
  };
}

let runtimeInstalled = false;

/** Routes the SDK's own logs into our structured log (warnings and worse by default). */
function installRuntimeLogger(log: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level: LogLevel = log.isLevelEnabled('debug') ? 'DEBUG' : 'WARN';
  Runtime.install({
    ...temporalTelemetry(),
    logger: new DefaultLogger(level, (entry) => {
      const fields = { temporal: entry.meta ?? {} };
      if (entry.level === 'ERROR') log.error(fields, entry.message);
      else if (entry.level === 'WARN') log.warn(fields, entry.message);
      else log.debug(fields, entry.message);
    }),
  });
}

export async function startWorker(options: WorkerOptions, deps: ActivityDeps, log: Logger): Promise<WorkerRole> {
  installRuntimeLogger(log);
  const connection = await untilConnected(() => NativeConnection.connect({ address: options.address }), {
    waitMs: TEMPORAL_CONNECT_WAIT_MS,
    onRetry: (err, attempt) => log.warn({ err, attempt, address: options.address }, 'the worker cannot reach Temporal yet (a busy machine or a server still starting); trying again'),
  });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: require.resolve('../workflows'),
    activities: createActivities(deps),
    identity: deps.identity,
  });
  const running = worker.run().finally(() => connection.close());
  log.info({ taskQueue: options.taskQueue }, 'temporal worker running');
  return {
    running,
    client: new Client({ connection, namespace: options.namespace }),
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch((err: unknown) => log.error({ err }, 'worker stopped with an error'));
    },
  };
}
