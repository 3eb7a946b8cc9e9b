// Inbound (mobile-originated) messages as the history keeps them (DESIGN "Two-way"): a message
// of direction `inbound` whose `from` is the handset and `to` our number, with status `inbound`
// or `stop`, never charged. The lifecycle bridge routes them (pipelines/lifecycle-bridge.ts),
// the history writer stores them in sms_messages beside the messages we send, so GET /sms/{id}
// and GET /sms (direction_eq=inbound) answer them.
import { createHash } from 'node:crypto';
import { encodeText } from './encoding';
import type { InboundRecord } from '../bus/payloads';
import type { SmsMessage } from './message';
import { checkPhoneNumber } from './phone';

/** What the history needs of a routed inbound message: core/bus InboundRecord with its owner and currency. */
export type InboundFields = Required<InboundRecord>;

/**
 * The message id of an inbound message: a UUIDv7 whose time is when it arrived and whose other
 * bits come from the carrier's id of it (gateways/carrier/rules.ts inboundId, stable across a
 * deliver_sm sent again). A redelivered MO routed again gets the same id, so its history row, its
 * SMPP deliver_sm and its DLR name one message.
 */
export function inboundMessageId(carrierInboundId: string, at: string): string {
  const ms = Date.parse(at);
  const time = (Number.isFinite(ms) ? Math.max(0, ms) : 0).toString(16).padStart(12, '0').slice(-12);
  const h = createHash('sha256').update(carrierInboundId).digest('hex');
  const variant = ((parseInt(h.charAt(3), 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${h.slice(0, 3)}-${variant}${h.slice(4, 7)}-${h.slice(7, 19)}`;
}

/** The history row of an inbound message: free (charged false, prices 0), status as its DLR, created when it arrived. */
export function inboundMessage(m: InboundFields): SmsMessage {
  const encoded = encodeText(m.text, true);
  const handset = checkPhoneNumber(m.from);
  const ours = checkPhoneNumber(m.to);
  return {
    id: m.id, orgId: m.orgId, projectId: m.projectId, tokenId: m.tokenId, source: 'carrier', clientId: null,
    status: m.status, statusCode: 0, from: m.from, country: handset.ok ? handset.country : '', to: m.to,
    normalizedTo: ours.ok ? ours.normalized : m.to, charsCount: encoded.charsCount, text: m.text, deliveredText: m.text,
    messagesCount: encoded.messagesCount, encoding: encoded.encoding, unicode: encoded.unicode, allowUnicode: encoded.unicode,
    charged: false, pricePerSmsMicros: 0, priceUserMicros: 0, currency: m.currency, createdAt: m.at, chargedAt: null,
    scheduledAt: null, sentAt: null, deliveredAt: null, updatedAt: m.at, direction: 'inbound',
  };
}
