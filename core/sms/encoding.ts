// SMS text encoding: decides whether a message goes out as GSM-7 or UCS-2, transliterates to
// GSM-7 when Unicode is not allowed, counts characters and segments the way operators bill
// them, splits the text into segments, and converts text to and from the SMPP wire formats
// (data_coding 0 = GSM-7 unpacked, 3 = ISO-8859-15, 8 = UTF-16BE).

export type Encoding = 'GSM-7' | 'UCS-2';

export interface EncodedText {
  readonly deliveredText: string;
  readonly encoding: Encoding;
  readonly unicode: boolean;
  readonly charsCount: number;
  readonly messagesCount: number;
}

const ESC = 0x1b;

// GSM 03.38 basic table, indexed by septet value; 0x1B is the escape to the extension table.
const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅå' +
  'Δ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ' +
  ' !"#¤%&\'()*+,-./' +
  '0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNO' +
  'PQRSTUVWXYZÄÖÑÜ§' +
  '¿abcdefghijklmno' +
  'pqrstuvwxyzäöñüà';

const GSM7_EXTENSION: ReadonlyMap<string, number> = new Map([
  ['\f', 0x0a],
  ['^', 0x14],
  ['{', 0x28],
  ['}', 0x29],
  ['\\', 0x2f],
  ['[', 0x3c],
  ['~', 0x3d],
  [']', 0x3e],
  ['|', 0x40],
  ['€', 0x65],
]);

const BASIC_CODE: ReadonlyMap<string, number> = new Map(
  [...GSM7_BASIC].map((ch, code): [string, number] => [ch, code]).filter(([, code]) => code !== ESC),
);
const EXTENSION_CHAR: ReadonlyMap<number, string> = new Map([...GSM7_EXTENSION].map(([ch, code]) => [code, ch]));

const TRANSLITERATIONS: ReadonlyMap<string, string> = new Map([
  ['\u201c', '"'], ['\u201d', '"'], ['\u201e', '"'], ['\u201f', '"'], ['\u00ab', '"'], ['\u00bb', '"'],
  ['\u2018', "'"], ['\u2019', "'"], ['\u201a', "'"], ['\u201b', "'"],
  ['\u2010', '-'], ['\u2011', '-'], ['\u2012', '-'], ['\u2013', '-'], ['\u2014', '-'], ['\u2015', '-'],
  ['\u2026', '...'],
  ['\u00a0', ' '], ['\u2007', ' '], ['\u202f', ' '],
  // Letters and signs of Latin-1/Latin-9 (SMPP data_coding 3) that GSM-7 lacks and whose
  // accents cannot simply be stripped; the soft hyphen is invisible, so it is dropped.
  ['\u0152', 'OE'], ['\u0153', 'oe'], ['\u00d0', 'D'], ['\u00f0', 'd'], ['\u00de', 'TH'], ['\u00fe', 'th'],
  ['\u00aa', 'a'], ['\u00ba', 'o'], ['\u00b9', '1'], ['\u00b2', '2'], ['\u00b3', '3'], ['\u00d7', 'x'],
  ['\u00a9', '(c)'], ['\u00ae', '(R)'], ['\u00ad', ''],
]);

// Latin-9 differs from Latin-1 (which Buffer decodes natively) in exactly these eight bytes.
const LATIN9_OVERRIDES: ReadonlyMap<string, string> = new Map([
  ['\u00a4', '€'], ['\u00a6', 'Š'], ['\u00a8', 'š'], ['\u00b4', 'Ž'],
  ['\u00b8', 'ž'], ['\u00bc', 'Œ'], ['\u00bd', 'œ'], ['\u00be', 'Ÿ'],
]);

const GSM7_SINGLE = 160;
const GSM7_MULTI = 153;
const UCS2_SINGLE = 70;
const UCS2_MULTI = 67;

function notGsm7(ch: string): RangeError {
  return new RangeError(`Character U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')} is not in GSM-7`);
}

function septetsOf(ch: string): number {
  if (BASIC_CODE.has(ch)) return 1;
  if (GSM7_EXTENSION.has(ch)) return 2;
  throw notGsm7(ch);
}

function isGsm7Char(ch: string): boolean {
  return BASIC_CODE.has(ch) || GSM7_EXTENSION.has(ch);
}

export function isGsm7(text: string): boolean {
  for (const ch of text) if (!isGsm7Char(ch)) return false;
  return true;
}

export function gsm7Septets(text: string): number {
  let septets = 0;
  for (const ch of text) septets += septetsOf(ch);
  return septets;
}

/**
 * The documented transliteration of one (NFC) character to GSM-7: itself, an entry of the
 * table above, or the character without its accents when that is GSM-7 ("ú" → "u"); undefined
 * when there is none (emoji, control characters, most scripts).
 */
