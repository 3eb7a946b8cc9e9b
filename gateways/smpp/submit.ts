// From a submit_sm to an SMS create item of the acceptance core (spec 1 §4 SMPP part, §8):
// field rules with their SMPP command statuses, data_coding 0/3/8 decoded into the same text
// model as HTTP, the body from short_message or message_payload, and concatenation (UDH or
// SAR TLVs) recognised so that the parts can be reassembled into one message. Also the
// mapping from the acceptance core's refusals (AppError codes, per-field 422s) to command
// statuses. Pure: no I/O.
import { parseConcatUdh, ESM_UDHI, type ConcatInfo } from '../../core/carrier/udh';
import { ERRORS, isAppError, type FieldErrors } from '../../core/errors';
import { fromGsm7Bytes, fromLatin9Bytes, fromUcs2Bytes } from '../../core/sms/encoding';
import { STATUS, TLV, tlvInt, type SubmitSm } from './wire';

export const DATA_CODINGS = { GSM7: 0, LATIN9: 3, UCS2: 8 } as const;
export type DataCoding = (typeof DATA_CODINGS)[keyof typeof DATA_CODINGS];

const SOURCE_MIN = 3;
const SOURCE_MAX = 11;
const E164 = /^\+?[1-9][0-9]{1,14}$/;
/** esm_class bits a submit_sm may carry: messaging mode (0–3) and the UDH indicator. */
const ESM_ALLOWED = 0x03 | ESM_UDHI;

/** What a submit_sm asks for besides its text. */
export interface SubmitFields {
  readonly from: string;
  readonly to: string;
  readonly dataCoding: DataCoding;
  readonly registeredDelivery: number;
  /** user_message_reference TLV, echoed on receipts. */
  readonly userMessageReference: number | undefined;
}

export type Interpreted =
  | { readonly kind: 'refused'; readonly status: number; readonly reason: string }
  | { readonly kind: 'whole'; readonly fields: SubmitFields; readonly text: string }
  | { readonly kind: 'part'; readonly fields: SubmitFields; readonly concat: ConcatInfo; readonly body: Buffer };

const refuse = (status: number, reason: string): Interpreted => ({ kind: 'refused', status, reason });

export function isDataCoding(value: number): value is DataCoding {
  return value === DATA_CODINGS.GSM7 || value === DATA_CODINGS.LATIN9 || value === DATA_CODINGS.UCS2;
}

/** Text of a body in data_coding 0 (GSM-7 unpacked), 3 (ISO-8859-15) or 8 (UTF-16BE); RangeError when it cannot be. */
export function decodeBody(bytes: Buffer, dataCoding: DataCoding): string {
  switch (dataCoding) {
    case DATA_CODINGS.GSM7:
      return fromGsm7Bytes(bytes);
    case DATA_CODINGS.LATIN9:
      return fromLatin9Bytes(bytes);
    case DATA_CODINGS.UCS2:
      return fromUcs2Bytes(bytes);
  }
}

/**
 * Reads one submit_sm. Refusals are decided in a fixed order (esm_class, addresses,
 * data_coding, schedule, body), so a PDU with several faults always gets the same status.
 */
