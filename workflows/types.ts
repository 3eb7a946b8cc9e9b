// Inputs and payloads of the lifecycle workflows: ids and small values only (Temporal carries
// ids, not message bodies; DESIGN §3a).
export interface LifecycleInput {
  readonly messageId: string;
  readonly orgId: string;
  readonly tokenId: string;
  readonly clientId: string | null;
  readonly segments: number;
  readonly chargedMicros: number;
  /** Validity period: no final report by then → expired (code 1). */
  readonly validityMs: number;
  /** DLR webhooks are sent for api_sms messages; legacy messages are polled (spec 1 §1). */
  readonly webhooks: boolean;
  /**
   * Set for a scheduled message (DESIGN §4 Scheduling, workflow smsScheduled): ISO 8601 UTC; the
   * lifecycle waits on a durable timer until then, cancelable, and its validity counts from then.
   */
  readonly scheduledAt?: string;
}

export type { DlrDelivery, DlrPayload, Transition } from '../core/sms/dlr';
