// The events of an INGEST message as the ingest writer inserts them, serialized once, by the
// gateway that validated them (since 2026-11-27): an `eventRows` frame is a header line (JSON:
// the request's fields and, per accepted event, whether it triggers automations and its
// `_user_data` patch) followed by, per event and in order, its row of the events table as
// JSONCompactEachRow text without the columns every event of the frame shares and, for a
// trigger-worthy event, the part of its automation trigger the row lacks. The writer reads each
// event's user and event id from its row, decides it as before (dedupe, skips, deletions,
// merges of `_user_data`) and concatenates the stored texts instead of parsing, re-planning and
// re-serializing each event: each row with the shared columns and the version (which the
// stream sequence decides) put in, each trigger from its row's already escaped ids, type and
// date and its own line; a redelivered frame holds the same bytes, so a replay writes the same
// rows and triggers. Format 2 (header `"v":2`, since 2026-11-27 09:30 UTC) carries each id and
// value once; format 1 (e85495d: ids in the header, whole rows, whole trigger JSON) and messages
// of the earlier format (one JSON object of kind `events`, core/bus/ingest.ts) are still read,
// the latter by encoding them as a frame, so every format gives byte-identical rows and triggers.
import { checkPayload, UnreadableBusMessageError } from '../bus/decode';
import { CONTACT_PATCH_SCHEMA as patch, type IngestEventsMessage, type IngestMessage } from '../bus/ingest';
import { audienceId } from './audience-identity';
import { packParts } from './parts';
import type { ContactPatch, EventRecord, TypedValue } from './types';
import Ajv from 'ajv';

/** Every column of the events table the writer inserts (migration 0005), in its order; `version` last. */
export const EVENT_COLUMNS = [
  'project_id', 'datasource_id', 'event_type', 'user_id', 'audience_id', 'event_id', 'event_date', 'received_at', 'source',
  'params_string', 'params_number', 'params_bool', 'params_date', 'params_array', 'params_json', 'version',
] as const;

/** DateTime64(3, 'UTC') text of an ISO 8601 UTC instant (as stores/clickhouse-time.ts toClickHouseTime). */
const clickHouseTime = (iso: string): string => (iso.length === 24 && iso[10] === 'T' && iso[23] === 'Z' ? `${iso.slice(0, 10)} ${iso.slice(11, 23)}` : iso.replace('T', ' ').replace('Z', ''));

export type TypedMaps = { string: Record<string, string>; number: Record<string, number>; bool: Record<string, boolean>; date: Record<string, string>; array: Record<string, string[]>; json: Record<string, string> };

export const emptyTypedMaps = (): TypedMaps => ({ string: {}, number: {}, bool: {}, date: {}, array: {}, json: {} });

/** Puts a custom value in the typed map of its type (a name is in exactly one map per row). */
export function putTyped(maps: TypedMaps, name: string, typed: TypedValue): void {
  switch (typed.type) {
    case 'string': maps.string[name] = typed.value as string; break;
    case 'number': maps.number[name] = typed.value as number; break;
    case 'boolean': maps.bool[name] = typed.value as boolean; break;
    case 'date': maps.date[name] = clickHouseTime(typed.value as string); break;
    case 'array': maps.array[name] = typed.value as string[]; break;
    case 'object':
    case 'geopoint': maps.json[name] = JSON.stringify(typed.value); break;
  }
}

/**
 * What the gateway writes of one event (format 2). `row`: its events row without the columns
 * every event of the frame shares, `<event type>,<user id>,<audience id>,<event id>,<event date>,`
 * then its six typed maps, each followed by a comma (the writer puts `[<project>,<datasource>,`
 * in front, `,<received at>,"api"` after the event date and `<version>]` at the end). `trigger`,
 * for a trigger-worthy event: its `_event_parameters` object's JSON, preceded by its
 * `_event_date`'s JSON string only when that is not the ISO form of the row's event date.
 */
