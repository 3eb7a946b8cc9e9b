// The INGEST events message as `eventRows` frames (core/ingest/event-rows.ts): the gateway
// serializes each accepted event's row and the part of its trigger the row lacks once, the
// writer concatenates them. A frame must plan exactly as the earlier format's message of the
// same events (spec 2 §3: dedupe, skips, `_user_data` first; spec 2 §4 rule 6: triggers, the
// same JSON bytes), and the writer still reads messages of the earlier format and frames of
// format 1 (e85495d) (a rolling upgrade: messages already on the stream).
import { isUnreadableBusMessage } from '../../core/bus/decode';
import type { AutomationTriggers } from '../../core/bus/ingest';
import { isAppError } from '../../core/errors';
import {
  audienceId, decodeIngest, encodeEventRows, planWrites, triggersPayload, versionOf,
  type ContactStates, type EventRowItem, type IngestEventsMessage, type StoredEvent, type WriterMessage,
} from '../../core/ingest';
import { emptyTypedMaps, putTyped, type EventRecord } from '../../core/ingest';
import { newId } from '../../core/ids';
import { toClickHouseTime } from '../../stores/clickhouse-time';
import { encodeEventRowsV1 } from '../support/event-rows-v1';

const receivedAt = '2026-11-27T08:00:00.000Z';
const header = { orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt };
const hostile = ['plain', 'quote " and \' apostrophe', 'back\\slash', 'new\nline\ttab', 'emoji 😀 and ü', '', '{"json":true}', '\u2028separator', ']\n[,'];

function eventsMessage(): IngestEventsMessage {
  return {
    kind: 'events', ...header, failed: 2,
    items: [
      ...hostile.map((text, i) => ({
        event: {
          userId: `user ${text} ${i % 4}`, eventId: `event ${text} ${i}`, eventType: 'purchase', eventDate: '2026-11-27T07:59:00.123Z', triggers: i % 3 !== 0,
          parameters: { text: { type: 'string' as const, value: text }, amount: { type: 'number' as const, value: i }, ok: { type: 'boolean' as const, value: false },
            tags: { type: 'array' as const, value: [text] }, when: { type: 'date' as const, value: '2026-11-01T10:00:00.000Z' }, obj: { type: 'object' as const, value: { text } } },
        },
        userData: i % 4 === 0 ? { userId: `user ${text} ${i % 4}`, attributes: { note: { type: 'string' as const, value: text }, gone: null } } : null,
      })),
      // A duplicate within the request and an event of a user without a contact (skipped).
      { event: { userId: 'user plain 0', eventId: 'event plain 0', eventType: 'view', eventDate: receivedAt, triggers: true, parameters: {} }, userData: null },
      { event: { userId: 'ghost', eventId: 'g1', eventType: 'view', eventDate: receivedAt, triggers: true, parameters: {} }, userData: null },
    ],
  };
}

/** The events row as the writer built it before frames (stores/audience-writer.ts eventRow at aba74bb): the array, JSON.stringify'd, without its version. */
function referenceRow(audience: string, event: EventRecord): string {
  const maps = emptyTypedMaps();
  for (const name in event.parameters) putTyped(maps, name, event.parameters[name] as EventRecord['parameters'][string]);
  const text = JSON.stringify(['p', 'd', event.eventType, event.userId, audience, event.eventId, toClickHouseTime(event.eventDate), toClickHouseTime(receivedAt), 'api',
    maps.string, maps.number, maps.bool, maps.date, maps.array, maps.json]);
  return `${text.slice(0, -1)},`;
}

/** The trigger as the writer built it before frames (core/ingest/apply.ts at aba74bb), JSON.stringify'd. */
function referenceTrigger(audience: string, event: EventRecord): string {
  const values: Record<string, unknown> = {};
  for (const name in event.parameters) values[name] = event.parameters[name]?.value;
  return JSON.stringify({ audienceId: audience, _user_id: event.userId, _event_id: event.eventId, _event_type: event.eventType, _event_date: event.eventDate, _event_parameters: values });
}

const frameOf = (message: IngestEventsMessage): WriterMessage => {
  const parts = encodeEventRows(message, 512 * 1024);
  expect(parts).toHaveLength(1);
  return decodeIngest(parts[0] as Buffer);
};
/** A frame of format 1, as gateways at e85495d wrote it. */
const frameV1Of = (message: IngestEventsMessage): WriterMessage => decodeIngest(encodeEventRowsV1(message));

