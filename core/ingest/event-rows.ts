// The events of an INGEST message as the ingest writer inserts them, serialized once, by the
// gateway that validated them (since 2026-11-27): an `eventRows` frame is a header line (JSON:
// the request's fields and, per accepted event, its user id, event id, whether it triggers
// automations, and its `_user_data` patch) followed by, per event and in order, its row of the
// events table as JSONCompactEachRow text without its last column (the version, which the
// stream sequence decides: the writer appends it) and, for a trigger-worthy event, its
// automation trigger as JSON text. The writer decides each event from the header as before
// (dedupe, skips, deletions, merges of `_user_data`) and concatenates the stored texts instead
// of parsing, re-planning and re-serializing each event; a redelivered frame holds the same
// bytes, so a replay writes the same rows. Frames of the earlier format (one JSON object of
// kind `events`, core/bus/ingest.ts) are still read: `decodeIngest` takes both, and the plan
// builds their rows with the same functions, so either format gives byte-identical rows.
import { AppError } from '../errors';
import { checkPayload, UnreadableBusMessageError } from '../bus/decode';
import type { IngestEventsMessage, IngestMessage } from '../bus/ingest';
import { audienceId } from './audience-identity';
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

/** What is stored of one event: its row head (`[…,`: its row in EVENT_COLUMNS order without `version`) and, when it triggers, its automation trigger's JSON. */
export interface EventTexts {
  readonly row: string;
  readonly trigger: string | null;
}

/** Map columns of a row in EVENT_COLUMNS order (params_string … params_json), by parameter type. */
const MAP_OF: Readonly<Record<TypedValue['type'], number>> = { string: 0, number: 1, boolean: 2, date: 3, array: 4, object: 5, geopoint: 5 };

/**
 * The texts of the events of one request (`projectId`, `datasourceId`, received at `receivedAt`).
 * Written out field by field, each value escaped once for both texts: the same bytes as
 * JSON.stringify of the row's array (its typed maps as putTyped fills them) and of the
 * AutomationTrigger object (core/bus/ingest.ts), at about half the CPU.
 */
export function eventTextsOf(projectId: string, datasourceId: string, receivedAt: string): (audience: string, event: EventRecord) => EventTexts {
  const head = `[${JSON.stringify(projectId)},${JSON.stringify(datasourceId)},`;
  const received = JSON.stringify(clickHouseTime(receivedAt));
  const types = new Map<string, string>();
  return (audience, event) => {
    let type = types.get(event.eventType);
    if (type === undefined) {
      type = JSON.stringify(event.eventType);
      types.set(event.eventType, type);
    }
    const user = JSON.stringify(event.userId);
    const id = JSON.stringify(event.eventId);
    const aud = JSON.stringify(audience);
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
    const row = `${head}${type},${user},${aud},${id},${JSON.stringify(clickHouseTime(event.eventDate))},${received},"api",{${maps[0]}},{${maps[1]}},{${maps[2]}},{${maps[3]}},{${maps[4]}},{${maps[5]}},`;
    const trigger = event.triggers
      ? `{"audienceId":${aud},"_user_id":${user},"_event_id":${id},"_event_type":${type},"_event_date":${JSON.stringify(event.eventDate)},"_event_parameters":{${params}}}`
      : null;
    return { row, trigger };
  };
}

/** One event of an `eventRows` frame as the writer reads it: what the plan decides on, and the stored texts (views of the frame's bytes). */
export interface EventRowItem {
  readonly userId: string;
  readonly eventId: string;
  readonly userData: ContactPatch | null;
  /** The row head (EventTexts.row). */
  readonly row: Uint8Array;
  /** The trigger's JSON (EventTexts.trigger), for a trigger-worthy event. */
  readonly trigger: Uint8Array | null;
}

export interface IngestEventRowsMessage {
  readonly kind: 'eventRows';
  readonly orgId: string;
  readonly projectId: string;
  readonly datasourceId: string;
  readonly receivedAt: string;
  readonly failed: number;
  readonly part?: number;
  readonly items: readonly EventRowItem[];
}

/** What the ingest writer reads from the INGEST stream: any IngestMessage, or an `eventRows` frame. */
export type WriterMessage = IngestMessage | IngestEventRowsMessage;

/** Header item: user id, event id, 1 when it triggers (a trigger line follows its row line), `_user_data` patch or null. */
type HeaderItem = [string, string, 0 | 1, ContactPatch | null];

interface Header {
  readonly kind: 'eventRows';
  readonly orgId: string;
  readonly projectId: string;
  readonly datasourceId: string;
  readonly receivedAt: string;
  readonly failed: number;
  readonly part?: number;
  readonly items: HeaderItem[];
}

