// data_coding (SMPP v5.0 §4.7.7) as our endpoints read it: 0 as GSM-7 (unpacked septets, the
// SMSC default alphabet), 1 as IA5 (ITU-T T.50, i.e. 7-bit ASCII: the default of common client
// libraries for plain ASCII), 3 as ISO-8859-15 (Latin-9: Latin-1 with €), 8 as UCS-2 read as
// UTF-16BE so that surrogate pairs survive. What a customer submits is read strictly; what a
// carrier delivers is read leniently, because an inbound message must never be lost over it.
import { fromGsm7Bytes, fromLatin9Bytes, fromUcs2Bytes } from '../../../core/sms';

export const DATA_CODINGS = { GSM7: 0, IA5: 1, LATIN9: 3, UCS2: 8 } as const;
export type DataCoding = (typeof DATA_CODINGS)[keyof typeof DATA_CODINGS];

export function isDataCoding(value: number): value is DataCoding {
  return value === DATA_CODINGS.GSM7 || value === DATA_CODINGS.IA5 || value === DATA_CODINGS.LATIN9 || value === DATA_CODINGS.UCS2;
}

/** Offset of the first octet above 0x7F (not 7-bit ASCII), or -1 when there is none. */
export function firstNonAscii(bytes: Buffer): number {
  return bytes.findIndex((b) => b > 0x7f);
}

/** Text of a body in data_coding 0, 1, 3 or 8; RangeError when it cannot be (UCS-2 of odd length, IA5 with an octet above 0x7F). */
export function decodeBody(bytes: Buffer, dataCoding: DataCoding): string {
  switch (dataCoding) {
    case DATA_CODINGS.GSM7:
      return fromGsm7Bytes(bytes);
    case DATA_CODINGS.IA5: {
      const at = firstNonAscii(bytes);
      if (at >= 0) throw new RangeError(`IA5 (data_coding 1) is 7-bit: octet 0x${(bytes[at] ?? 0).toString(16)} at offset ${at}`);
      return bytes.toString('latin1');
    }
    case DATA_CODINGS.LATIN9:
      return fromLatin9Bytes(bytes);
    case DATA_CODINGS.UCS2:
      return fromUcs2Bytes(bytes);
  }
}

/** Text of a body in any data_coding: what decodeBody cannot read is taken as Latin-1 octets. */
export function decodeLenient(bytes: Buffer, dataCoding: number): string {
  if (!isDataCoding(dataCoding) || dataCoding === DATA_CODINGS.IA5 || (dataCoding === DATA_CODINGS.UCS2 && bytes.length % 2 !== 0)) return bytes.toString('latin1');
  return decodeBody(bytes, dataCoding);
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
