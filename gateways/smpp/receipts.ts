// What the gateway sends back to the client: delivery receipts (deliver_sm, esm_class 0x04,
// the standard receipt text and the receipted_message_id / message_state TLVs), inbound
// messages (deliver_sm, esm_class 0), and the message_state answered to query_sm. Our
// statuses (spec 1 §2.6) map back to SMPP states as docs/smpp.md tabulates. Pure.
import { formatReceipt, MESSAGE_STATE, type ReceiptState } from '../../core/carrier';
import type { InboundRecord } from '../../core/bus/payloads';
import { FINAL_STATUSES, isGsm7, toGsm7Bytes, toUcs2Bytes, transliterateToGsm7, type MessageStatus, type SmsMessage, type Transition } from '../../core/sms';
import type { PduOptions } from 'smpp';

export const ESM_DELIVERY_RECEIPT = 0x04;
const TON_INTERNATIONAL = 1;
const NPI_ISDN = 1;
const TON_ALPHANUMERIC = 5;
const SHORT_MESSAGE_MAX = 254;
/** TLVs exist from SMPP v3.4 on; a v3.3 session gets the mandatory fields only. */
const FIRST_VERSION_WITH_TLVS = 0x34;

/** Our status → the SMPP state of its receipt (and of query_sm). */
export const STATE_OF_STATUS: Readonly<Record<Exclude<MessageStatus, 'stop' | 'inbound'>, ReceiptState>> = {
  // SMPP 3.4 has no SCHEDULED state (5.0's is 0, outside the receipt vocabulary): query_sm says ENROUTE.
  scheduled: 'ENROUTE',
  queued: 'ENROUTE',
  sent: 'ENROUTE',
  buffered: 'ENROUTE',
  accepted: 'ACCEPTD',
  delivered: 'DELIVRD',
  expired: 'EXPIRED',
  canceled: 'DELETED',
  failed: 'UNDELIV',
  error: 'UNDELIV',
  rejected: 'REJECTD',
  unknown: 'UNKNOWN',
};

export function stateOfStatus(status: MessageStatus): ReceiptState | undefined {
  return status === 'stop' || status === 'inbound' ? undefined : STATE_OF_STATUS[status];
}

const INTERMEDIATE: ReadonlySet<MessageStatus> = new Set(['sent', 'accepted', 'buffered']);
const FAILURES: ReadonlySet<MessageStatus> = new Set(['failed', 'error', 'expired', 'rejected', 'unknown', 'canceled']);

/** registered_delivery bits (v5.0 §4.7.21): 0–1 the SMSC receipt, 4 intermediate notifications. */
const RECEIPT_BITS = 0x03;
const INTERMEDIATE_BIT = 0x10;

/** True when registered_delivery asks for any receipt at all. */
export function wantsReceipts(registeredDelivery: number): boolean {
  return (registeredDelivery & (RECEIPT_BITS | INTERMEDIATE_BIT)) !== 0;
}

/**
 * Whether a transition to `status` becomes a receipt under `registeredDelivery`: 1 = every
 * transition (as the webhook gets them), 2 = final failures only, 3 = delivered only (v5.0);
 * bit 0x10 adds the intermediate ones (sent, accepted, buffered) to 2 and 3.
 */
export function receiptWanted(registeredDelivery: number, status: MessageStatus): boolean {
  const receipts = registeredDelivery & RECEIPT_BITS;
  if (INTERMEDIATE.has(status)) return receipts === 1 || (registeredDelivery & INTERMEDIATE_BIT) !== 0;
  if (status === 'delivered') return receipts === 1 || receipts === 3;
  if (FAILURES.has(status)) return receipts === 1 || receipts === 2;
  return false;
}

export interface Address {
  readonly ton: number;
  readonly npi: number;
  readonly addr: string;
}

/** Digits (with or without '+') as an international number, anything else as alphanumeric. */
export function addressOf(value: string): Address {
  return /^\+?\d+$/.test(value) ? { ton: TON_INTERNATIONAL, npi: NPI_ISDN, addr: value.replace(/^\+/, '') } : { ton: TON_ALPHANUMERIC, npi: 0, addr: value };
}