const typedValue = { type: 'object', required: ['type', 'value'], properties: { type: { type: 'string' } } } as const;
const patch = {
  type: 'object',
  required: ['userId', 'attributes'],
  properties: { userId: { type: 'string' }, attributes: { type: 'object', additionalProperties: { anyOf: [{ type: 'null' }, typedValue] } } },
} as const;
const HEADER_SCHEMA = {
  type: 'object',
  required: ['kind', 'orgId', 'projectId', 'datasourceId', 'receivedAt', 'failed', 'items'],
  properties: {
    kind: { const: 'eventRows' }, orgId: { type: 'string' }, projectId: { type: 'string' }, datasourceId: { type: 'string' }, receivedAt: { type: 'string' },
    failed: { type: 'integer' }, part: { type: 'integer', minimum: 1 },
    items: {
      type: 'array', minItems: 1,
      items: { type: 'array', minItems: 4, maxItems: 4, items: [{ type: 'string' }, { type: 'string' }, { enum: [0, 1] }, { anyOf: [{ type: 'null' }, patch] }] },
    },
  },
} as const;
const checkHeader = new Ajv({ allErrors: false, strict: false }).compile<Header>(HEADER_SCHEMA);

const NEWLINE = 10;
const utf8 = new TextDecoder();

/**
 * The INGEST events message as `eventRows` frames of at most `limit` bytes each (one, unless
 * the request is larger than the bus carries: then several, events whole and in order, the
 * failed count on the first, later ones numbered `part` so the writer counts the request once).
 * Throws PAYLOAD_TOO_LARGE when one event does not fit on its own.
 */
export function encodeEventRows(message: IngestEventsMessage, limit: number): Buffer[] {
  const texts = eventTextsOf(message.projectId, message.datasourceId, message.receivedAt);
  const items = message.items.map(({ event, userData }) => {
    const { row, trigger } = texts(audienceId(message.projectId, event.userId), event);
    const meta: HeaderItem = [event.userId, event.eventId, trigger === null ? 0 : 1, userData];
    return { meta, lines: trigger === null ? `${row}\n` : `${row}\n${trigger}\n`, eventId: event.eventId };
  });
  const frame = (group: typeof items, part: number): string => {
    const header: Header = {
      kind: 'eventRows', orgId: message.orgId, projectId: message.projectId, datasourceId: message.datasourceId, receivedAt: message.receivedAt,
      failed: part === 0 ? message.failed : 0, ...(part > 0 ? { part } : {}), items: group.map((g) => g.meta),
    };
    let text = `${JSON.stringify(header)}\n`;
    for (const g of group) text += g.lines;
    return text;
  };
  const whole = Buffer.from(frame(items, 0));
  if (whole.length <= limit) return [whole];
  // The largest header (a part number of three digits) with no item; per item its header entry, a comma, and its lines.
  const overhead = Buffer.byteLength(frame([], 999));
  const groups: Array<typeof items> = [];
  let group: typeof items = [];
  let bytes = overhead;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item.meta)) + 1 + Buffer.byteLength(item.lines);
    if (overhead + size > limit) {
      throw new AppError('PAYLOAD_TOO_LARGE', `the event "${item.eventId}" is ${size} bytes as stored, more than the ${limit} bytes the message bus carries per item (half the NATS server's max_payload, at most 512 KiB): nothing was stored; send it with fewer or shorter values`);
    }
    if (bytes + size > limit && group.length > 0) {
      groups.push(group);
      group = [];
      bytes = overhead;
    }
    group.push(item);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups.map((g, part) => Buffer.from(frame(g, part)));
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
  if (!checkHeader(header)) {
    const first = checkHeader.errors?.[0];
    throw new UnreadableBusMessageError(`ingest eventRows header does not match its schema: ${first ? `${first.instancePath || '/'} ${first.message ?? ''}` : 'invalid'}`);
  }
  let pos = end + 1;
  /** The next line, which must start with `open` and end with `close` (a row `[…,`, a trigger `{…}`). */
  const line = (open: number, close: number, what: string): Uint8Array => {
    const next = data.indexOf(NEWLINE, pos);
    if (next < 0 || next - pos < 2 || data[pos] !== open || data[next - 1] !== close) throw new UnreadableBusMessageError(`ingest eventRows frame: ${what} line at byte ${pos} missing or malformed`);
    const text = data.subarray(pos, next);
    pos = next + 1;
    return text;
  };
  const items = header.items.map(([userId, eventId, triggers, userData]): EventRowItem => {
    const row = line(0x5b, 0x2c, 'row');
    return { userId, eventId, userData, row, trigger: triggers === 1 ? line(0x7b, 0x7d, 'trigger') : null };
  });
  if (pos !== data.length) throw new UnreadableBusMessageError(`ingest eventRows frame: ${data.length - pos} bytes after the last line its header names`);
  const { kind, orgId, projectId, datasourceId, receivedAt, failed, part } = header;
  return { kind, orgId, projectId, datasourceId, receivedAt, failed, ...(part === undefined ? {} : { part }), items };
}
