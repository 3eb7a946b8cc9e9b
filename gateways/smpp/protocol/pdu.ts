// Strict readers of PDU bodies (SMPP v3.4 §4, v5.0 §4): bind, submit_sm / deliver_sm (one
// layout), query_sm and the TLVs. The `smpp` package encodes what we send; what a peer sends is
// read here, because the package's reader gives up on a session at the first PDU it cannot
// parse (it emits 'error' and never reads again). A body that does not parse is a
// CorruptPduError, which the caller answers with generic_nack while the session goes on.
import { HEADER_LENGTH } from './header';

/** TLV tags we read (v5.0 §4.8.4). */
export const TLV = {
  receipted_message_id: 0x001e,
  user_message_reference: 0x0204,
  sar_msg_ref_num: 0x020c,
  sar_total_segments: 0x020e,
  sar_segment_seqnum: 0x020f,
  message_payload: 0x0424,
  message_state: 0x0427,
} as const;

export class CorruptPduError extends Error {
  override readonly name = 'CorruptPduError';
}

/** Reads mandatory fields and TLVs of one PDU body; any overrun is a CorruptPduError. */
export class BodyReader {
  private offset = HEADER_LENGTH;

  constructor(private readonly pdu: Buffer) {}

  get atEnd(): boolean {
    return this.offset >= this.pdu.length;
  }

  cstring(field: string): string {
    const end = this.pdu.indexOf(0, this.offset);
    if (end < 0) throw new CorruptPduError(`${field}: C-octet string without its terminating NUL`);
    const value = this.pdu.toString('latin1', this.offset, end);
    this.offset = end + 1;
    return value;
  }

  int8(field: string): number {
    if (this.offset + 1 > this.pdu.length) throw new CorruptPduError(`${field}: the PDU ends before this field`);
    return this.pdu.readUInt8(this.offset++);
  }

