// Concatenated SMS, both ways SMPP carries it: the User Data Header (3GPP TS 23.040
// §9.2.3.24.1, esm_class 0x40, short_message starting 05 00 03 <ref> <total> <seq> or the 16-bit
// 06 08 04 form) and the SAR TLVs (sar_msg_ref_num, sar_total_segments, sar_segment_seqnum).
// We write UDHs for the segments we hand to carriers, and read both forms from what customers
// and carriers send. A concatenation element with impossible values (part 0, part beyond the
// total, total 0) is told apart from "no concatenation", so the caller can refuse it instead of
// taking the part for a whole message.
import { tlvInt, TLV } from './pdu';

/** esm_class bit that says short_message starts with a UDH. */
export const ESM_UDHI = 0x40;

const IEI_CONCAT_8BIT = 0x00;
const IEI_CONCAT_16BIT = 0x08;

export interface ConcatInfo {
  /** Reference shared by all segments of one message (8 or 16 bits). */
  readonly ref: number;
  readonly total: number;
  /** 1-based position of this segment. */
  readonly seq: number;
}

/** The 6-byte UDH for segment `seq` (1-based) of `total`. */
export function concatUdh(ref: number, total: number, seq: number): Buffer {
  if (total < 1 || total > 255 || seq < 1 || seq > total) throw new RangeError(`segment ${seq} of ${total} cannot be expressed in a concatenation UDH`);
  return Buffer.from([0x05, IEI_CONCAT_8BIT, 0x03, ref & 0xff, total, seq]);
}

/** A reference byte derived from our message id (FNV-1a folded to 8 bits), stable across retries. */
export function concatRef(messageId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < messageId.length; i++) {
    hash ^= messageId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return (hash ^ (hash >>> 8) ^ (hash >>> 16) ^ (hash >>> 24)) & 0xff;
}

/** Prefixes each segment's bytes with its UDH; a single segment is returned unchanged. */
export function withConcatUdh(segments: readonly Buffer[], ref: number): Buffer[] {
  if (segments.length <= 1) return [...segments];
  return segments.map((bytes, i) => Buffer.concat([concatUdh(ref, segments.length, i + 1), bytes]));
}

/** What a body says about concatenation. */
export type Concatenation =
  /** Not a part of a longer message: no concatenation, or one announcing a single part. */
  | { readonly kind: 'whole'; readonly content: Buffer }
  | { readonly kind: 'part'; readonly concat: ConcatInfo; readonly content: Buffer }
  /** A broken UDH, or a concatenation element or SAR set with impossible values. */
  | { readonly kind: 'invalid'; readonly reason: string };

type Element = { readonly kind: 'none' } | { readonly kind: 'found'; readonly info: ConcatInfo } | { readonly kind: 'invalid'; readonly reason: string };

/** Walks the information elements of a UDH that starts with its length byte (UDHL). */
function concatElement(udh: Buffer): Element {
  const length = udh[0];
  if (length === undefined || length + 1 > udh.length) return { kind: 'invalid', reason: 'the UDH is longer than the message body' };
  let i = 1;
  while (i + 1 < length + 1) {
    const iei = udh[i] ?? -1;
    const ieLength = udh[i + 1] ?? 0;
    const body = udh.subarray(i + 2, Math.min(i + 2 + ieLength, length + 1));
    if (body.length !== ieLength) return { kind: 'invalid', reason: `UDH element 0x${iei.toString(16)} runs past the header` };
    if (iei === IEI_CONCAT_8BIT && ieLength === 3) return checked({ ref: body[0] ?? 0, total: body[1] ?? 0, seq: body[2] ?? 0 });
    if (iei === IEI_CONCAT_16BIT && ieLength === 4) return checked({ ref: body.readUInt16BE(0), total: body[2] ?? 0, seq: body[3] ?? 0 });
    if (iei === IEI_CONCAT_8BIT || iei === IEI_CONCAT_16BIT) return { kind: 'invalid', reason: `concatenation element of ${ieLength} octets` };
    i += 2 + ieLength;
  }
  return { kind: 'none' };
}

function checked(info: ConcatInfo): Element {
  if (info.total >= 1 && info.seq >= 1 && info.seq <= info.total) return { kind: 'found', info };
  return { kind: 'invalid', reason: `concatenation announces part ${info.seq} of ${info.total}` };
}

/**
 * Finds a valid concatenation element (8- or 16-bit reference) in a UDH that starts with its
 * length byte (UDHL); undefined when there is none or the header is malformed.
 */
export function parseConcatUdh(udh: Buffer): ConcatInfo | undefined {
  const element = concatElement(udh);
  return element.kind === 'found' ? element.info : undefined;
}

/**
 * Reads the concatenation of a short_message / message_payload body: from its UDH when
 * esm_class has the UDH indicator (the UDH is removed from the content), else from the SAR
 * TLVs. A set of SAR TLVs is read only when all three are present.
 */
export function concatenationOf(body: Buffer, esmClass: number, tlvs: ReadonlyMap<number, Buffer>): Concatenation {
  let element: Element;
  let content = body;
  if ((esmClass & ESM_UDHI) !== 0) {
    const udhLength = body[0];
    if (udhLength === undefined || udhLength + 1 > body.length) return { kind: 'invalid', reason: 'esm_class announces a UDH that the message body does not hold' };
    element = concatElement(body.subarray(0, udhLength + 1));
    content = body.subarray(udhLength + 1);
  } else {
    element = sarElement(tlvs);
  }
  if (element.kind === 'invalid') return element;
  if (element.kind === 'found' && element.info.total > 1) return { kind: 'part', concat: element.info, content };
  return { kind: 'whole', content };
}

function sarElement(tlvs: ReadonlyMap<number, Buffer>): Element {
  const ref = tlvInt(tlvs, TLV.sar_msg_ref_num);
  const total = tlvInt(tlvs, TLV.sar_total_segments);
  const seq = tlvInt(tlvs, TLV.sar_segment_seqnum);
  if (ref === undefined || total === undefined || seq === undefined) return { kind: 'none' };
  return checked({ ref, total, seq });
}