export interface EventTexts {
  readonly row: string;
  readonly trigger: string | null;
}

/** Map columns of a row in EVENT_COLUMNS order (params_string … params_json), by parameter type. */
const MAP_OF: Readonly<Record<TypedValue['type'], number>> = { string: 0, number: 1, boolean: 2, date: 3, array: 4, object: 5, geopoint: 5 };

/**
 * The texts of events (format 2), written out field by field, each value escaped once for both
 * texts: with the shared columns put in, the same bytes as JSON.stringify of the row's array
 * (its typed maps as putTyped fills them), and the trigger the writer builds from them the same
 * bytes as JSON.stringify of the AutomationTrigger object (core/bus/ingest.ts).
 */
export function eventTextsOf(): (audience: string, event: EventRecord) => EventTexts {
  const types = new Map<string, string>();
  return (audience, event) => {
    let type = types.get(event.eventType);
    if (type === undefined) {
      type = JSON.stringify(event.eventType);
      types.set(event.eventType, type);
    }
    const maps = ['', '', '', '', '', ''];
    let params = '';
    for (const name in event.parameters) {
      const typed = event.parameters[name] as TypedValue;
      const key = JSON.stringify(name);
      const index = MAP_OF[typed.type];
      let stored: string;
      let plain: string;
      if (typed.type === 'date') {
        plain = JSON.stringify(typed.value);
        stored = JSON.stringify(clickHouseTime(typed.value as string));
      } else if (index === 5) {
        plain = JSON.stringify(typed.value);
        stored = JSON.stringify(plain);
      } else {
        plain = JSON.stringify(typed.value);
        stored = plain;
      }
      maps[index] += `${maps[index] === '' ? '' : ','}${key}:${stored}`;
      if (event.triggers) params += `${params === '' ? '' : ','}${key}:${plain}`;
    }
    const date = JSON.stringify(clickHouseTime(event.eventDate));
    const row = `${type},${JSON.stringify(event.userId)},${JSON.stringify(audience)},${JSON.stringify(event.eventId)},${date},{${maps[0]}},{${maps[1]}},{${maps[2]}},{${maps[3]}},{${maps[4]}},{${maps[5]}},`;
    if (!event.triggers) return { row, trigger: null };
    // The writer makes `"YYYY-MM-DDTHH:MM:SS.mmmZ"` of the row's `"YYYY-MM-DD HH:MM:SS.mmm"`: only when that gives the event's date back.
    const derived = date.length === 25 && event.eventDate.length === 24 && event.eventDate[10] === 'T' && event.eventDate[23] === 'Z';
    return { row, trigger: derived ? `{${params}}` : `${JSON.stringify(event.eventDate)}{${params}}` };
  };
}

/** The columns every event of a format-2 frame shares, as the writer puts them into each row: `[<project>,<datasource>,` in front, `,<received at>,"api"` after the event date. */
export interface SharedColumns {
  readonly head: Buffer;
  readonly mid: Buffer;
}

/** One event of an `eventRows` frame as the writer reads it: what the plan decides on, and the stored texts (views of the frame's bytes). */
export interface EventRowItem {
  readonly userId: string;
  readonly eventId: string;
  readonly userData: ContactPatch | null;
  /** Format 1: the whole row head (`[…,`); format 2: EventTexts.row. */
  readonly row: Buffer;
  /** Format 2: the frame's shared columns (`cut` says where the middle ones go in); null in format 1. */
  readonly shared: SharedColumns | null;
  /** Format 2: the index in `row` after the event date (where `shared.mid` goes in); the row's length in format 1. */
  readonly cut: number;
  /** Format 2: the ends (after the closing quote) in `row` of the event type, user id, audience id and event id; null in format 1. */
  readonly ends: readonly number[] | null;
  /** Format 1: the trigger's JSON; format 2: EventTexts.trigger; null: the event does not trigger. */
  readonly trigger: Buffer | null;
}

