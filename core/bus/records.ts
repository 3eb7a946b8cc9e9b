// The records the bus carries (KV values and stream payloads), defined here so that the bus
// contract imports nothing else of core/ (a leaf; eslint.config.mjs): the SMS message and its
// status vocabulary, its transitions and DLRs, a lookup, a balance with its holds, and the
// ingestion's contact patches and event records. The domain modules re-export them
// (core/sms/message.ts, dlr.ts, core/lookup, core/accounts/types.ts, core/ingest/types.ts).
import type { ATTRIBUTE_TYPES } from '../../schemas/ingest';

type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

export const DLR_STATUSES = ['sent', 'accepted', 'buffered', 'delivered', 'error', 'failed', 'expired', 'canceled', 'rejected', 'unknown', 'stop', 'inbound'] as const;
export type DlrStatus = (typeof DLR_STATUSES)[number];
/** `scheduled`: accepted with a scheduledAt, waiting on its timer (never a DLR); `queued`: on its way to a carrier. */
export type MessageStatus = 'scheduled' | 'queued' | DlrStatus;

/** The API a message was sent through; `carrier` for an inbound message (received from a carrier, core/sms/inbound.ts). */
export type MessageSource = 'http' | 'legacy' | 'smpp' | 'carrier';

/** Sent by us (every accepted message), or received from a handset on a two-way number (DESIGN "Two-way"). */
export type MessageDirection = 'outbound' | 'inbound';

/**
 * The receipts an SMPP submit_sm asked for. It travels with the message (KV state, every
 * status record on the bus), so the gateway that sends receipts never waits for a side record.
 */
export interface ReceiptRequest {
  /** registered_delivery of the submit_sm. */
  readonly registeredDelivery: number;
  /** user_message_reference of the submit_sm, echoed on its receipts. */
  readonly userMessageReference?: number;
}

export interface SmsMessage {
  readonly id: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly tokenId: string;
  readonly source: MessageSource;
  readonly clientId: string | null;
  readonly status: MessageStatus;
  readonly statusCode: number | null;
  readonly from: string;
  readonly country: string;
  readonly to: string;
  readonly normalizedTo: string;
  readonly charsCount: number;
  readonly text: string;
  readonly deliveredText: string;
  readonly messagesCount: number;
  readonly encoding: 'GSM-7' | 'UCS-2';
  readonly unicode: boolean;
  readonly allowUnicode: boolean;
  readonly charged: boolean;
  readonly pricePerSmsMicros: number;
  readonly priceUserMicros: number;
  readonly currency: string;
  readonly createdAt: string;
  readonly chargedAt: string | null;
  readonly scheduledAt: string | null;
  readonly sentAt: string | null;
  readonly deliveredAt: string | null;
  readonly updatedAt: string;
  /** Set for SMPP submits that asked for receipts; never part of the wire shape. */
  readonly receiptRequest?: ReceiptRequest;
  /**
   * The message's own validity period in seconds (DESIGN §4 Scheduling); absent: the platform
   * default (MESSAGE_VALIDITY_SECONDS). Optional, so messages accepted before it existed still read.
   */
  readonly validityPeriod?: number;
  /**
   * `inbound` for a message received on a two-way number (core/sms/inbound.ts): `from` is the
   * handset, `to` our number. Absent: outbound, as every message accepted for sending.
   */
  readonly direction?: MessageDirection;
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

/** A DLR whose retry window closed, kept until re-driven. */
export interface DeadDlr extends DlrDelivery {
  readonly reason: string;
  readonly failedAt: string;
}

export interface Balance {
  readonly currency: string;
  readonly availableMicros: number;
  /**
   * Charges taken but not yet settled, by hold id: a request charges and holds in one
   * compare-and-set, and the hold is settled once its messages are on the stream, or refunded
   * by the charge settler when they never got there (a process killed in between; docs/acceptance.md).
   */
  readonly holds?: Readonly<Record<string, ChargeHold>>;
  /**
   * Refunds credited whose done-marker is not written yet, by refund key: a retried refund finds
   * its key here and credits nothing again (core/sms/refund.ts). An entry lives from the credit
   * to the marker, milliseconds; one whose refund stopped in between waits for its retry.
   */
  readonly refunds?: Readonly<Record<string, PendingRefund>>;
}

export interface PendingRefund {
  readonly micros: number;
  /** When it was credited (ms since the epoch). */
  readonly at: number;
}

export interface ChargeHold {
  readonly micros: number;
  /** When the charge was taken (ms since the epoch, the charging process's clock). */
  readonly at: number;
  /** Message ids a retry could find by clientId: their states are canceled if the hold is refunded. */
  readonly ids?: readonly string[];
}

export interface HlrAnswer {
  readonly status: 'delivered' | 'failed';
  readonly statusCode: number;
  readonly subscriberStatus: 'active' | 'absent' | 'unknown';
  readonly imsi: string | null;
  readonly servingMsc: string | null;
  readonly ported: boolean;
  readonly roaming: boolean;
  readonly network: string;
}

export interface Lookup extends HlrAnswer {
  readonly id: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly tokenId: string;
  readonly source: 'http' | 'legacy';
  readonly country: string;
  readonly to: string;
  readonly normalizedTo: string;
  readonly charged: boolean;
  readonly priceMicros: number;
  readonly currency: string;
  readonly createdAt: string;
  readonly deliveredAt: string | null;
  readonly updatedAt: string;
}

/** A validated value with its type; `null` value means "clear this attribute" (spec 2 §2.1 rule 2). */
export interface TypedValue {
  readonly type: AttributeType;
  readonly value: unknown;
}

/** What one contact item changes: attributes to set, and attributes (value null) to clear. */
export interface ContactPatch {
  readonly userId: string;
  readonly attributes: Readonly<Record<string, TypedValue | null>>;
}

export interface EventRecord {
  readonly userId: string;
  readonly eventId: string;
  readonly eventType: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly eventDate: string;
  readonly parameters: Readonly<Record<string, TypedValue>>;
  /** Inside the ±1 h automation window at reception (spec 2 §4 rule 6). */
  readonly triggers: boolean;
}