/** The row as inserted, without its version: the shared columns put in (format 2). */
const rowOf = (e: Pick<StoredEvent, 'row' | 'shared' | 'cut'>): string => (e.shared
  ? Buffer.concat([e.shared.head, e.row.subarray(0, e.cut), e.shared.mid, e.row.subarray(e.cut)]).toString()
  : Buffer.from(e.row).toString());
/** The trigger's JSON as the writer puts it into the triggers message. */
const triggerOf = (item: EventRowItem): string | null => {
  if (item.trigger === null) return null;
  const open = `{"project":"p","datasource":"d","receivedAt":${JSON.stringify(receivedAt)},"triggers":[`;
  const text = triggersPayload('p', 'd', receivedAt, [item]).toString();
  expect(text.startsWith(open) && text.endsWith(']}')).toBe(true);
  return text.slice(open.length, -2);
};

/** Contacts for users 1-3 of every hostile text (user 0's come from `_user_data`). */
const seeded = (): ContactStates => {
  const states: ContactStates = new Map();
  const message: WriterMessage = { kind: 'contacts', ...header, failed: 0, contacts: hostile.flatMap((text) => [1, 2, 3].map((n) => ({ userId: `user ${text} ${n}`, attributes: {} }))) };
  planWrites({ messages: [{ seq: 1, message }], states, storedBefore: () => false });
  return states;
};

const plain = (plan: ReturnType<typeof planWrites>) => ({
  events: plan.events.map(({ shared: _shared, cut: _cut, ...e }) => ({ ...e, row: rowOf({ ...e, shared: _shared, cut: _cut }) })),
  triggers: plan.triggers.map((t) => ({ ...t, data: t.data.toString() })),
  usage: plan.usage, changedUsers: [...plan.changedUsers.values()].map((u) => ({ ...u, datasources: [...u.datasources] })),
});