export interface IngestEventRowsMessage extends HeaderFields {
  readonly items: readonly EventRowItem[];
}

/** What the ingest writer reads from the INGEST stream: any IngestMessage, or an `eventRows` frame. */
export type WriterMessage = IngestMessage | IngestEventRowsMessage;

/** Format 1 header item (e85495d): user id, event id, 1 when it triggers (a trigger line follows its row line), `_user_data` patch or null. */
type HeaderItem1 = [string, string, 0 | 1, ContactPatch | null];
/** Format 2 header item: 1 when it triggers (a trigger line follows its row line), else 0; `[0|1, patch]` when it carries `_user_data`. */
type HeaderItem2 = 0 | 1 | [0 | 1, ContactPatch];

/** The fields of a request an `eventRows` frame's header carries (and its decoded message). */
export interface HeaderFields {
  readonly kind: 'eventRows';
  readonly orgId: string;
  readonly projectId: string;
  readonly datasourceId: string;
  readonly receivedAt: string;
  readonly failed: number;
  readonly part?: number;
}
interface Header1 extends HeaderFields { readonly items: HeaderItem1[] }
interface Header2 extends HeaderFields { readonly v: 2; readonly items: HeaderItem2[] }

const headerSchema = (v: 1 | 2) => ({
  type: 'object',
  required: ['kind', 'orgId', 'projectId', 'datasourceId', 'receivedAt', 'failed', 'items', ...(v === 2 ? ['v'] : [])],
  properties: {
    kind: { const: 'eventRows' }, orgId: { type: 'string' }, projectId: { type: 'string' }, datasourceId: { type: 'string' }, receivedAt: { type: 'string' },
    failed: { type: 'integer' }, part: { type: 'integer', minimum: 1 }, ...(v === 2 ? { v: { const: 2 } } : {}),
    items: {
      type: 'array', minItems: 1,
      items: v === 1
        ? { type: 'array', minItems: 4, maxItems: 4, items: [{ type: 'string' }, { type: 'string' }, { enum: [0, 1] }, { anyOf: [{ type: 'null' }, patch] }] }
        : { anyOf: [{ enum: [0, 1] }, { type: 'array', minItems: 2, maxItems: 2, items: [{ enum: [0, 1] }, patch] }] },
    },
  },
  // A header naming a format this writer does not know is not read as format 1.
  ...(v === 1 ? { not: { required: ['v'] } } : {}),
});
const ajv = new Ajv({ allErrors: false, strict: false });
const checkHeader1 = ajv.compile<Header1>(headerSchema(1));
const checkHeader2 = ajv.compile<Header2>(headerSchema(2));

const NEWLINE = 10;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const SPACE = 0x20;
const utf8 = new TextDecoder();

/**
 * The INGEST events message as `eventRows` frames (format 2) of at most `limit` bytes each (one,
 * unless the request is larger than the bus carries: then several, events whole and in order,
 * the failed count on the first, later ones numbered `part` so the writer counts the request
 * once). Throws PAYLOAD_TOO_LARGE when one event does not fit on its own.
 */
export function encodeEventRows(message: IngestEventsMessage, limit: number): Buffer[] {
  const texts = eventTextsOf();
  const items = message.items.map(({ event, userData }) => {
    const { row, trigger } = texts(audienceId(message.projectId, event.userId), event);
    const flag = trigger === null ? 0 : 1;
    const meta: HeaderItem2 = userData === null ? flag : [flag, userData];
    return { meta, lines: trigger === null ? `${row}\n` : `${row}\n${trigger}\n`, eventId: event.eventId };
  });
  const frame = (group: typeof items, part: number): string => {
    const header: Header2 = {
      kind: 'eventRows', v: 2, orgId: message.orgId, projectId: message.projectId, datasourceId: message.datasourceId, receivedAt: message.receivedAt,
      failed: part === 0 ? message.failed : 0, ...(part > 0 ? { part } : {}), items: group.map((g) => g.meta),
    };
    let text = `${JSON.stringify(header)}\n`;
    for (const g of group) text += g.lines;
    return text;
  };
  const whole = Buffer.from(frame(items, 0));
  if (whole.length <= limit) return [whole];
  // The largest header (a part number of three digits) with no item; per item its header entry, a comma, and its lines.
  const groups = packParts(items, Buffer.byteLength(frame([], 999)), limit,
    (item) => Buffer.byteLength(JSON.stringify(item.meta)) + 1 + Buffer.byteLength(item.lines), (item) => `the event "${item.eventId}"`);
  return groups.map((g, part) => Buffer.from(frame(g, part)));
}

