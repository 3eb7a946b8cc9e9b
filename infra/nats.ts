// NATS JetStream: the connection, and the streams and KV buckets the product owns, created
// idempotently at start. Their names are the bus contract (core/bus/names.ts).
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamClient, type ConsumerConfig, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { BUCKETS, STREAMS } from '../core/bus/names';
import type { Logger } from './logger';
import { JetStreamPublishError, PipelinedJetStream } from './pipelined-jetstream';

/** The names live in the bus contract; re-exported for the adapters that already read them here. */
export { INGEST_STATE_KEYS, STREAMS, SUBJECTS } from '../core/bus/names';

const NANOS_PER_MS = 1_000_000;
const DAY_MS = 24 * 3600 * 1000;

export interface BucketSet {
  /** Organizations, projects, tokens, prices, numbers. No TTL. */
  readonly accounts: KV;
  /** One key per organization: its balance, changed only by compare-and-set. */
  readonly balances: KV;
  /** Current state of recent messages and lookups (read-your-writes for GET by id). */
  readonly messages: KV;
  /** clientId → message id per project. */
  readonly idempotency: KV;
  /** Fixed-window rate-limit counters; keys expire on their own. */
  readonly ratelimits: KV;
  /** Recipients who sent STOP, per project (`<project>.<digits>`). No TTL. */
  readonly optouts: KV;
  /** Carrier message id → our message id and segment (`<carrier>.<carrierMessageId>`). */
  readonly carrierIds: KV;
  /** DLRs whose retry schedule ran out (`<tokenId>.<messageId>.<seq>`), until re-driven. */
  readonly deadDlrs: KV;
  /** The ingest writer's progress (INGEST_STATE_KEYS), so that a DELETE can wait until it is applied. */
  readonly ingestState: KV;
}

export interface Nats {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kv: BucketSet;
  /** Publishes and KV reads of the hot paths, without a request object per call (infra/pipelined-jetstream.ts). */
  readonly pipeline: PipelinedJetStream;
  close(): Promise<void>;
}

export interface NatsOptions {
  readonly servers: string;
  readonly replicas: number;
  readonly messageStateTtlHours: number;
  readonly name: string;
}

export async function connectNats(options: NatsOptions, log: Logger): Promise<Nats> {
  const nc = await connect({
    servers: options.servers.split(',').map((s) => s.trim()),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // The client otherwise builds an Error (a stack capture) for every request in case it
    // times out: measurable CPU at our request rate, for a trace we do not need.
    noAsyncTraces: true,
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') log.warn({ nats: status.type }, 'nats connection status');
    }
  })();
  const jsm = await jetstreamManager(nc);
  for (const stream of Object.values(STREAMS)) {
    await ensureStream(jsm, {
      name: stream.name,
      subjects: [...stream.subjects],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: options.replicas,
      max_age: 7 * DAY_MS * NANOS_PER_MS,
      // Triggers are published again when the ingest writer replays a batch after a crash;
      // the window must outlast the writer's redelivery (ack wait 60 s) with room to spare.
      duplicate_window: (stream.name === STREAMS.automation.name ? 15 : 2) * 60 * 1000 * NANOS_PER_MS,
    });
  }
  const kvm = new Kvm(nc);
  const stateTtlMs = options.messageStateTtlHours * 3600 * 1000;
  // On a cluster, a KV "direct get" may be answered by a follower that has not applied the
  // last write yet (a stale read just after a put, seen with R3 on the 3-node topology); reads
  // then go through the stream leader instead, for read-your-writes (DESIGN §3a).
  const consistentReads = options.replicas > 1 || Boolean(nc.info?.cluster) ? { allow_direct: false } : {};
  const kv: BucketSet = {
    accounts: await kvm.create(BUCKETS.accounts, { replicas: options.replicas, ...consistentReads, history: 1 }),
    balances: await kvm.create(BUCKETS.balances, { replicas: options.replicas, ...consistentReads, history: 1 }),
    messages: await kvm.create(BUCKETS.messages, { replicas: options.replicas, ...consistentReads, history: 1, ttl: stateTtlMs }),
    idempotency: await kvm.create(BUCKETS.idempotency, { replicas: options.replicas, ...consistentReads, history: 1, ttl: stateTtlMs }),
    ratelimits: await kvm.create(BUCKETS.ratelimits, { replicas: options.replicas, ...consistentReads, history: 1, ttl: 3 * 60 * 1000 }),
    optouts: await kvm.create(BUCKETS.optouts, { replicas: options.replicas, ...consistentReads, history: 1 }),
    carrierIds: await kvm.create(BUCKETS.carrierIds, { replicas: options.replicas, ...consistentReads, history: 1, ttl: 7 * DAY_MS }),
    deadDlrs: await kvm.create(BUCKETS.deadDlrs, { replicas: options.replicas, ...consistentReads, history: 1 }),
    ingestState: await kvm.create(BUCKETS.ingestState, { replicas: options.replicas, ...consistentReads, history: 1 }),
  };
  const pipeline = new PipelinedJetStream(nc, undefined, 'allow_direct' in consistentReads);
  return {
    nc,
    js: jetstream(nc),
    jsm,
    kv,
    pipeline,
    close: async () => {
      if (!nc.isClosed()) await nc.drain();
      pipeline.close();
    },
  };
}

/** Creates a durable consumer, or updates it when an earlier version created it differently. */
export async function ensureConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
  try {
    await jsm.consumers.add(stream, config);
  } catch (err) {
    if (!(err instanceof JetStreamApiError)) throw err;
    await jsm.consumers.update(stream, config.durable_name, config);
  }
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    const existing = await jsm.streams.info(config.name);
    // Never fewer replicas than the stream has: a client started without NATS_REPLICAS (the
    // admin CLI, a test helper) would otherwise turn a cluster's R3 streams into R1.
    // Lowering replication is an operator's decision (nats stream edit --replicas).
    const replicas = Math.max(existing.config.num_replicas, config.num_replicas ?? 1);
    await jsm.streams.update(config.name, { ...config, num_replicas: replicas });
  } catch (err) {
    if (isStreamNotFound(err)) await jsm.streams.add(config);
    else throw err;
  }
}

function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
}

/** Round-trip time to the server, for /health. */
export async function natsRtt(nats: Nats): Promise<number> {
  return nats.nc.rtt();
}

/**
 * A KV compare-and-set (`update` with a revision, or `create` of an existing key) lost to a
 * concurrent writer: re-read and try again.
 */
export function isRevisionConflict(err: unknown): boolean {
  if (err instanceof JetStreamApiError) {
    return err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown;
  }
  // The pipelined client's compare-and-set (infra/pipelined-jetstream.ts): the API error code.
  if (err instanceof JetStreamPublishError && err.errCode === JetStreamApiCodes.StreamWrongLastSequence) return true;
  // kv.create on an existing key reports "wrong last sequence" through a plain Error in some versions.
  return err instanceof Error && /wrong last sequence|key exists/i.test(err.message);
}