  octets(field: string, length: number): Buffer {
    if (this.offset + length > this.pdu.length) throw new CorruptPduError(`${field}: ${length} octets announced, ${this.pdu.length - this.offset} left`);
    const value = this.pdu.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  /** The TLVs after the mandatory fields, by tag (a repeated tag keeps its last value). */
  tlvs(): Map<number, Buffer> {
    const found = new Map<number, Buffer>();
    while (!this.atEnd) {
      if (this.offset + 4 > this.pdu.length) throw new CorruptPduError('a TLV header is cut short');
      const tag = this.pdu.readUInt16BE(this.offset);
      const length = this.pdu.readUInt16BE(this.offset + 2);
      this.offset += 4;
      found.set(tag, this.octets(`TLV 0x${tag.toString(16).padStart(4, '0')}`, length));
    }
    return found;
  }
}

export interface BindRequest {
  readonly systemId: string;
  readonly password: string;
  readonly systemType: string;
  /** 0x34 when the field is absent; 0x50 for v5.0, 0x33 and lower for v3.3. */
  readonly interfaceVersion: number;
}

export function readBind(pdu: Buffer): BindRequest {
  const r = new BodyReader(pdu);
  const systemId = r.cstring('system_id');
  const password = r.cstring('password');
  // Some clients stop after the password; the rest has harmless defaults.
  const systemType = r.atEnd ? '' : r.cstring('system_type');
  const interfaceVersion = r.atEnd ? 0x34 : r.int8('interface_version');
  if (!r.atEnd) r.int8('addr_ton');
  if (!r.atEnd) r.int8('addr_npi');
  if (!r.atEnd) r.cstring('address_range');
  return { systemId, password, systemType, interfaceVersion };
}

/** The mandatory fields and TLVs of a submit_sm; a deliver_sm has the same layout (v5.0 §4.2.1, §4.3.1). */
export interface SubmitSm {
  readonly serviceType: string;
  readonly sourceAddrTon: number;
  readonly sourceAddrNpi: number;
  readonly sourceAddr: string;
  readonly destAddrTon: number;
  readonly destAddrNpi: number;
  readonly destinationAddr: string;
  readonly esmClass: number;
  readonly protocolId: number;
  readonly priorityFlag: number;
  readonly scheduleDeliveryTime: string;
  readonly validityPeriod: string;
  readonly registeredDelivery: number;
  readonly replaceIfPresent: number;
  readonly dataCoding: number;
  readonly smDefaultMsgId: number;
  /** The raw short_message octets (UDH included when esm_class says so). */
  readonly shortMessage: Buffer;
  readonly tlvs: ReadonlyMap<number, Buffer>;
}

export function readSubmitSm(pdu: Buffer): SubmitSm {
  const r = new BodyReader(pdu);
  const serviceType = r.cstring('service_type');
  const sourceAddrTon = r.int8('source_addr_ton');
  const sourceAddrNpi = r.int8('source_addr_npi');
  const sourceAddr = r.cstring('source_addr');
  const destAddrTon = r.int8('dest_addr_ton');
  const destAddrNpi = r.int8('dest_addr_npi');
  const destinationAddr = r.cstring('destination_addr');
  const esmClass = r.int8('esm_class');
  const protocolId = r.int8('protocol_id');
  const priorityFlag = r.int8('priority_flag');
  const scheduleDeliveryTime = r.cstring('schedule_delivery_time');
  const validityPeriod = r.cstring('validity_period');
  const registeredDelivery = r.int8('registered_delivery');
  const replaceIfPresent = r.int8('replace_if_present_flag');
  const dataCoding = r.int8('data_coding');
  const smDefaultMsgId = r.int8('sm_default_msg_id');
  const smLength = r.int8('sm_length');
  const shortMessage = r.octets('short_message', smLength);
  const tlvs = r.tlvs();
  return {
    serviceType, sourceAddrTon, sourceAddrNpi, sourceAddr, destAddrTon, destAddrNpi, destinationAddr, esmClass, protocolId, priorityFlag,
    scheduleDeliveryTime, validityPeriod, registeredDelivery, replaceIfPresent, dataCoding, smDefaultMsgId, shortMessage, tlvs,
  };
}

export interface QuerySm {
  readonly messageId: string;
  readonly sourceAddr: string;
}

export function readQuerySm(pdu: Buffer): QuerySm {
  const r = new BodyReader(pdu);
  const messageId = r.cstring('message_id');
  // source_addr identifies the original sender; some clients leave the fields out.
  if (r.atEnd) return { messageId, sourceAddr: '' };
  r.int8('source_addr_ton');
  r.int8('source_addr_npi');
  return { messageId, sourceAddr: r.cstring('source_addr') };
}

export interface CancelSm {
  readonly messageId: string;
  readonly sourceAddr: string;
  readonly destinationAddr: string;
}

/** cancel_sm (SMPP 3.4 §4.9): service_type, message_id, source and destination addresses. */
export function readCancelSm(pdu: Buffer): CancelSm {
  const r = new BodyReader(pdu);
  r.cstring('service_type');
  const messageId = r.cstring('message_id');
  if (r.atEnd) return { messageId, sourceAddr: '', destinationAddr: '' };
  r.int8('source_addr_ton');
  r.int8('source_addr_npi');
  const sourceAddr = r.cstring('source_addr');
  if (r.atEnd) return { messageId, sourceAddr, destinationAddr: '' };
  r.int8('dest_addr_ton');
  r.int8('dest_addr_npi');
  return { messageId, sourceAddr, destinationAddr: r.cstring('destination_addr') };
}

/** An unsigned TLV value of 1, 2 or 4 octets; undefined when absent or of another size. */
export function tlvInt(tlvs: ReadonlyMap<number, Buffer>, tag: number): number | undefined {
  const value = tlvs.get(tag);
  if (!value) return undefined;
  if (value.length === 1) return value.readUInt8(0);
  if (value.length === 2) return value.readUInt16BE(0);
  if (value.length === 4) return value.readUInt32BE(0);
  return undefined;
}