/** An earlier-format events message as the one frame the writer plans from (its texts built as the gateway builds them). */
export function framedEvents(message: IngestEventsMessage): IngestEventRowsMessage {
  // No event (never published so, but the earlier schema allows it): the request and its failed count, as before.
  if (message.items.length === 0) return messageOf({ ...message, kind: 'eventRows' }, []);
  return decodeIngest(encodeEventRows(message, Number.POSITIVE_INFINITY)[0] as Buffer) as IngestEventRowsMessage;
}

/**
 * Reads an INGEST stream message: an `eventRows` frame (a header line, then lines), or a single
 * JSON object of the earlier format (checked against INGEST_MESSAGE_SCHEMA). Throws
 * UnreadableBusMessageError for anything else, a frame whose lines do not match its header included.
 */
export function decodeIngest(data: Uint8Array): WriterMessage {
  const end = data.indexOf(NEWLINE);
  if (end < 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(utf8.decode(data));
    } catch (err) {
      throw new UnreadableBusMessageError('ingest payload is not JSON', { cause: err });
    }
    return checkPayload('ingest', parsed);
  }
  let header: unknown;
  try {
    header = JSON.parse(utf8.decode(data.subarray(0, end)));
  } catch (err) {
    throw new UnreadableBusMessageError('ingest eventRows header is not JSON', { cause: err });
  }
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (typeof header === 'object' && header !== null && 'v' in header) {
    if (!checkHeader2(header)) throw headerError(checkHeader2.errors);
    return decodeRows2(bytes, end + 1, header);
  }
  if (!checkHeader1(header)) throw headerError(checkHeader1.errors);
  return decodeRows1(bytes, end + 1, header);
}

function headerError(errors: Array<{ instancePath: string; message?: string }> | null | undefined): UnreadableBusMessageError {
  const first = errors?.[0];
  return new UnreadableBusMessageError(`ingest eventRows header does not match its schema: ${first ? `${first.instancePath || '/'} ${first.message ?? ''}` : 'invalid'}`);
}

function malformed(what: string, at: number): UnreadableBusMessageError {
  return new UnreadableBusMessageError(`ingest eventRows frame: ${what} line at byte ${at} missing or malformed`);
}

function messageOf(header: HeaderFields, items: EventRowItem[]): IngestEventRowsMessage {
  const { kind, orgId, projectId, datasourceId, receivedAt, failed, part } = header;
  return { kind, orgId, projectId, datasourceId, receivedAt, failed, ...(part === undefined ? {} : { part }), items };
}

/** Format 1 (e85495d): ids in the header, whole row heads, whole trigger JSON. */
function decodeRows1(data: Buffer, start: number, header: Header1): IngestEventRowsMessage {
  let pos = start;
  /** The next line, which must start with `open` and end with `close` (a row `[…,`, a trigger `{…}`). */
  const line = (open: number, close: number, what: string): Buffer => {
    const next = data.indexOf(NEWLINE, pos);
    if (next < 0 || next - pos < 2 || data[pos] !== open || data[next - 1] !== close) throw malformed(what, pos);
    const text = data.subarray(pos, next);
    pos = next + 1;
    return text;
  };
  const items = header.items.map(([userId, eventId, triggers, userData]): EventRowItem => {
    const row = line(0x5b, COMMA, 'row');
    return { userId, eventId, userData, row, shared: null, cut: row.length, ends: null, trigger: triggers === 1 ? line(0x7b, 0x7d, 'trigger') : null };
  });
  if (pos !== data.length) throw new UnreadableBusMessageError(`ingest eventRows frame: ${data.length - pos} bytes after the last line its header names`);
  return messageOf(header, items);
}

