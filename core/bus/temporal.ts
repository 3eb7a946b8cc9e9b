// The names shared by Temporal clients (bridges, CLI, tests) and the workflows: workflow types,
// signal and query names, workflow ids. Pure data, safe inside the workflow bundle.

export const WORKFLOW_TYPES = {
  smsLifecycle: 'smsLifecycle',
  dlrDelivery: 'dlrDelivery',
  systemProbe: 'systemProbe',
} as const;

export const SIGNALS = {
  /** CarrierEvent | CarrierEvent[] to a message's lifecycle. */
  carrierEvent: 'carrierEvent',
} as const;

export const QUERIES = {
  /** A lifecycle's current status and pending DLRs. */
  status: 'status',
} as const;

export const WORKFLOW_IDS = {
  /** A message's lifecycle: one per message, so a repeated start is harmless. */
  lifecycle: (messageId: string) => `sms-${messageId}`,
  /** The DLR of one inbound message. */
  inbound: (inboundId: string) => `inbound-${inboundId}`,
  /** A re-driven dead DLR (a fresh schedule each time). */
  redrive: (messageId: string, seq: number, at: number) => `redrive-${messageId}-${seq}-${at}`,
  systemProbe: (at: number) => `system-probe-${at}`,
} as const;