describe('spec 2 §3: eventRows frames plan as the earlier events message', () => {
  test('round trip: header, ids read from the rows, _user_data, the row and trigger texts as JSON.stringify made them before frames', () => {
    const message = eventsMessage();
    for (const frame of [frameOf(message), frameV1Of(message)]) {
      if (frame.kind !== 'eventRows') throw new Error(`decoded as ${frame.kind}`);
      expect({ ...frame, items: undefined }).toEqual({ kind: 'eventRows', ...header, failed: 2, items: undefined });
      expect(frame.items.map((i) => [i.userId, i.eventId, i.userData])).toEqual(message.items.map(({ event, userData }) => [event.userId, event.eventId, userData]));
      message.items.forEach(({ event }, i) => {
        const item = frame.items[i] as EventRowItem;
        const audience = audienceId('p', event.userId);
        // Byte for byte what JSON.stringify made of the row and the trigger before frames.
        expect(rowOf(item)).toBe(referenceRow(audience, event));
        expect(triggerOf(item)).toBe(event.triggers ? referenceTrigger(audience, event) : null);
      });
    }
  });

  test('the same events, duplicates, skips, versions, rows, triggers and usage as the earlier format, for hostile strings (format 2 and format 1)', () => {
    const message = eventsMessage();
    const old = planWrites({ messages: [{ seq: 7, message }], states: seeded(), storedBefore: (_ds, id) => id === 'event plain 4' });
    for (const frame of [frameOf(message), frameV1Of(message)]) {
      const framed = planWrites({ messages: [{ seq: 7, message: frame }], states: seeded(), storedBefore: (_ds, id) => id === 'event plain 4' });
      expect(plain(framed)).toEqual(plain(old));
      expect(framed.usage).toEqual([expect.objectContaining({ endpoint: 'events', requests: 1, accepted: hostile.length, duplicates: 1, skipped: 1, failed: 2 })]);
      expect(framed.events.map((e) => e.version)).toEqual(hostile.map((_, i) => versionOf(7, i)));
    }
  });

  test('every parameter type, no parameter, an event date not in its row\'s ISO form, every format: the same texts as JSON.stringify of the row and the trigger', () => {
    const event: EventRecord = {
      userId: 'u "1"', eventId: 'e\\1', eventType: 'a-b_c', eventDate: '2026-11-27T07:00:00.000Z', triggers: true,
      parameters: { s: { type: 'string', value: '\u0000\u001f"\\/' }, n: { type: 'number', value: -0.5e-7 }, b: { type: 'boolean', value: true }, d: { type: 'date', value: '2026-01-02T03:04:05.678Z' },
        a: { type: 'array', value: ['x', '"'] }, o: { type: 'object', value: { k: ['v', 1, null] } }, g: { type: 'geopoint', value: { lat: -1.5, lon: 2 } } },
    };
    const events: EventRecord[] = [event, { ...event, parameters: {} }, { ...event, eventDate: '2026-11-27T07:00:00Z' }, { ...event, userId: 'ü 😀\u2028', eventDate: '2026-11-27T07:00:00.5+00:00', parameters: {} }];
    for (const e of events) {
      const message: IngestEventsMessage = { kind: 'events', ...header, failed: 0, items: [{ event: e, userData: null }] };
      for (const framed of [frameOf(message), frameV1Of(message)]) {
        const item = framed.kind === 'eventRows' ? framed.items[0] as EventRowItem : undefined;
        if (!item) throw new Error('not a frame');
        expect([item.userId, item.eventId]).toEqual([e.userId, e.eventId]);
        expect(rowOf(item)).toBe(referenceRow(audienceId('p', e.userId), e));
        expect(triggerOf(item)).toBe(referenceTrigger(audienceId('p', e.userId), e));
      }
      const plan = planWrites({ messages: [{ seq: 1, message: { kind: 'events', ...header, failed: 0, items: [{ event: e, userData: { userId: e.userId, attributes: {} } }] } }], states: new Map(), storedBefore: () => false });
      expect(rowOf(plan.events[0] as StoredEvent)).toBe(referenceRow(audienceId('p', e.userId), e));
      expect(plan.triggers[0]?.data.toString()).toBe(`{"project":"p","datasource":"d","receivedAt":"${receivedAt}","triggers":[${referenceTrigger(audienceId('p', e.userId), e)}]}`);
    }
  });

  test('a row with its shared columns and version put in is the JSONCompactEachRow array of the event', () => {
    const message = eventsMessage();
    const plan = planWrites({ messages: [{ seq: 3, message: frameOf(message) }], states: seeded(), storedBefore: () => false });
    const first = plan.events[0] as StoredEvent;
    const row = JSON.parse(`${rowOf(first)}${first.version}]`) as unknown[];
    expect(row).toEqual(['p', 'd', 'purchase', 'user plain 0', audienceId('p', 'user plain 0'), 'event plain 0', '2026-11-27 07:59:00.123', '2026-11-27 08:00:00.000', 'api',
      { text: 'plain' }, { amount: 0 }, { ok: false }, { when: '2026-11-01 10:00:00.000' }, { tags: ['plain'] }, { obj: '{"text":"plain"}' }, versionOf(3, 0)]);
  });

  test('spec 2 §4 rule 6: the triggers message holds the same JSON bytes as before, each trigger-worthy event once, from every format', () => {
    const message = eventsMessage();
    const stored = message.items.slice(0, hostile.length).filter(({ event }) => event.triggers);
    const before: AutomationTriggers = {
      project: 'p', datasource: 'd', receivedAt,
      triggers: stored.map(({ event }) => ({
        audienceId: audienceId('p', event.userId), _user_id: event.userId, _event_id: event.eventId, _event_type: event.eventType, _event_date: event.eventDate,
        _event_parameters: Object.fromEntries(Object.entries(event.parameters).map(([k, v]) => [k, v.value])),
      })),
    };
    for (const m of [frameOf(message), frameV1Of(message), message]) {
      const plan = planWrites({ messages: [{ seq: 5, message: m }], states: seeded(), storedBefore: () => false });
      expect(plan.triggers).toHaveLength(1);
      expect(plan.triggers[0]?.msgId).toBe('ingest-5');
      expect(plan.triggers[0]?.data.toString()).toBe(JSON.stringify(before));
    }
  });

  test('a replayed frame (the same bytes, the same sequence) plans the same rows', () => {
    const bytes = encodeEventRows(eventsMessage(), 512 * 1024)[0] as Buffer;
    const once = plain(planWrites({ messages: [{ seq: 9, message: decodeIngest(bytes) }], states: seeded(), storedBefore: () => false }));
    const again = plain(planWrites({ messages: [{ seq: 9, message: decodeIngest(Buffer.from(bytes)) }], states: seeded(), storedBefore: () => false }));
    expect(again).toEqual(once);
  });

  test('format 2 carries each id once: smaller than the earlier JSON message and than half a format-1 frame (bench-shaped events)', () => {
    const ids = { orgId: newId(), projectId: newId(), datasourceId: newId(), receivedAt };
    const message: IngestEventsMessage = {
      kind: 'events', ...ids, failed: 0,
      items: Array.from({ length: 100 }, (_, i) => ({ userData: null, event: {
        userId: `user-${i}`, eventId: `evt-${i}`, eventType: i % 2 ? 'purchase' : 'view', eventDate: receivedAt, triggers: true,
        parameters: { amount: { type: 'number' as const, value: i }, sku: { type: 'string' as const, value: `sku-${i}` } } } })),
    };
    const frame = encodeEventRows(message, 512 * 1024)[0] as Buffer;
    const text = frame.toString();
    expect(frame.length).toBeLessThan(Buffer.byteLength(JSON.stringify(message)));
    expect(frame.length).toBeLessThan(encodeEventRowsV1(message).length / 2);
    expect(text.split(ids.projectId)).toHaveLength(2);
    expect(text.split(audienceId(ids.projectId, 'user-7'))).toHaveLength(2);
    expect(text.split('"evt-7"')).toHaveLength(2);
  });
});

