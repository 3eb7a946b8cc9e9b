// The names every role agrees on: JetStream streams, subjects and durable consumers, KV buckets
// and the keys built in them. Pure data (no NATS import): infra/nats.ts creates what is named
// here, and every publisher and consumer takes its names from this file (docs/architecture.md).

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
  /** AcceptedPayload: the messages of one accepted request. */
  smsAccepted: 'sms.accepted',
  /** `sms.status.<tokenId>`: StatusPayload, every status transition (history writer, SMPP gateway deliver_sm). */
  smsStatus: (tokenId: string) => `sms.status.${tokenId}`,
  smsStatusAll: 'sms.status.>',
  /** `sms.inbound.<tokenId>`: InboundPayload, inbound messages routed to a token (published by the lifecycle bridge). */
  smsInbound: (tokenId: string) => `sms.inbound.${tokenId}`,
  smsInboundAll: 'sms.inbound.>',
  /** DlrAttemptPayload: every webhook attempt, for GET /sms/{id}/dlrs. */
  dlrAttempt: 'sms.dlr.attempt',
  /** LookupsPayload. */
  lookupCreated: 'lookup.created',
  /** CarrierSubmit. */
  carrierSubmit: 'carrier.submit',
  /** CarrierEvent. */
  carrierEvents: 'carrier.events',
  /** CarrierInbound. */
  carrierInbound: 'carrier.inbound',
  /** One stream message per accepted batch or deletion (payloads in ./ingest.ts). */
  ingestContacts: (projectId: string, datasourceId: string) => `ingest.contacts.${projectId}.${datasourceId}`,
  ingestEvents: (projectId: string, datasourceId: string) => `ingest.events.${projectId}.${datasourceId}`,
  ingestDelete: (projectId: string, datasourceId: string) => `ingest.delete.${projectId}.${datasourceId}`,
  /** Requests that stored nothing (every item failed), counted for GET /stream usage. */
  ingestRejected: (projectId: string, datasourceId: string) => `ingest.rejected.${projectId}.${datasourceId}`,
  ingestAll: 'ingest.>',
  /** `automation.trigger.<project>`: one message per trigger-worthy event, msgID `<datasource>:<event id>`. */
  automationTrigger: (projectId: string) => `automation.trigger.${projectId}`,
  /** Core NATS request (no stream): MoRequest to the carrier simulator, answered with a MoReply. */
  simulatorMo: 'simulator.mo',
} as const;

/** Durable JetStream consumers, by owner. */
export const CONSUMERS = {
  historyWriter: 'history-writer',
  lifecycleStarter: 'lifecycle-starter',
  lifecycleEvents: 'lifecycle-events',
  lifecycleInbound: 'lifecycle-inbound',
  carrierConnector: 'carrier-connector',
  ingestWriter: 'ingest-writer',
  /** Headers only: settles the charge holds named by each accepted batch and lookup (pipelines/charge-settler.ts). */
  chargeSettler: 'charge-settler',
  /** One per SMPP token, created at its first bind: its receipts and inbound messages. */
  smppDlr: (tokenId: string) => `smpp-dlr-${tokenId}`,
} as const;

/** Headers the product sets on stream messages. */
export const HEADERS = {
  /**
   * On `sms.accepted` and `lookup.created`: the charge holds the stream message settles,
   * `<orgId>/<holdId>` separated by spaces (formatHoldRefs, parseHoldRefs).
   */
  chargeHolds: 'Sms-Charge-Holds',
  /**
   * On `sms.accepted`: how many messages of each source the batch carries, `<source>=<count>`
   * separated by spaces (formatSourceCounts, parseSourceCounts). With it the history writer
   * counts and stores a batch without decoding it (pipelines/history-writer.ts).
   */
  acceptedSources: 'Sms-Accepted-Sources',
} as const;

/**
 * The body of an `sms.accepted` stream message as the acceptance path writes it: the messages'
 * JSON objects (AcceptedPayload's items), comma-separated, between `head` and `tail`.
 */
export const ACCEPTED_FRAME = { head: '{"messages":[', tail: ']}' } as const;

