// The SMS message as the domain knows it (kept in NATS KV while recent and in ClickHouse for
// history), the status vocabulary (spec 1 §2.6 plus `queued` and `scheduled`, DESIGN §4), and its wire
// shape (spec 1 §2.2).
import { fromMicros } from '../money';

export const DLR_STATUSES = ['sent', 'accepted', 'buffered', 'delivered', 'error', 'failed', 'expired', 'canceled', 'rejected', 'unknown', 'stop', 'inbound'] as const;
export type DlrStatus = (typeof DLR_STATUSES)[number];
/** `scheduled`: accepted with a scheduledAt, waiting on its timer (never a DLR); `queued`: on its way to a carrier. */
export type MessageStatus = 'scheduled' | 'queued' | DlrStatus;

export const FINAL_STATUSES: readonly MessageStatus[] = ['delivered', 'failed', 'expired', 'canceled', 'rejected', 'error', 'unknown'];

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

/** The SMS response object of spec 1 §2.2. */
export interface SmsEntity {
  id: string;
  clientId: string | null;
  status: string;
  statusCode: number | null;
  from: string;
  country: string;
  to: string;
  normalizedTo: string;
  charsCount: number;
  text: string;
  deliveredText: string;
  messagesCount: number;
  encoding: string;
  unicode: boolean;
  allowUnicode: boolean;
  charged: boolean;
  pricePerSms: number;
  priceUser: number;
  createdAt: string;
  chargedAt: string | null;
  scheduledAt: string | null;
  sentAt: string | null;
  deliveredAt: string | null;
  /** The message's own validity period (seconds); null when the platform default applies. */
  validityPeriod: number | null;
  direction: MessageDirection;
  /** Inbound messages only: the text received, as in their DLR's `message`. */
  message?: string;
}

export function toSmsEntity(m: SmsMessage): SmsEntity {
  return {
    id: m.id,
    clientId: m.clientId,
    status: m.status,
    statusCode: m.statusCode,
    from: m.from,
    country: m.country,
    to: m.to,
    normalizedTo: m.normalizedTo,
    charsCount: m.charsCount,
    text: m.text,
    deliveredText: m.deliveredText,
    messagesCount: m.messagesCount,
    encoding: m.encoding,
    unicode: m.unicode,
    allowUnicode: m.allowUnicode,
    charged: m.charged,
    pricePerSms: fromMicros(m.pricePerSmsMicros),
    priceUser: fromMicros(m.priceUserMicros),
    createdAt: m.createdAt,
    chargedAt: m.chargedAt,
    scheduledAt: m.scheduledAt,
    sentAt: m.sentAt,
    deliveredAt: m.deliveredAt,
    validityPeriod: m.validityPeriod ?? null,
    direction: m.direction ?? 'outbound',
    ...(m.direction === 'inbound' ? { message: m.text } : {}),
  };
}