/** The index after the JSON string that opens at `at` (its closing quote), or -1 when it does not close before `limit`. */
function stringEnd(data: Buffer, at: number, limit: number): number {
  if (data[at] !== QUOTE) return -1;
  for (let i = at + 1; i < limit; i += 1) {
    const c = data[i];
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i += 1;
  }
  return -1;
}

/** Whether data[from, to) holds an escape (a backslash). */
function holdsEscape(data: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) if (data[i] === BACKSLASH) return true;
  return false;
}

/** The string of the JSON string text data[from, to) (quotes included); `plain` when it holds no escape. */
function stringOf(data: Buffer, from: number, to: number, plain: boolean): string {
  return plain ? data.toString('utf8', from + 1, to - 1) : (JSON.parse(data.toString('utf8', from, to)) as string);
}

/** Format 2: the ids read from each row, its shared columns put in on insert, its trigger built from the row and its own line. */
function decodeRows2(data: Buffer, start: number, header: Header2): IngestEventRowsMessage {
  const shared: SharedColumns = {
    head: Buffer.from(`[${JSON.stringify(header.projectId)},${JSON.stringify(header.datasourceId)},`),
    mid: Buffer.from(`,${JSON.stringify(clickHouseTime(header.receivedAt))},"api"`),
  };
  let pos = start;
  const items = header.items.map(function readEvent(meta): EventRowItem {
    const next = data.indexOf(NEWLINE, pos);
    if (next < 0) throw malformed('row', pos);
    // Five strings (event type, user id, audience id, event id, event date), each followed by a comma, then the maps.
    const ends = [0, 0, 0, 0];
    let at = pos;
    let plainUser = true;
    let plainEvent = true;
    for (let field = 0; field < 5; field += 1) {
      const from = at;
      at = stringEnd(data, at, next);
      if (at < 0 || data[at] !== COMMA) throw malformed('row', pos);
      if (field === 1) plainUser = !holdsEscape(data, from, at);
      else if (field === 3) plainEvent = !holdsEscape(data, from, at);
      if (field < 4) ends[field] = at - pos;
      at += 1;
    }
    const cut = at - 1 - pos;
    if (data[at] !== 0x7b || data[next - 1] !== COMMA) throw malformed('row', pos);
    const row = data.subarray(pos, next);
    const userId = stringOf(data, pos + (ends[0] as number) + 1, pos + (ends[1] as number), plainUser);
    const eventId = stringOf(data, pos + (ends[2] as number) + 1, pos + (ends[3] as number), plainEvent);
    pos = next + 1;
    const triggers = typeof meta === 'number' ? meta : meta[0];
    let trigger: Buffer | null = null;
    if (triggers === 1) {
      const last = data.indexOf(NEWLINE, pos);
      if (last < 0 || last - pos < 2 || data[last - 1] !== 0x7d) throw malformed('trigger', pos);
      if (data[pos] === 0x7b) {
        // The date comes from the row's: `"YYYY-MM-DD HH:MM:SS.mmm"`.
        if (cut - (ends[3] as number) - 1 !== 25 || row[(ends[3] as number) + 12] !== SPACE) throw malformed('trigger', pos);
      } else {
        const date = stringEnd(data, pos, last);
        if (date < 0 || data[date] !== 0x7b) throw malformed('trigger', pos);
      }
      trigger = data.subarray(pos, last);
      pos = last + 1;
    }
    return { userId, eventId, userData: typeof meta === 'number' ? null : meta[1], row, shared, cut, ends, trigger };
  });
  if (pos !== data.length) throw new UnreadableBusMessageError(`ingest eventRows frame: ${data.length - pos} bytes after the last line its header names`);
  return messageOf(header, items);
}