describe('messages on the stream from before (a rolling upgrade)', () => {
  test('an events, contacts, delete or rejected message as one JSON object reads as before', () => {
    const messages: WriterMessage[] = [
      eventsMessage(),
      { kind: 'contacts', ...header, failed: 0, contacts: [{ userId: 'u', attributes: { a: { type: 'string', value: 'x' }, b: null } }] },
      { kind: 'delete', ...header, userId: 'u' },
      { kind: 'rejected', projectId: 'p', datasourceId: 'd', receivedAt, endpoint: 'events', failed: 3 },
    ];
    for (const m of messages) expect(decodeIngest(Buffer.from(JSON.stringify(m)))).toEqual(m);
  });

  test('an earlier-format events message without events counts its request and failures, as before', () => {
    const plan = planWrites({ messages: [{ seq: 4, message: { kind: 'events', ...header, failed: 3, items: [] } }], states: new Map(), storedBefore: () => false });
    expect(plan.events).toEqual([]);
    expect(plan.triggers).toEqual([]);
    expect(plan.usage).toEqual([expect.objectContaining({ endpoint: 'events', requests: 1, accepted: 0, failed: 3 })]);
  });

  test('a run mixing the earlier format, format 1 and format 2 stores each event id once (the earliest message first)', () => {
    const message = eventsMessage();
    const plan = planWrites({ messages: [{ seq: 1, message }, { seq: 2, message: frameV1Of(message) }, { seq: 3, message: frameOf(message) }], states: seeded(), storedBefore: () => false });
    expect(plan.events.map((e) => e.version)).toEqual(hostile.map((_, i) => versionOf(1, i)));
    // Duplicates: one within each request, and every stored event of the first again in the others.
    expect(plan.usage[0]).toEqual(expect.objectContaining({ requests: 3, accepted: hostile.length, duplicates: 2 * hostile.length + 3, skipped: 3 }));
    expect(plan.triggers.map((t) => t.msgId)).toEqual(['ingest-1']);
  });
});

