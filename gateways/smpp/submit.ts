// From a submit_sm to an SMS create item of the acceptance core (spec 1 §4 SMPP part, §8):
// field rules with their SMPP command statuses, data_coding 0/1/3/8 decoded into the same text
// model as HTTP, the body from short_message or message_payload, and concatenation (UDH or
// SAR TLVs) recognised so that the parts can be reassembled into one message. Also the
// mapping from the acceptance core's refusals (AppError codes, per-field 422s) to command
// statuses. Pure: no I/O.
import { ERRORS, isAppError, type FieldErrors } from '../../core/errors';
import { parseScheduleDeliveryTime, parseValidityPeriod } from './validity-period';
import { concatenationOf, DATA_CODINGS, decodeBody, ESM_UDHI, firstNonAscii, isDataCoding, STATUS, TLV, tlvInt, type ConcatInfo, type DataCoding, type SubmitSm } from './protocol';

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
  /** validity_period as seconds from the submit (DESIGN §4 Scheduling); absent: the platform default. */
  readonly validityPeriod?: number;
  /** schedule_delivery_time as the item's scheduledAt (ISO 8601 UTC); absent: send at once. */
  readonly scheduledAt?: string;
}

export type Interpreted =
  | { readonly kind: 'refused'; readonly status: number; readonly reason: string }
  | { readonly kind: 'whole'; readonly fields: SubmitFields; readonly text: string }
  | { readonly kind: 'part'; readonly fields: SubmitFields; readonly concat: ConcatInfo; readonly body: Buffer };

const refuse = (status: number, reason: string): Interpreted => ({ kind: 'refused', status, reason });

/**
 * Reads one submit_sm. Refusals are decided in a fixed order (esm_class, addresses,
 * data_coding, schedule, validity period, body), so a PDU with several faults always gets the
 * same status. `nowMs` is the time an absolute validity_period is counted from.
 */
export function interpretSubmit(pdu: SubmitSm, nowMs: number = Date.now()): Interpreted {
  if ((pdu.esmClass & ~ESM_ALLOWED) !== 0) return refuse(STATUS.ESME_RINVESMCLASS, `esm_class 0x${pdu.esmClass.toString(16)}: only 0 (with messaging mode bits 0-3) and 0x40 (UDH) are accepted`);
  if (pdu.sourceAddr.length < SOURCE_MIN || pdu.sourceAddr.length > SOURCE_MAX) return refuse(STATUS.ESME_RINVSRCADR, `source_addr must be ${SOURCE_MIN} to ${SOURCE_MAX} characters`);
  if (!E164.test(pdu.destinationAddr)) return refuse(STATUS.ESME_RINVDSTADR, 'destination_addr must be an E.164 number (digits with the country code, optionally with +)');
  if (!isDataCoding(pdu.dataCoding)) return refuse(STATUS.ESME_RINVDCS, `data_coding ${pdu.dataCoding}: only 0 (GSM-7), 1 (IA5/ASCII), 3 (LATIN9) and 8 (UCS-2) are accepted`);
  // Its bounds (now to 35 days ahead) are checked by the acceptance core: a 422 on scheduledAt → ESME_RINVSCHED.
  const schedule = parseScheduleDeliveryTime(pdu.scheduleDeliveryTime, nowMs);
  if (schedule.kind === 'invalid') return refuse(STATUS.ESME_RINVSCHED, schedule.reason);
  const validity = parseValidityPeriod(pdu.validityPeriod, nowMs);
  if (validity.kind === 'invalid') return refuse(STATUS.ESME_RINVEXPIRY, validity.reason);

  const payload = pdu.tlvs.get(TLV.message_payload);
  if (payload && payload.length > 0 && pdu.shortMessage.length > 0) return refuse(STATUS.ESME_RINVMSGLEN, 'short_message and message_payload are both set; use one of them');
  const body = payload && payload.length > 0 ? payload : pdu.shortMessage;

  const fields: SubmitFields = {
    from: pdu.sourceAddr,
    to: pdu.destinationAddr,
    dataCoding: pdu.dataCoding,
    registeredDelivery: pdu.registeredDelivery,
    userMessageReference: tlvInt(pdu.tlvs, TLV.user_message_reference),
    ...(validity.kind === 'seconds' ? { validityPeriod: validity.seconds } : {}),
    ...(schedule.kind === 'at' ? { scheduledAt: schedule.iso } : {}),
  };

  // A concatenation with impossible values is refused, not taken for a whole message (and charged).
  const concatenation = concatenationOf(body, pdu.esmClass, pdu.tlvs);
  if (concatenation.kind === 'invalid') return refuse(STATUS.ESME_RINVMSGLEN, concatenation.reason);
  // IA5 is 7-bit: an octet above 0x7F is not text in the announced coding (checked on the text, never on a UDH).
  const nonAscii = fields.dataCoding === DATA_CODINGS.IA5 ? firstNonAscii(concatenation.content) : -1;
  if (nonAscii >= 0) return refuse(STATUS.ESME_RINVDCS, `data_coding 1 (IA5/ASCII) is 7-bit, but octet ${nonAscii} of the text is 0x${(concatenation.content[nonAscii] ?? 0).toString(16)}`);
  if (concatenation.kind === 'part') return { kind: 'part', fields, concat: concatenation.concat, body: concatenation.content };

  let text: string;
  try {
    text = decodeBody(concatenation.content, fields.dataCoding);
  } catch {
    return refuse(STATUS.ESME_RINVMSGLEN, 'a UCS-2 body must have an even number of octets');
  }
  if (text.length === 0) return refuse(STATUS.ESME_RINVMSGLEN, 'the message is empty');
  return { kind: 'whole', fields, text };
}

/** The command status for a 422's per-field messages: `to`, then `from`, then `text`, then `validityPeriod`, then `scheduledAt`, else a generic failure. */
export function statusForFields(fields: FieldErrors): number {
  if (fields['to']) return STATUS.ESME_RINVDSTADR;
  if (fields['from']) return STATUS.ESME_RINVSRCADR;
  if (fields['text']) return STATUS.ESME_RINVMSGLEN;
  if (fields['validityPeriod']) return STATUS.ESME_RINVEXPIRY;
  if (fields['scheduledAt']) return STATUS.ESME_RINVSCHED;
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
