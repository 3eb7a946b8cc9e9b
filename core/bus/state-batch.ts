// The accepted states of one request's messages (or of the single sends of one event-loop turn,
// stores/state-writes.ts) in one KV record (`messages` bucket, key KV_KEYS.messageBatch): each
// message's JSON (an SmsMessage, `id` its first key) on a line of its own. Created once and never
// changed; a message's own key (`sms.<id>`), once written, always wins over it. One line is found
// without decoding the others.

const NEWLINE = 0x0a;
const LINE = Buffer.from('\n');
const ID_KEY = '{"id":"';
const ID_KEY_BYTES = Buffer.from(ID_KEY);
const QUOTE = 0x22;
/** Ids written into the JSON as they are (no character JSON escapes). */
const PLAIN_ID = /^[0-9a-f-]{36}$/;

function startsWithId(bytes: Buffer, id: string): boolean {
  for (let k = 0; k < id.length; k++) if (bytes[ID_KEY_BYTES.length + k] !== id.charCodeAt(k)) return false;
  return true;
}

/**
 * The record of these messages' JSON (`encoded[i]` is JSON.stringify of the message whose id is
 * `ids[i]`), or null when one of them does not begin with its id.
 */
export function stateBatchRecord(ids: readonly string[], encoded: readonly Buffer[]): Buffer | null {
  const parts: Buffer[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const bytes = encoded[i] as Buffer;
    const id = ids[i] as string;
    // `{"id":"<id>"`, compared in place (an id of plain characters is written as it is).
    if (!PLAIN_ID.test(id) || bytes.length < ID_KEY_BYTES.length + 37 || bytes.compare(ID_KEY_BYTES, 0, ID_KEY_BYTES.length, 0, ID_KEY_BYTES.length) !== 0) return null;
    if (bytes[ID_KEY_BYTES.length + 36] !== QUOTE || !startsWithId(bytes, id)) return null;
    if (i > 0) parts.push(LINE);
    parts.push(bytes);
  }
  return Buffer.concat(parts);
}

/** The JSON of message `id` in a record, or null when the record does not hold it. */
export function findInStateBatch(record: Uint8Array, id: string): Uint8Array | null {
  const bytes = Buffer.from(record.buffer, record.byteOffset, record.byteLength);
  const start = bytes.indexOf(`${ID_KEY}${id}"`);
  // JSON text has no raw newline, and quotes inside strings are escaped: a match at a line's
  // start is the message itself, never text quoted inside another one.
  if (start < 0 || (start > 0 && bytes[start - 1] !== NEWLINE)) return null;
  const end = bytes.indexOf(NEWLINE, start);
  return bytes.subarray(start, end < 0 ? bytes.length : end);
}