describe('unreadable frames are refused whole (the writer terminates them, nothing half-applied)', () => {
  const good = (): string => (encodeEventRows(eventsMessage(), 512 * 1024)[0] as Buffer).toString();
  const lines = (): string[] => good().split('\n');
  const goodV1 = (): string => encodeEventRowsV1(eventsMessage()).toString();
  /** A frame of one event whose date is not in its row's ISO form: its trigger line starts with the date. */
  const dated = (): string[] => (encodeEventRows({ kind: 'events', ...header, failed: 0, items: [{ userData: null, event: {
    userId: 'u', eventId: 'e', eventType: 't', eventDate: '2026-11-27T07:00:00Z', triggers: true, parameters: {} } }] }, 512 * 1024)[0] as Buffer).toString().split('\n');
  test.each([
    ['a header that is not JSON', () => `{"kind":"eventRows",\n[1,\n`],
    ['a header of another shape', () => `{"kind":"eventRows","orgId":"o"}\n[1,\n`],
    ['a header of an unknown format', () => lines().map((l, i) => (i === 0 ? l.replace('"v":2', '"v":3') : l)).join('\n')],
    ['a format-1 header marked format 2', () => goodV1().replace('{"kind":"eventRows",', '{"kind":"eventRows","v":2,')],
    ['a missing row line', () => `${lines().slice(0, -2).join('\n')}\n`],
    ['bytes after the last line', () => `${good()}"t",\n`],
    ['a row that does not end its last map', () => lines().map((l, i) => (i === 1 ? l.replace(/,$/, ']') : l)).join('\n')],
    ['a row without its event date', () => lines().map((l, i) => (i === 1 ? l.replace(/"\d{4}-\d\d-\d\d [^"]*",/, '') : l)).join('\n')],
    ['a row whose string does not close', () => lines().map((l, i) => (i === 1 ? l.replace(/^"purchase",/, '"purchase,') : l)).join('\n')],
    ['a trigger line missing', () => lines().filter((l) => !l.startsWith('{')).join('\n')],
    ['a trigger without its date beside a row date not in ISO form', () => dated().map((l, i) => (i === 2 ? l.replace(/^"[^"]*"/, '') : l)).join('\n')],
    ['a trigger whose date does not close', () => dated().map((l, i) => (i === 2 ? l.replace(/"\{/, '{') : l)).join('\n')],
    ['format 1: a row that is not a row head', () => goodV1().split('\n').map((l, i) => (i === 1 ? l.replace(/,$/, ']') : l)).join('\n')],
    ['format 1: a trigger line missing', () => goodV1().split('\n').filter((l) => !l.startsWith('{"audienceId"')).join('\n')],
    ['not JSON at all', () => 'garbage'],
    ['an earlier-format message of an unknown kind', () => JSON.stringify({ kind: 'other', ...header })],
  ])('%s', (_what, text) => {
    let thrown: unknown;
    try { decodeIngest(Buffer.from(text())); } catch (err) { thrown = err; }
    expect(isUnreadableBusMessage(thrown)).toBe(true);
  });

  test('the frames altered above are read whole when not altered', () => {
    expect(decodeIngest(Buffer.from(good())).kind).toBe('eventRows');
    expect(decodeIngest(Buffer.from(goodV1())).kind).toBe('eventRows');
    expect(decodeIngest(Buffer.from(dated().join('\n'))).kind).toBe('eventRows');
  });
});

describe('spec 2 §7: a request larger than one bus message, as frames', () => {
  const big = (): IngestEventsMessage => ({
    kind: 'events', ...header, failed: 3,
    items: Array.from({ length: 100 }, (_, i) => ({
      event: { userId: `u${i % 5}`, eventId: `e${i}`, eventType: 'view', eventDate: receivedAt, triggers: i % 2 === 0, parameters: { note: { type: 'string' as const, value: 'x'.repeat(4000) } } },
      userData: i < 5 ? { userId: `u${i}`, attributes: {} } : null,
    })),
  });

  test('frames under the limit, events whole and in order, the failed count once, later frames numbered; the writer counts the request once', () => {
    const parts = encodeEventRows(big(), 100_000);
    expect(parts.length).toBeGreaterThan(4);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(100_000);
    const decoded = parts.map((p) => decodeIngest(p));
    expect(decoded.flatMap((m) => (m.kind === 'eventRows' ? m.items.map((i) => i.eventId) : []))).toEqual(big().items.map(({ event }) => event.eventId));
    expect(decoded.map((m) => (m.kind === 'eventRows' ? [m.failed, m.part] : null))).toEqual(decoded.map((_, i) => (i === 0 ? [3, undefined] : [0, i])));
    const plan = planWrites({ messages: decoded.map((message, i) => ({ seq: i + 1, message })), states: new Map(), storedBefore: () => false });
    expect(plan.usage).toEqual([expect.objectContaining({ endpoint: 'events', requests: 1, accepted: 100, failed: 3 })]);
    expect(plan.triggers.flatMap((t) => (JSON.parse(t.data.toString()) as AutomationTriggers).triggers.map((x) => x._event_id))).toEqual(big().items.filter(({ event }) => event.triggers).map(({ event }) => event.eventId));
  });

  test('the triggers message of a frame at the limit fits in the server\'s max_payload (twice the limit), for the smallest events', () => {
    const tiny: IngestEventsMessage = { kind: 'events', ...header, failed: 0, items: Array.from({ length: 5000 }, (_, i) => ({ userData: null, event: {
      userId: `${i % 10}`, eventId: `${i}`, eventType: 'v', eventDate: receivedAt, triggers: true, parameters: {} } })) };
    const parts = encodeEventRows(tiny, 100_000);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      const frame = decodeIngest(p);
      if (frame.kind !== 'eventRows') throw new Error('not a frame');
      const payload = triggersPayload('p', 'd', receivedAt, frame.items);
      expect(p.length).toBeLessThanOrEqual(100_000);
      expect(payload.length).toBeLessThanOrEqual(200_000);
      expect((JSON.parse(payload.toString()) as AutomationTriggers).triggers).toHaveLength(frame.items.length);
    }
  });

  test('an event too large on its own is PAYLOAD_TOO_LARGE naming it and the limit', () => {
    let thrown: unknown;
    try { encodeEventRows(big(), 5000); } catch (err) { thrown = err; }
    expect(isAppError(thrown) && thrown.code).toBe('PAYLOAD_TOO_LARGE');
    expect((thrown as Error).message).toMatch(/the event "e0" is \d+ bytes as stored, more than the 5000 bytes/);
  });
});
