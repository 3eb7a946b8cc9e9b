// The 16-octet PDU header (SMPP v3.4 §3.2, v5.0 §3.2) and the command ids: what framing needs
// to cut a byte stream into PDUs, and the header-only PDUs every endpoint answers with.

/** Command ids (v5.0 §4.7.5); responses have bit 31 set. */
export const COMMAND = {
  generic_nack: 0x80000000,
  bind_receiver: 0x00000001,
  bind_transmitter: 0x00000002,
  query_sm: 0x00000003,
  submit_sm: 0x00000004,
  deliver_sm: 0x00000005,
  unbind: 0x00000006,
  replace_sm: 0x00000007,
  cancel_sm: 0x00000008,
  bind_transceiver: 0x00000009,
  outbind: 0x0000000b,
  enquire_link: 0x00000015,
  submit_multi: 0x00000021,
  alert_notification: 0x00000102,
  data_sm: 0x00000103,
  broadcast_sm: 0x00000111,
  query_broadcast_sm: 0x00000112,
  cancel_broadcast_sm: 0x00000113,
} as const;

export const RESPONSE_BIT = 0x80000000;

const COMMAND_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(COMMAND).map(([name, id]) => [id, name]));

/** A command's name (a bounded metrics label), or `unknown`. */
export const commandName = (commandId: number): string => COMMAND_NAMES.get(commandId) ?? 'unknown';

/** generic_nack counts as a response: it answers a request. */
export const isResponse = (commandId: number): boolean => (commandId & RESPONSE_BIT) !== 0;

/** The response command id of a request. */
export const responseTo = (commandId: number): number => (commandId | RESPONSE_BIT) >>> 0;

/** Request commands of SMPP 3.4/5.0 that none of our endpoints offers (answered `<command>_resp` ESME_RINVCMDID). */
export const UNSUPPORTED_REQUESTS: ReadonlySet<number> = new Set([
  COMMAND.deliver_sm, COMMAND.replace_sm, COMMAND.outbind, COMMAND.submit_multi,
  COMMAND.alert_notification, COMMAND.data_sm, COMMAND.broadcast_sm, COMMAND.query_broadcast_sm, COMMAND.cancel_broadcast_sm,
]);

export const HEADER_LENGTH = 16;

export interface Header {
  readonly length: number;
  readonly commandId: number;
  readonly status: number;
  readonly sequence: number;
}

export function readHeader(pdu: Buffer): Header {
  return { length: pdu.readUInt32BE(0), commandId: pdu.readUInt32BE(4), status: pdu.readUInt32BE(8), sequence: pdu.readUInt32BE(12) };
}

/** A header-only PDU (responses with an error status, generic_nack, unbind_resp, ...). */
export function headerOnly(commandId: number, status: number, sequence: number): Buffer {
  const buf = Buffer.alloc(HEADER_LENGTH);
  buf.writeUInt32BE(HEADER_LENGTH, 0);
  buf.writeUInt32BE(commandId >>> 0, 4);
  buf.writeUInt32BE(status >>> 0, 8);
  buf.writeUInt32BE(sequence >>> 0, 12);
  return buf;
}

/** A response whose body is one C-octet string (submit_sm_resp, deliver_sm_resp): the hot path, written without the package's generic encoder. */
export function withMessageId(commandId: number, sequence: number, messageId: string): Buffer {
  const length = HEADER_LENGTH + Buffer.byteLength(messageId, 'latin1') + 1;
  const buf = Buffer.alloc(length);
  buf.writeUInt32BE(length, 0);
  buf.writeUInt32BE(commandId >>> 0, 4);
  buf.writeUInt32BE(0, 8);
  buf.writeUInt32BE(sequence >>> 0, 12);
  buf.write(messageId, HEADER_LENGTH, 'latin1');
  return buf;
}
