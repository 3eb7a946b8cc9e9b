// Concatenated SMS through the User Data Header (3GPP TS 23.040 §9.2.3.24.1): each segment's
// short_message starts with 05 00 03 <ref> <total> <seq> and esm_class carries 0x40. The
// reference byte is the same for every segment of one message; receivers reassemble by it.

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

/**
 * Finds a concatenation element (8- or 16-bit reference) in a UDH that starts with its length
 * byte (UDHL); undefined when there is none or the header is malformed.
 */
export function parseConcatUdh(udh: Buffer): ConcatInfo | undefined {
  const length = udh[0];
  if (length === undefined || length + 1 > udh.length) return undefined;
  let i = 1;
  while (i + 1 < length + 1) {
    const iei = udh[i] ?? -1;
    const ieLength = udh[i + 1] ?? 0;
    const body = udh.subarray(i + 2, i + 2 + ieLength);
    if (body.length !== ieLength) return undefined;
    if (iei === IEI_CONCAT_8BIT && ieLength === 3) return valid({ ref: body[0] ?? 0, total: body[1] ?? 0, seq: body[2] ?? 0 });
    if (iei === IEI_CONCAT_16BIT && ieLength === 4) return valid({ ref: body.readUInt16BE(0), total: body[2] ?? 0, seq: body[3] ?? 0 });
    i += 2 + ieLength;
  }
  return undefined;
}

function valid(info: ConcatInfo): ConcatInfo | undefined {
  return info.total >= 1 && info.seq >= 1 && info.seq <= info.total ? info : undefined;
}
