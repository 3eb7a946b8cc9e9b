// The SMS message as the domain knows it (kept in NATS KV while recent and in ClickHouse for
// history), the status vocabulary (spec 1 §2.6 plus `queued` and `scheduled`, DESIGN §4), and its wire
// shape (spec 1 §2.2).
import { fromMicros } from '../money';

export { DLR_STATUSES } from '../bus/records';
export type { MessageSource, MessageStatus, ReceiptRequest, SmsMessage } from '../bus/records';
import type { MessageDirection, MessageStatus, SmsMessage } from '../bus/records';

export const FINAL_STATUSES: readonly MessageStatus[] = ['delivered', 'failed', 'expired', 'canceled', 'rejected', 'error', 'unknown'];

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
