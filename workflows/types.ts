// Inputs and payloads of the lifecycle workflows: ids and small values only (Temporal carries
// ids, not message bodies; DESIGN §3a).
import type { MessageStatus } from '../core/sms/message';

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
}

/** A status transition of a message (what becomes a DLR). */
export interface Transition {
  readonly messageId: string;
  readonly seq: number;
  readonly status: MessageStatus;
  readonly code: number;
  readonly eventAt: string;
}

/** The DLR webhook payload of spec 1 §2.6. */
export interface DlrPayload {
  readonly id: string;
  readonly clientId?: string;
  readonly status: string;
  readonly code: number;
  readonly eventAt: string;
  readonly message?: string;
}

export interface DlrDelivery {
  readonly tokenId: string;
  readonly messageId: string;
  /** Position of this DLR in the message's sequence (per-message order, dedupe key). */
  readonly seq: number;
  readonly payload: DlrPayload;
}
