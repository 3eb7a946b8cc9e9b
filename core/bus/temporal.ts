// The names shared by Temporal clients (bridges, CLI, tests) and the workflows: workflow types,
// signal and query names, workflow ids. Pure data, safe inside the workflow bundle.

export const WORKFLOW_TYPES = {
  /** One workflow per message: kept registered so in-flight and recorded histories replay. */
  smsLifecycle: 'smsLifecycle',
  /** One workflow per batch of accepted messages, a state machine per message (docs/lifecycle.md). */
  smsBatchLifecycle: 'smsBatchLifecycle',
  /**
   * A scheduled message (DESIGN §4 Scheduling): waits on a durable timer until its scheduledAt
   * (cancelable by the `cancelScheduled` update), then lives the per-message lifecycle; id `sms-<id>`.
   */
  smsScheduled: 'smsScheduled',
  dlrDelivery: 'dlrDelivery',
  systemProbe: 'systemProbe',
} as const;

export const SIGNALS = {
  /** CarrierEvent | CarrierEvent[] to a message's lifecycle. */
  carrierEvent: 'carrierEvent',
  /** CarrierEvent[] of any of a batch's messages (events of other messages are ignored). */
  batchEvents: 'batchEvents',
} as const;

export const UPDATES = {
  /**
   * Cancels a scheduled message still waiting on its timer: answers `{ canceled: true }` once its
   * `canceled` transition is recorded and its charge refunded, `{ canceled: false, status }` once
   * the timer has fired (the message left). Sent with update id UPDATE_IDS.cancel(messageId).
   */
  cancelScheduled: 'cancelScheduled',
} as const;

/** Update ids: a repeated cancel of one message gets the first one's answer. */
export const UPDATE_IDS = {
  cancel: (messageId: string) => `cancel-${messageId}`,
} as const;

/** The answer of the cancelScheduled update. */
export type CancelScheduledOutcome = { readonly canceled: true } | { readonly canceled: false; readonly status: string };

export const QUERIES = {
  /** A lifecycle's current status and pending DLRs. */
  status: 'status',
  /** A batch lifecycle's messages: status, code, pending DLRs each. */
  batchStatus: 'batchStatus',
} as const;

export const WORKFLOW_IDS = {
  /** A message's lifecycle: one per message, so a repeated start is harmless. */
  lifecycle: (messageId: string) => `sms-${messageId}`,
  /**
   * A batch lifecycle, named after its first message and a fingerprint of all its message ids:
   * a start repeated with exactly the same messages finds the same workflow, and one with another
   * grouping (the starter crashed before its ack and fetched differently) starts another, which
   * hands over only the messages no batch holds yet. Which batch holds a message is recorded in
   * KV (KV_KEYS.lifecycleOwner) by the batch itself before it hands the message to the carrier;
   * a message with no such record has a per-message lifecycle.
   */
  batch: (firstMessageId: string, fingerprint: string) => `smsb-${firstMessageId}-${fingerprint}`,
  /** The DLR of one inbound message. */
  inbound: (inboundId: string) => `inbound-${inboundId}`,
  /** A re-driven dead DLR (a fresh schedule each time). */
  redrive: (messageId: string, seq: number, at: number) => `redrive-${messageId}-${seq}-${at}`,
  systemProbe: (at: number) => `system-probe-${at}`,
} as const;

/**
 * Memo key of a batch lifecycle: the ids of the messages it was started with, space-separated
 * (Temporal UI), as many as fit in BATCH_MEMO_IDS_MAX_CHARS; the batchStatus query lists them all.
 */
export const BATCH_MEMO_MESSAGES = 'messages';
/** Memo key of a batch lifecycle: how many messages it was started with. */
export const BATCH_MEMO_COUNT = 'messageCount';
/** The memo stays under the server's 2 KB warning size (about 40 message ids). */
export const BATCH_MEMO_IDS_MAX_CHARS = 1_500;

/** A batch lifecycle's memo: the ids that fit, and their count. */
export function batchMemo(ids: readonly string[]): Record<string, string | number> {
  let listed = '';
  for (const id of ids) {
    const next = listed ? `${listed} ${id}` : id;
    if (next.length > BATCH_MEMO_IDS_MAX_CHARS) break;
    listed = next;
  }
  return { [BATCH_MEMO_MESSAGES]: listed, [BATCH_MEMO_COUNT]: ids.length };
}

/** The Temporal UI page of a workflow run. */
export function temporalUiLink(uiBase: string, namespace: string, workflowId: string, runId?: string): string {
  const base = `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