export interface ReceiptInput {
  readonly message: Pick<SmsMessage, 'id' | 'from' | 'to' | 'normalizedTo' | 'text' | 'createdAt'>;
  readonly transition: Pick<Transition, 'status' | 'code' | 'eventAt'>;
  readonly userMessageReference?: number | undefined;
}

/** The receipt text: `id:… sub:001 dlvrd:… submit date:… done date:… stat:… err:… text:…`. */
export function receiptText(input: ReceiptInput): string {
  const state = stateOfStatus(input.transition.status) ?? 'UNKNOWN';
  return formatReceipt({
    id: input.message.id,
    submitted: new Date(input.message.createdAt),
    done: new Date(input.transition.eventAt),
    state,
    err: Math.max(0, Math.min(999, input.transition.code)),
    text: transliterateToGsm7([...input.message.text].slice(0, 20).join('')),
  });
}

/** deliver_sm fields of a receipt for a session of `version` (its bind's interface_version). */
export function receiptPdu(input: ReceiptInput, version: number): PduOptions {
  const state = stateOfStatus(input.transition.status) ?? 'UNKNOWN';
  const handset = addressOf(input.message.normalizedTo || input.message.to);
  const sender = addressOf(input.message.from);
  const options: PduOptions = {
    source_addr_ton: handset.ton,
    source_addr_npi: handset.npi,
    source_addr: handset.addr,
    dest_addr_ton: sender.ton,
    dest_addr_npi: sender.npi,
    destination_addr: sender.addr,
    esm_class: ESM_DELIVERY_RECEIPT,
    data_coding: 0,
    short_message: toGsm7Bytes(receiptText(input)),
  };
  if (version < FIRST_VERSION_WITH_TLVS) return options;
  return {
    ...options,
    receipted_message_id: input.message.id,
    message_state: MESSAGE_STATE[state],
    ...(input.userMessageReference === undefined ? {} : { user_message_reference: input.userMessageReference }),
  };
}

/** deliver_sm fields of an inbound message: GSM-7 when the text allows, else UCS-2; message_payload past 254 octets. */
export function inboundPdu(inbound: Pick<InboundRecord, 'from' | 'to' | 'text'>, version: number): PduOptions {
  const gsm = isGsm7(inbound.text);
  const body = gsm ? toGsm7Bytes(inbound.text) : toUcs2Bytes(inbound.text);
  const from = addressOf(inbound.from);
  const to = addressOf(inbound.to);
  const long = body.length > SHORT_MESSAGE_MAX && version >= FIRST_VERSION_WITH_TLVS;
  return {
    source_addr_ton: from.ton,
    source_addr_npi: from.npi,
    source_addr: from.addr,
    dest_addr_ton: to.ton,
    dest_addr_npi: to.npi,
    destination_addr: to.addr,
    esm_class: 0,
    data_coding: gsm ? 0 : 8,
    short_message: long ? Buffer.alloc(0) : body.subarray(0, SHORT_MESSAGE_MAX),
    ...(long ? { message_payload: body } : {}),
  };
}

export interface QueryAnswer {
  readonly messageState: number;
  /** Set once the message is final (query_sm_resp final_date). */
  readonly finalDate: Date | undefined;
  /** Our status code (spec 1 §2.6 codes), 0 when none. */
  readonly errorCode: number;
}

/** The query_sm answer for a message's current state. */
export function queryAnswer(message: Pick<SmsMessage, 'status' | 'statusCode' | 'updatedAt' | 'deliveredAt'>): QueryAnswer {
  const state = stateOfStatus(message.status) ?? 'UNKNOWN';
  const final = FINAL_STATUSES.includes(message.status);
  return {
    messageState: MESSAGE_STATE[state],
    finalDate: final ? new Date(message.deliveredAt ?? message.updatedAt) : undefined,
    errorCode: Math.max(0, Math.min(255, message.statusCode ?? 0)),
  };
}