export function interpretSubmit(pdu: SubmitSm): Interpreted {
  if ((pdu.esmClass & ~ESM_ALLOWED) !== 0) return refuse(STATUS.ESME_RINVESMCLASS, `esm_class 0x${pdu.esmClass.toString(16)}: only 0 (with messaging mode bits 0-3) and 0x40 (UDH) are accepted`);
  if (pdu.sourceAddr.length < SOURCE_MIN || pdu.sourceAddr.length > SOURCE_MAX) return refuse(STATUS.ESME_RINVSRCADR, `source_addr must be ${SOURCE_MIN} to ${SOURCE_MAX} characters`);
  if (!E164.test(pdu.destinationAddr)) return refuse(STATUS.ESME_RINVDSTADR, 'destination_addr must be an E.164 number (digits with the country code, optionally with +)');
  if (!isDataCoding(pdu.dataCoding)) return refuse(STATUS.ESME_RINVDCS, `data_coding ${pdu.dataCoding}: only 0 (GSM-7), 3 (LATIN9) and 8 (UCS-2) are accepted`);
  if (pdu.scheduleDeliveryTime !== '') return refuse(STATUS.ESME_RINVSCHED, 'scheduled delivery is not offered; leave schedule_delivery_time empty');

  const payload = pdu.tlvs.get(TLV.message_payload);
  if (payload && payload.length > 0 && pdu.shortMessage.length > 0) return refuse(STATUS.ESME_RINVMSGLEN, 'short_message and message_payload are both set; use one of them');
  const body = payload && payload.length > 0 ? payload : pdu.shortMessage;

  const fields: SubmitFields = {
    from: pdu.sourceAddr,
    to: pdu.destinationAddr,
    dataCoding: pdu.dataCoding,
    registeredDelivery: pdu.registeredDelivery,
    userMessageReference: tlvInt(pdu.tlvs, TLV.user_message_reference),
  };

  let content = body;
  let concat: ConcatInfo | undefined;
  if ((pdu.esmClass & ESM_UDHI) !== 0) {
    const udhLength = body[0];
    if (udhLength === undefined || udhLength + 1 > body.length) return refuse(STATUS.ESME_RINVMSGLEN, 'esm_class announces a UDH that the message body does not hold');
    concat = parseConcatUdh(body.subarray(0, udhLength + 1));
    content = body.subarray(udhLength + 1);
  } else {
    concat = sarConcat(pdu.tlvs);
  }
  if (concat && concat.total > 1) return { kind: 'part', fields, concat, body: content };

  let text: string;
  try {
    text = decodeBody(content, fields.dataCoding);
  } catch {
    return refuse(STATUS.ESME_RINVMSGLEN, 'a UCS-2 body must have an even number of octets');
  }
  if (text.length === 0) return refuse(STATUS.ESME_RINVMSGLEN, 'the message is empty');
  return { kind: 'whole', fields, text };
}

/** Concatenation by the SAR TLVs (sar_msg_ref_num, sar_total_segments, sar_segment_seqnum). */
function sarConcat(tlvs: ReadonlyMap<number, Buffer>): ConcatInfo | undefined {
  const ref = tlvInt(tlvs, TLV.sar_msg_ref_num);
  const total = tlvInt(tlvs, TLV.sar_total_segments);
  const seq = tlvInt(tlvs, TLV.sar_segment_seqnum);
  if (ref === undefined || total === undefined || seq === undefined) return undefined;
  return total >= 1 && seq >= 1 && seq <= total ? { ref, total, seq } : undefined;
}

export interface AssembledPart {
  readonly seq: number;
  readonly body: Buffer;
  readonly dataCoding: DataCoding;
}

/**
 * The text of a complete concatenated message. Bodies in one data_coding are joined before
 * decoding, so a GSM-7 escape or a UTF-16 surrogate pair split across two parts survives.
 */
export function assembleText(parts: readonly AssembledPart[]): string {
  const ordered = [...parts].sort((a, b) => a.seq - b.seq);
  const first = ordered[0];
  if (!first) return '';
  if (ordered.every((p) => p.dataCoding === first.dataCoding)) return decodeBody(Buffer.concat(ordered.map((p) => p.body)), first.dataCoding);
  return ordered.map((p) => decodeBody(p.body, p.dataCoding)).join('');
}

/** The command status for a 422's per-field messages: `to`, then `from`, then `text`, else a generic failure. */
export function statusForFields(fields: FieldErrors): number {
  if (fields['to']) return STATUS.ESME_RINVDSTADR;
  if (fields['from']) return STATUS.ESME_RINVSRCADR;
  if (fields['text']) return STATUS.ESME_RINVMSGLEN;
  return STATUS.ESME_RSUBMITFAIL;
}

/** The command status for anything the acceptance core threw (the registry's `smpp` column; 422s by field). */
export function statusForError(err: unknown): number {
  if (!isAppError(err)) return STATUS.ESME_RSYSERR;
  if (err.code === 'VALIDATION_FAILED' && err.fields) return statusForFields(err.fields);
  return ERRORS[err.code].smpp;
}

/** One line naming the refused fields, for logs. */
export function describeFields(fields: FieldErrors): string {
  return Object.entries(fields).map(([field, messages]) => `${field} ${messages.join('; ')}`).join(', ');
}
