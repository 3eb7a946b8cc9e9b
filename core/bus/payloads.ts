// The payloads carried on the bus (JetStream subjects of ./names.ts and the KV values other
// roles read), each with its JSON Schema. Consumers decode with ./decode.ts, never trust a cast.
// The schemas check what consumers rely on (required fields and their types) and leave
// unknown fields alone, so a newer publisher can add fields without stopping older consumers.
import { RECEIPT_STATES, type CarrierEvent, type CarrierEvents, type CarrierInbound, type CarrierSubmit } from './carrier';
import { INGEST_MESSAGE_SCHEMA, type IngestMessage } from './ingest';
import { DLR_STATUSES, type Balance, type DeadDlr, type DlrAttempt, type Lookup, type SmsMessage, type Transition } from './records';

/** `sms.accepted`: the messages of one accepted request. */
export interface AcceptedPayload {
  readonly messages: readonly SmsMessage[];
}

/** A transition as recorded on `sms.status.<tokenId>`: the transition and whose message it is. */
export interface TransitionRecord extends Transition {
  readonly orgId: string;
  readonly projectId: string;
  readonly tokenId: string;
  readonly clientId: string | null;
}

/** `sms.status.<tokenId>`: the message's state after the transitions, and the transitions. */
export interface StatusPayload {
  readonly messages: readonly SmsMessage[];
  readonly transitions?: readonly TransitionRecord[];
}

/** `sms.dlr.attempt`. */
export interface DlrAttemptPayload {
  readonly attempts: readonly DlrAttempt[];
}

/** `lookup.created`. */
export interface LookupsPayload {
  readonly lookups: readonly Lookup[];
}

/** An inbound (mobile-originated) message for a number of the token. */
export interface InboundRecord {
  readonly id: string;
  readonly tokenId: string;
  /** The handset. */
  readonly from: string;
  /** Our number or sender id. */
  readonly to: string;
  readonly text: string;
  readonly status: 'inbound' | 'stop';
  readonly at: string;
  /**
   * Whose message it is, for its row in the history (core/sms/inbound.ts): the token's
   * organization, project ('' for none) and the organization's currency. Absent from records
   * published before inbound messages were stored; those are not stored.
   */
  readonly orgId?: string;
  readonly projectId?: string;
  readonly currency?: string;
}

/** `sms.inbound.<tokenId>`. */
export interface InboundPayload {
  readonly inbound: readonly InboundRecord[];
}

/** `simulator.mo`: asks the carrier simulator to send a mobile-originated message. */
export interface MoRequest {
  readonly from: string;
  readonly to: string;
  readonly text: string;
}

/** The simulator's answer to a MoRequest. */
export type MoReply = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** KV `carrier_ids`, `<route>.<carrier message id>`: the message and segment a carrier id belongs to. */
export interface CarrierIdEntry {
  readonly messageId: string;
  readonly segment: number;
  readonly segments: number;
}

/** Every payload by the name decode() knows it under. */
export interface BusPayloads {
  readonly accepted: AcceptedPayload;
  readonly status: StatusPayload;
  readonly dlrAttempt: DlrAttemptPayload;
  readonly lookups: LookupsPayload;
  readonly inbound: InboundPayload;
  readonly carrierSubmit: CarrierSubmit;
  /** A bare event (earlier releases); the connector now writes `carrierEvents`. */
  readonly carrierEvent: CarrierEvent;
  readonly carrierEvents: CarrierEvents;
  readonly carrierInbound: CarrierInbound;
  readonly moRequest: MoRequest;
  readonly moReply: MoReply;
  /** KV `carrier_ids`. */
  readonly carrierId: CarrierIdEntry;
  /** KV `messages`, key KV_KEYS.messageState. */
  readonly messageState: SmsMessage;
  /** KV `messages`, key KV_KEYS.lookupState. */
  readonly lookupState: Lookup;
  /** KV `dead_dlrs`. */
  readonly deadDlr: DeadDlr;
  /** KV `balances`, one key per organization (read by every role that charges or refunds). */
  readonly balance: Balance;
  /** Stream INGEST: one accepted ingestion request or deletion (core/bus/ingest.ts). */
  readonly ingest: IngestMessage;
}

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const bool = { type: 'boolean' } as const;
const strOrNull = { type: ['string', 'null'] } as const;
const intOrNull = { type: ['integer', 'null'] } as const;

function object(properties: Record<string, object>, optional: readonly string[] = []): object {
  return { type: 'object', required: Object.keys(properties).filter((k) => !optional.includes(k)), properties };
}