export function formatSourceCounts(counts: ReadonlyMap<string, number>): string {
  return [...counts].map(([source, n]) => `${source}=${n}`).join(' ');
}

/** The counts of an `Sms-Accepted-Sources` header, or null when it is absent or not of that form. */
export function parseSourceCounts(value: string | undefined): Map<string, number> | null {
  if (!value) return null;
  const counts = new Map<string, number>();
  for (const part of value.split(' ')) {
    const match = /^([a-z]+)=([1-9][0-9]{0,5})$/.exec(part);
    if (!match) return null;
    counts.set(match[1] as string, (counts.get(match[1] as string) ?? 0) + Number(match[2]));
  }
  return counts;
}

/** A charge hold named on the bus: the organization whose balance holds it, and its id. */
export interface HoldRef {
  readonly orgId: string;
  readonly holdId: string;
}

export function formatHoldRefs(refs: readonly HoldRef[]): string {
  return refs.map((r) => `${r.orgId}/${r.holdId}`).join(' ');
}

export function parseHoldRefs(value: string | undefined): HoldRef[] {
  if (!value) return [];
  const refs: HoldRef[] = [];
  for (const part of value.split(' ')) {
    // An organization id may hold a '/' (a valid KV key); a hold id never does.
    const slash = part.lastIndexOf('/');
    if (slash > 0 && slash < part.length - 1) refs.push({ orgId: part.slice(0, slash), holdId: part.slice(slash + 1) });
  }
  return refs;
}

/** KV bucket names (infra/nats.ts BucketSet says what each holds). */
export const BUCKETS = {
  accounts: 'accounts',
  balances: 'balances',
  messages: 'messages',
  idempotency: 'idempotency',
  ratelimits: 'ratelimits',
  optouts: 'optouts',
  carrierIds: 'carrier_ids',
  deadDlrs: 'dead_dlrs',
  ingestState: 'ingest_state',
  /** Console operators (stores/operator-store.ts). */
  consoleOperators: 'console_operators',
  /** Console sessions, ended by the bucket's TTL (stores/operator-store.ts). */
  consoleSessions: 'console_sessions',
} as const;

/** Keys built in the buckets above. */
export const KV_KEYS = {
  /** `messages`: the current state of a message (an SmsMessage). */
  messageState: (messageId: string) => `sms.${messageId}`,
  /**
   * `messages`: the accepted states of one request's messages, or of the single sends of one
   * event-loop turn (core/bus/state-batch.ts), for those that have no `sms.<id>` yet; `batch` is
   * core/ids batchOf(id).
   */
  messageBatch: (batch: string) => `smsb.${batch}`,
  /** `messages`: the record of a lookup (a Lookup). */
  lookupState: (lookupId: string) => `lookup.${lookupId}`,
  /** `idempotency`: a clientId's claim (the id of the message that holds it), per project scope and clientId digest. */
  clientIdClaim: (scope: string, clientIdDigest: string) => `${scope}.${clientIdDigest}`,
  /** `idempotency`: makes a retried refund a no-op. */
  refund: (messageId: string) => `refund.${messageId}`,
  /** `idempotency`: the batch lifecycle that owns a message (a LifecycleOwner), claimed once before its hand-off. */
  lifecycleOwner: (messageId: string) => `lifecycle.${messageId}`,
  /** `dead_dlrs`: a DLR whose retry window closed (a DeadDlr). */
  deadDlr: (tokenId: string, messageId: string, seq: number) => `${tokenId}.${messageId}.${seq}`,
  /** `dead_dlrs`: every dead DLR of a token, or all of them. */
  deadDlrsOf: (tokenId?: string) => (tokenId ? `${tokenId}.>` : '>'),
  /** `optouts`: a recipient who sent STOP to a project. */
  optOut: (projectId: string, number: string) => `${projectId}.${number.replace(/^\+/, '')}`,
} as const;

/** Keys of the `ingest_state` bucket. */
export const INGEST_STATE_KEYS = {
  /** Highest INGEST stream sequence the ingest writer has applied to ClickHouse. */
  applied: 'applied',
} as const;
