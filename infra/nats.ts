// NATS JetStream: the connection, and the streams and KV buckets the product owns, created
// idempotently at start. Names here are the contract between roles (see docs/architecture.md).
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamClient, type ConsumerConfig, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from './logger';

export const STREAMS = {
  /** Accepted messages (one stream message per request), status transitions, DLR attempts, lookups. */
  sms: { name: 'SMS', subjects: ['sms.>', 'lookup.>'] },
  /** Hand-off to the carrier connector, its per-segment events, inbound messages. */
  carrier: { name: 'CARRIER', subjects: ['carrier.>'] },
  /** Accepted ingestion batches and contact deletions, in the order the ingest writer applies them. */
  ingest: { name: 'INGEST', subjects: ['ingest.>'] },
  /** Automation triggers of accepted events inside the ±1 h window (spec 2 §4 rule 6; the contract for automation engines). */
  automation: { name: 'AUTOMATION', subjects: ['automation.>'] },
} as const;

export const SUBJECTS = {
  smsAccepted: 'sms.accepted',
  /** `sms.status.<tokenId>`: every status transition (history writer, SMPP gateway deliver_sm). */
  smsStatus: (tokenId: string) => `sms.status.${tokenId}`,
  smsStatusAll: 'sms.status.>',
  /** Every webhook attempt, for GET /sms/{id}/dlrs. */
  dlrAttempt: 'sms.dlr.attempt',
  lookupCreated: 'lookup.created',
  carrierSubmit: 'carrier.submit',
  carrierEvents: 'carrier.events',
  carrierInbound: 'carrier.inbound',
  /** One stream message per accepted batch or deletion (payloads in core/ingest/bus.ts). */
  ingestContacts: (projectId: string, datasourceId: string) => `ingest.contacts.${projectId}.${datasourceId}`,
  ingestEvents: (projectId: string, datasourceId: string) => `ingest.events.${projectId}.${datasourceId}`,
  ingestDelete: (projectId: string, datasourceId: string) => `ingest.delete.${projectId}.${datasourceId}`,
  /** Requests that stored nothing (every item failed), counted for GET /stream usage. */
  ingestRejected: (projectId: string, datasourceId: string) => `ingest.rejected.${projectId}.${datasourceId}`,
  ingestAll: 'ingest.>',
  /** `automation.trigger.<project>`: one message per trigger-worthy event, msgID `<datasource>:<event id>`. */
  automationTrigger: (projectId: string) => `automation.trigger.${projectId}`,
} as const;

/** Keys of the `ingest_state` bucket. */
export const INGEST_STATE_KEYS = {
  /** Highest INGEST stream sequence the ingest writer has applied to ClickHouse. */
  applied: 'applied',
} as const;

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
  const kv: BucketSet = {
    accounts: await kvm.create('accounts', { replicas: options.replicas, history: 1 }),
    balances: await kvm.create('balances', { replicas: options.replicas, history: 1 }),
    messages: await kvm.create('messages', { replicas: options.replicas, history: 1, ttl: stateTtlMs }),
    idempotency: await kvm.create('idempotency', { replicas: options.replicas, history: 1, ttl: stateTtlMs }),
    ratelimits: await kvm.create('ratelimits', { replicas: options.replicas, history: 1, ttl: 3 * 60 * 1000 }),
    optouts: await kvm.create('optouts', { replicas: options.replicas, history: 1 }),
    carrierIds: await kvm.create('carrier_ids', { replicas: options.replicas, history: 1, ttl: 7 * DAY_MS }),
    deadDlrs: await kvm.create('dead_dlrs', { replicas: options.replicas, history: 1 }),
    ingestState: await kvm.create('ingest_state', { replicas: options.replicas, history: 1 }),
  };
  return {
    nc,
    js: jetstream(nc),
    jsm,
    kv,
    close: async () => {
      if (!nc.isClosed()) await nc.drain();
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
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
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
  // kv.create on an existing key reports "wrong last sequence" through a plain Error in some versions.
  return err instanceof Error && /wrong last sequence|key exists/i.test(err.message);
}