const status = { enum: ['scheduled', 'queued', ...DLR_STATUSES] } as const;

const smsMessage = object({
  id: str, orgId: str, projectId: str, tokenId: str, source: { enum: ['http', 'legacy', 'smpp', 'carrier'] }, clientId: strOrNull,
  status, statusCode: intOrNull, from: str, country: str, to: str, normalizedTo: str, charsCount: int, text: str,
  deliveredText: str, messagesCount: int, encoding: { enum: ['GSM-7', 'UCS-2'] }, unicode: bool, allowUnicode: bool,
  charged: bool, pricePerSmsMicros: int, priceUserMicros: int, currency: str, createdAt: str, chargedAt: strOrNull,
  scheduledAt: strOrNull, sentAt: strOrNull, deliveredAt: strOrNull, updatedAt: str,
  receiptRequest: object({ registeredDelivery: int, userMessageReference: int }, ['userMessageReference']),
  validityPeriod: int,
}, ['receiptRequest', 'validityPeriod']);

const transitionRecord = object({ messageId: str, seq: int, status, code: int, eventAt: str, orgId: str, projectId: str, tokenId: str, clientId: strOrNull });

const dlrAttempt = object({
  messageId: str, orgId: str, tokenId: str, seq: int, status: str, attempt: int, outcome: { enum: ['delivered', 'failed', 'skipped'] },
  responseStatus: intOrNull, latencyMs: num, error: strOrNull, url: strOrNull, at: str,
});

const lookup = object({
  id: str, orgId: str, projectId: str, tokenId: str, source: { enum: ['http', 'legacy'] }, country: str, to: str, normalizedTo: str,
  charged: bool, priceMicros: int, currency: str, createdAt: str, deliveredAt: strOrNull, updatedAt: str,
});

const inboundRecord = object({ id: str, tokenId: str, from: str, to: str, text: str, status: { enum: ['inbound', 'stop'] }, at: str, orgId: str, projectId: str, currency: str }, ['orgId', 'projectId', 'currency']);

const segmentOf = { messageId: str, segment: int, segments: int, carrier: str, at: str } as const;

const dlrPayload = object({ id: str, clientId: str, status: str, code: int, eventAt: str, message: str, from: str, to: str }, ['clientId', 'message', 'from', 'to']);

const carrierEvent = {
  oneOf: [
    object({ kind: { const: 'submitted' }, ...segmentOf, carrierMessageId: str }),
    object({ kind: { const: 'submit_failed' }, ...segmentOf, commandStatus: intOrNull, reason: str }),
    object({ kind: { const: 'receipt' }, ...segmentOf, carrierMessageId: str, state: { enum: RECEIPT_STATES }, err: int }),
  ],
};

/** JSON Schema of each payload. */
export const BUS_SCHEMAS: Readonly<Record<keyof BusPayloads, object>> = {
  accepted: object({ messages: { type: 'array', items: smsMessage } }),
  status: object({ messages: { type: 'array', items: smsMessage }, transitions: { type: 'array', items: transitionRecord } }, ['transitions']),
  dlrAttempt: object({ attempts: { type: 'array', items: dlrAttempt } }),
  lookups: object({ lookups: { type: 'array', items: lookup } }),
  inbound: object({ inbound: { type: 'array', items: inboundRecord } }),
  carrierSubmit: object({ messageId: str, orgId: str, from: str, to: str, country: str, text: str, encoding: { enum: ['GSM-7', 'UCS-2'] }, segments: int, submittedAt: str }),
  carrierEvent,
  carrierEvents: object({ events: { type: 'array', minItems: 1, items: carrierEvent } }),
  carrierInbound: object({ carrier: str, from: str, to: str, text: str, at: str, inboundId: str }),
  moRequest: object({ from: str, to: str, text: str }),
  moReply: { oneOf: [object({ ok: { const: true } }), object({ ok: { const: false }, reason: str })] },
  carrierId: object({ messageId: str, segment: int, segments: int }),
  messageState: smsMessage,
  lookupState: lookup,
  balance: object({
    currency: str, availableMicros: int,
    holds: { type: 'object', additionalProperties: object({ micros: int, at: int, ids: { type: 'array', items: str } }, ['ids']) },
    refunds: { type: 'object', additionalProperties: object({ micros: int, at: int }) },
  }, ['holds', 'refunds']),
  ingest: INGEST_MESSAGE_SCHEMA,
  deadDlr: object({ tokenId: str, messageId: str, seq: int, payload: dlrPayload, reason: str, failedAt: str }),
};