function transliterateChar(ch: string): string | undefined {
  if (isGsm7Char(ch)) return ch;
  const mapped = TRANSLITERATIONS.get(ch);
  if (mapped !== undefined) return mapped;
  const stripped = ch.normalize('NFD').replace(/\p{M}/gu, '');
  return stripped.length > 0 && stripped !== ch && isGsm7(stripped) ? stripped : undefined;
}

/** Texts of the GSM-7 basic table only (the usual case): one septet per UTF-16 unit, segments by length alone. */
const BASIC_ONLY = new RegExp(`^[${[...BASIC_CODE.keys()].join('').replace(/[\\\]\[^-]/g, '\\$&')}]*$`);

/**
 * The distinct characters of `text` that cannot go out as GSM-7, not even transliterated. With
 * allowUnicode false such a text is refused (422 naming them, DESIGN §4), never sent with `?`.
 */
export function untransliterable(text: string): string[] {
  if (BASIC_ONLY.test(text)) return [];
  const found = new Set<string>();
  // NFC first so that an already-decomposed "e" + U+0301 keeps the GSM-7 "é".
  for (const ch of text.normalize('NFC')) if (transliterateChar(ch) === undefined) found.add(ch);
  return [...found];
}

/** `U+1F600 "😀"`; control and invisible characters by code point only. */
export function describeChar(ch: string): string {
  const code = `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(ch) ? `${code} "${ch}"` : code;
}

/**
 * Text → GSM-7 by the documented transliterations. Acceptance refuses texts with characters
 * that have none (see untransliterable); for other callers (receipt excerpts, the simulator)
 * such a character still becomes '?'.
 */
export function transliterateToGsm7(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) out += transliterateChar(ch) ?? '?';
  return out;
}

// Units are never split: a GSM-7 extension char (ESC + char) or a UTF-16 surrogate pair that
// does not fit in the rest of a segment starts the next one.
function split(text: string, weight: (unit: string) => number, single: number, multi: number): string[] {
  const units = [...text];
  const weights = units.map(weight);
  if (weights.reduce((sum, w) => sum + w, 0) <= single) return [text];
  const segments: string[] = [];
  let current = '';
  let used = 0;
  units.forEach((unit, i) => {
    const w = weights[i] ?? 0;
    if (used + w > multi) {
      segments.push(current);
      current = '';
      used = 0;
    }
    current += unit;
    used += w;
  });
  segments.push(current);
  return segments;
}

export function splitSegments(text: string, encoding: Encoding): string[] {
  return encoding === 'GSM-7'
    ? split(text, septetsOf, GSM7_SINGLE, GSM7_MULTI)
    : split(text, (unit) => unit.length, UCS2_SINGLE, UCS2_MULTI);
}

export function encodeText(text: string, allowUnicode: boolean): EncodedText {
  if (BASIC_ONLY.test(text)) {
    const n = text.length;
    return { deliveredText: text, encoding: 'GSM-7', unicode: false, charsCount: n, messagesCount: n <= GSM7_SINGLE ? 1 : Math.ceil(n / GSM7_MULTI) };
  }
  const gsm7 = isGsm7(text);
  const encoding: Encoding = gsm7 || !allowUnicode ? 'GSM-7' : 'UCS-2';
  const deliveredText = gsm7 || allowUnicode ? text : transliterateToGsm7(text);
  return {
    deliveredText,
    encoding,
    unicode: encoding === 'UCS-2',
    charsCount: encoding === 'GSM-7' ? gsm7Septets(deliveredText) : deliveredText.length,
    messagesCount: splitSegments(deliveredText, encoding).length,
  };
}

export function toGsm7Bytes(text: string): Buffer {
  const bytes: number[] = [];
  for (const ch of text) {
    const basic = BASIC_CODE.get(ch);
    if (basic !== undefined) {
      bytes.push(basic);
      continue;
    }
    const extension = GSM7_EXTENSION.get(ch);
    if (extension === undefined) throw notGsm7(ch);
    bytes.push(ESC, extension);
  }
  return Buffer.from(bytes);
}

// Follows GSM 03.38 for receivers: ESC + unknown code shows the basic-table character, ESC ESC
// shows a space; a byte above 0x7F (not a septet) becomes '?'.
export function fromGsm7Bytes(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] ?? 0;
    if (byte !== ESC) {
      out += GSM7_BASIC[byte] ?? '?';
      continue;
    }
    const next = bytes[++i];
    if (next === undefined) break;
    out += EXTENSION_CHAR.get(next) ?? (next === ESC ? ' ' : (GSM7_BASIC[next] ?? '?'));
  }
  return out;
}

export function fromLatin9Bytes(bytes: Buffer): string {
  let out = '';
  for (const ch of bytes.toString('latin1')) out += LATIN9_OVERRIDES.get(ch) ?? ch;
  return out;
}

export function toUcs2Bytes(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

export function fromUcs2Bytes(bytes: Buffer): string {
  if (bytes.length % 2 !== 0) throw new RangeError(`UCS-2 payload has an odd length (${bytes.length} bytes)`);
  return Buffer.from(bytes).swap16().toString('utf16le');
}