const T_AUDIENCE = Buffer.from('{"audienceId":');
const T_USER = Buffer.from(',"_user_id":');
const T_EVENT = Buffer.from(',"_event_id":');
const T_TYPE = Buffer.from(',"_event_type":');
const T_DATE = Buffer.from(',"_event_date":');
const T_PARAMS = Buffer.from(',"_event_parameters":');
const FIXED = T_AUDIENCE.length + T_USER.length + T_EVENT.length + T_TYPE.length + T_DATE.length + T_PARAMS.length + 1;

/** Copies src[from, to) to out at `at` and returns the bytes copied (a loop: the ranges are short, and Buffer#copy's checks cost more than the copy). */
function put(out: Buffer, at: number, src: Buffer, from: number, to: number): number {
  for (let i = from; i < to; i += 1) out[at + i - from] = src[i] as number;
  return to - from;
}

/** The trigger texts of stored events, as AutomationTriggers (core/bus/ingest.ts) JSON bytes: the same as JSON.stringify of that object. */
export function triggersPayload(project: string, datasource: string, receivedAt: string, items: ReadonlyArray<Pick<EventRowItem, 'row' | 'cut' | 'ends' | 'trigger'>>): Buffer {
  const open = `{"project":${JSON.stringify(project)},"datasource":${JSON.stringify(datasource)},"receivedAt":${JSON.stringify(receivedAt)},"triggers":[`;
  let size = Buffer.byteLength(open) + items.length + 2;
  for (const { cut, ends, trigger } of items) {
    const line = trigger as Buffer;
    // Format 2: the row's event type, user, audience and event id (event's end minus the 3 commas between them), its date (26 bytes as ISO) or the line's, the line's parameters.
    size += ends === null ? line.length : FIXED + (ends[3] as number) - 3 + line.length + (line[0] === 0x7b ? cut - (ends[3] as number) : 0);
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.write(open, 0, 'utf8');
  items.forEach(function writeTrigger({ row, cut, ends, trigger }, i) {
    if (i > 0) out[at++] = COMMA;
    const line = trigger as Buffer;
    if (ends === null) {
      out.set(line, at);
      at += line.length;
      return;
    }
    const [type, user, audience, event] = ends as [number, number, number, number];
    at += put(out, at, T_AUDIENCE, 0, T_AUDIENCE.length);
    at += put(out, at, row, user + 1, audience);
    at += put(out, at, T_USER, 0, T_USER.length);
    at += put(out, at, row, type + 1, user);
    at += put(out, at, T_EVENT, 0, T_EVENT.length);
    at += put(out, at, row, audience + 1, event);
    at += put(out, at, T_TYPE, 0, T_TYPE.length);
    at += put(out, at, row, 0, type);
    at += put(out, at, T_DATE, 0, T_DATE.length);
    if (line[0] === 0x7b) {
      // `"YYYY-MM-DD HH:MM:SS.mmm"` → `"YYYY-MM-DDTHH:MM:SS.mmmZ"`
      at += put(out, at, row, event + 1, event + 12);
      out[at++] = 0x54;
      at += put(out, at, row, event + 13, cut - 1);
      out[at++] = 0x5a;
      out[at++] = QUOTE;
      at += put(out, at, T_PARAMS, 0, T_PARAMS.length);
      at += put(out, at, line, 0, line.length);
    } else {
      const date = stringEnd(line, 0, line.length);
      at += put(out, at, line, 0, date);
      at += put(out, at, T_PARAMS, 0, T_PARAMS.length);
      at += put(out, at, line, date, line.length);
    }
    out[at++] = 0x7d;
  });
  out[at++] = 0x5d;
  out[at++] = 0x7d;
  return out.subarray(0, at);
}
