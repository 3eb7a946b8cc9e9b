// A message's status transitions and the DLRs made of them: the types the lifecycle workflow,
// its activities, the SMPP gateway and the history stores share (spec 1 §2.6).
import type { MessageStatus } from './message';

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
  /** Inbound and stop DLRs (two-way): the text received. */
  readonly message?: string;
  /** Inbound and stop DLRs: the handset that sent it (E.164), the number to reply to. */
  readonly from?: string;
  /** Inbound and stop DLRs: our number (or sender id) that received it. */
  readonly to?: string;
}

export interface DlrDelivery {
  readonly tokenId: string;
  readonly messageId: string;
  /** Position of this DLR in the message's sequence (per-message order, dedupe key). */
  readonly seq: number;
  readonly payload: DlrPayload;
}

/** One webhook attempt, as recorded for GET /sms/{id}/dlrs. */
export interface DlrAttempt {
  readonly messageId: string;
  readonly orgId: string;
  readonly tokenId: string;
  readonly seq: number;
  readonly status: string;
  readonly attempt: number;
  readonly outcome: 'delivered' | 'failed' | 'skipped';
  readonly responseStatus: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly url: string | null;
  readonly at: string;
}

/** A transition with its webhook attempts, as GET /sms/{id}/dlrs returns it. */
export interface DlrHistoryEntry {
  readonly seq: number;
  readonly status: string;
  readonly code: number;
  readonly eventAt: string;
  readonly attempts: Array<{ attempt: number; outcome: string; responseStatus: number | null; latencyMs: number; error: string | null; at: string }>;
}

/** A DLR whose retry window closed, kept until re-driven. */
export interface DeadDlr extends DlrDelivery {
  readonly reason: string;
  readonly failedAt: string;
}
