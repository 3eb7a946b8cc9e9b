// Reading PDUs that the `smpp` package already decoded: the carrier connector's client sessions
// and the carrier simulator receive deliver_sm / submit_sm as the package's PDU objects, whose
// short_message is a string, raw octets, or { udh, message } depending on data_coding and
// esm_class. One function turns every shape into text with the package's data_coding rules.
import type { PDU } from 'smpp';
import { fromLatin9Bytes } from '../../../core/sms';
import { decodeLenient, DATA_CODINGS } from './data-coding';

/** esm_class message types of a delivery receipt (v3.4 receipt, v5.0 intermediate notification, SME acknowledgement). */
const ESM_RECEIPT_TYPES = new Set([0x04, 0x08, 0x20]);
const ESM_TYPE_BITS = 0x3c;

export function isReceipt(pdu: Pick<PDU, 'esm_class' | 'receipted_message_id'>): boolean {
  return ESM_RECEIPT_TYPES.has((pdu.esm_class ?? 0) & ESM_TYPE_BITS) || Boolean(pdu.receipted_message_id);
}

export interface DeliveredBody {
  readonly text: string;
  /** The UDH with its length byte, when esm_class said there is one. */
  readonly udh: Buffer | undefined;
}

/**
 * The text of a deliver_sm or submit_sm (short_message, else message_payload) by data_coding 0
 * (GSM-7), 3 (Latin-9) or 8 (UCS-2). The smpp library has already decoded 0 and 8; for 3 it
 * decoded Latin-1, whose bytes we take back to read them as Latin-9.
 */
export function deliveredBody(pdu: Pick<PDU, 'short_message' | 'message_payload' | 'data_coding'>): DeliveredBody {
  const dataCoding = (pdu.data_coding ?? 0) & 0xff;
  const read = (field: PDU['short_message']): DeliveredBody | undefined => {
    if (field === undefined) return undefined;
    if (typeof field === 'string') return field === '' ? undefined : { text: field, udh: undefined };
    if (Buffer.isBuffer(field)) return field.length === 0 ? undefined : { text: decodeLenient(field, dataCoding), udh: undefined };
    const ies = field.udh ?? [];
    const udh = ies.length > 0 ? Buffer.concat([Buffer.from([ies.reduce((n, ie) => n + ie.length, 0)]), ...ies]) : undefined;
    const message = field.message;
    if (message.length === 0 && !udh) return undefined;
    if (Buffer.isBuffer(message)) return { text: decodeLenient(message, dataCoding), udh };
    return { text: dataCoding === DATA_CODINGS.LATIN9 ? fromLatin9Bytes(Buffer.from(message, 'latin1')) : message, udh };
  };
  return read(pdu.short_message) ?? read(pdu.message_payload) ?? { text: '', udh: undefined };
}
