// The INGEST events message as `eventRows` frames (core/ingest/event-rows.ts): the gateway
// serializes each accepted event's row and trigger once, the writer concatenates them. A frame
// must plan exactly as the earlier format's message of the same events (spec 2 §3: dedupe,
// skips, `_user_data` first; spec 2 §4 rule 6: triggers), and the writer still reads messages
// of the earlier format (a rolling upgrade: messages already on the stream).
import { isUnreadableBusMessage } from '../../core/bus/decode';
import type { AutomationTriggers } from '../../core/bus/ingest';
import { isAppError } from '../../core/errors';
import {
  audienceId, decodeIngest, encodeEventRows, planWrites, versionOf,
  type ContactStates, type IngestEventsMessage, type WriterMessage,
} from '../../core/ingest';
import { emptyTypedMaps, putTyped, type EventRecord } from '../../core/ingest';
import { toClickHouseTime } from '../../stores/clickhouse-time';

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

/** Contacts for users 1-3 of every hostile text (user 0's come from `_user_data`). */
const seeded = (): ContactStates => {
  const states: ContactStates = new Map();
  const message: WriterMessage = { kind: 'contacts', ...header, failed: 0, contacts: hostile.flatMap((text) => [1, 2, 3].map((n) => ({ userId: `user ${text} ${n}`, attributes: {} }))) };
  planWrites({ messages: [{ seq: 1, message }], states, storedBefore: () => false });
  return states;
};

const plain = (plan: ReturnType<typeof planWrites>) => ({
  events: plan.events.map((e) => ({ ...e, row: Buffer.from(e.row).toString() })),
  triggers: plan.triggers.map((t) => ({ ...t, data: t.data.toString() })),
  usage: plan.usage, changedUsers: [...plan.changedUsers.values()].map((u) => ({ ...u, datasources: [...u.datasources] })),
});

describe('spec 2 §3: eventRows frames plan as the earlier events message', () => {
  test('round trip: header, ids, _user_data, the row and trigger texts the gateway serialized', () => {
    const message = eventsMessage();
    const frame = frameOf(message);
    if (frame.kind !== 'eventRows') throw new Error(`decoded as ${frame.kind}`);
    expect({ ...frame, items: undefined }).toEqual({ kind: 'eventRows', ...header, failed: 2, items: undefined });
    expect(frame.items.map((i) => [i.userId, i.eventId, i.userData])).toEqual(message.items.map(({ event, userData }) => [event.userId, event.eventId, userData]));
    message.items.forEach(({ event }, i) => {
      const item = frame.items[i];
      const audience = audienceId('p', event.userId);
      // Byte for byte what JSON.stringify made of the row and the trigger before frames.
      expect(Buffer.from(item?.row ?? []).toString()).toBe(referenceRow(audience, event));
      expect(item?.trigger ? Buffer.from(item.trigger).toString() : null).toBe(event.triggers ? referenceTrigger(audience, event) : null);
    });
  });

  test('the same events, duplicates, skips, versions, rows, triggers and usage as the earlier format, for hostile strings', () => {
    const message = eventsMessage();
    const old = planWrites({ messages: [{ seq: 7, message }], states: seeded(), storedBefore: (_ds, id) => id === 'event plain 4' });
    const framed = planWrites({ messages: [{ seq: 7, message: frameOf(message) }], states: seeded(), storedBefore: (_ds, id) => id === 'event plain 4' });
    expect(plain(framed)).toEqual(plain(old));
    expect(framed.usage).toEqual([expect.objectContaining({ endpoint: 'events', requests: 1, accepted: hostile.length, duplicates: 1, skipped: 1, failed: 2 })]);
    expect(framed.events.map((e) => e.version)).toEqual(hostile.map((_, i) => versionOf(7, i)));
  });

  test('every parameter type, no parameter, and the earlier format: the same texts as JSON.stringify of the row and the trigger', () => {
    const event: EventRecord = {
      userId: 'u "1"', eventId: 'e\\1', eventType: 'a-b_c', eventDate: '2026-11-27T07:00:00.000Z', triggers: true,
      parameters: { s: { type: 'string', value: '\u0000\u001f"\\/' }, n: { type: 'number', value: -0.5e-7 }, b: { type: 'boolean', value: true }, d: { type: 'date', value: '2026-01-02T03:04:05.678Z' },
        a: { type: 'array', value: ['x', '"'] }, o: { type: 'object', value: { k: ['v', 1, null] } }, g: { type: 'geopoint', value: { lat: -1.5, lon: 2 } } },
    };
    const empty: EventRecord = { ...event, parameters: {} };
    for (const e of [event, empty]) {
      const framed = frameOf({ kind: 'events', ...header, failed: 0, items: [{ event: e, userData: null }] });
      const item = framed.kind === 'eventRows' ? framed.items[0] : undefined;
      expect(Buffer.from(item?.row ?? []).toString()).toBe(referenceRow(audienceId('p', e.userId), e));
      expect(Buffer.from(item?.trigger ?? []).toString()).toBe(referenceTrigger(audienceId('p', e.userId), e));
      const plan = planWrites({ messages: [{ seq: 1, message: { kind: 'events', ...header, failed: 0, items: [{ event: e, userData: { userId: e.userId, attributes: {} } }] } }], states: new Map(), storedBefore: () => false });
      expect(Buffer.from(plan.events[0]?.row ?? []).toString()).toBe(referenceRow(audienceId('p', e.userId), e));
    }
  });

  test('a row with its version appended is the JSONCompactEachRow array of the event', () => {
    const message = eventsMessage();
    const plan = planWrites({ messages: [{ seq: 3, message: frameOf(message) }], states: seeded(), storedBefore: () => false });
    const first = plan.events[0];
    const row = JSON.parse(`${Buffer.from(first?.row ?? []).toString()}${first?.version}]`) as unknown[];
    expect(row).toEqual(['p', 'd', 'purchase', 'user plain 0', audienceId('p', 'user plain 0'), 'event plain 0', '2026-11-27 07:59:00.123', '2026-11-27 08:00:00.000', 'api',
      { text: 'plain' }, { amount: 0 }, { ok: false }, { when: '2026-11-01 10:00:00.000' }, { tags: ['plain'] }, { obj: '{"text":"plain"}' }, versionOf(3, 0)]);
  });

  test('spec 2 §4 rule 6: the triggers message holds the same JSON bytes as before, each trigger-worthy event once', () => {
    const message = eventsMessage();
    const plan = planWrites({ messages: [{ seq: 5, message: frameOf(message) }], states: seeded(), storedBefore: () => false });
    expect(plan.triggers).toHaveLength(1);
    const stored = message.items.slice(0, hostile.length).filter(({ event }) => event.triggers);
    const before: AutomationTriggers = {
      project: 'p', datasource: 'd', receivedAt,
      triggers: stored.map(({ event }) => ({
        audienceId: audienceId('p', event.userId), _user_id: event.userId, _event_id: event.eventId, _event_type: event.eventType, _event_date: event.eventDate,
        _event_parameters: Object.fromEntries(Object.entries(event.parameters).map(([k, v]) => [k, v.value])),
      })),
    };
    expect(plan.triggers[0]?.msgId).toBe('ingest-5');
    expect(plan.triggers[0]?.data.toString()).toBe(JSON.stringify(before));
  });

  test('a replayed frame (the same bytes, the same sequence) plans the same rows', () => {
    const bytes = encodeEventRows(eventsMessage(), 512 * 1024)[0] as Buffer;
    const once = plain(planWrites({ messages: [{ seq: 9, message: decodeIngest(bytes) }], states: seeded(), storedBefore: () => false }));
    const again = plain(planWrites({ messages: [{ seq: 9, message: decodeIngest(Buffer.from(bytes)) }], states: seeded(), storedBefore: () => false }));
    expect(again).toEqual(once);
  });
});

describe('messages of the earlier format on the stream (a rolling upgrade)', () => {
  test('an events, contacts, delete or rejected message as one JSON object reads as before', () => {
    const messages: WriterMessage[] = [
      eventsMessage(),
      { kind: 'contacts', ...header, failed: 0, contacts: [{ userId: 'u', attributes: { a: { type: 'string', value: 'x' }, b: null } }] },
      { kind: 'delete', ...header, userId: 'u' },
      { kind: 'rejected', projectId: 'p', datasourceId: 'd', receivedAt, endpoint: 'events', failed: 3 },
    ];
    for (const m of messages) expect(decodeIngest(Buffer.from(JSON.stringify(m)))).toEqual(m);
  });

  test('a run mixing both formats stores each event id once (the earlier message first)', () => {
    const message = eventsMessage();
    const plan = planWrites({ messages: [{ seq: 1, message }, { seq: 2, message: frameOf(message) }], states: seeded(), storedBefore: () => false });
    expect(plan.events.map((e) => e.version)).toEqual(hostile.map((_, i) => versionOf(1, i)));
    // Duplicates: one within each request, and every stored event of the first again in the second.
    expect(plan.usage[0]).toEqual(expect.objectContaining({ requests: 2, accepted: hostile.length, duplicates: hostile.length + 2, skipped: 2 }));
  });
});

describe('unreadable frames are refused whole (the writer terminates them, nothing half-applied)', () => {
  const good = (): string => (encodeEventRows(eventsMessage(), 512 * 1024)[0] as Buffer).toString();
  const lines = (): string[] => good().split('\n');
  test.each([
    ['a header that is not JSON', () => `{"kind":"eventRows",\n[1,\n`],
    ['a header of another shape', () => `{"kind":"eventRows","orgId":"o"}\n[1,\n`],
    ['a missing row line', () => `${lines().slice(0, -2).join('\n')}\n`],
    ['bytes after the last line', () => `${good()}[1,\n`],
    ['a row that is not a row head', () => lines().map((l, i) => (i === 1 ? l.replace(/,$/, ']') : l)).join('\n')],
    ['a trigger line missing', () => lines().filter((l) => !l.startsWith('{"audienceId"')).join('\n')],
    ['not JSON at all', () => 'garbage'],
    ['an earlier-format message of an unknown kind', () => JSON.stringify({ kind: 'other', ...header })],
  ])('%s', (_what, text) => {
    let thrown: unknown;
    try { decodeIngest(Buffer.from(text())); } catch (err) { thrown = err; }
    expect(isUnreadableBusMessage(thrown)).toBe(true);
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

  test('an event too large on its own is PAYLOAD_TOO_LARGE naming it and the limit', () => {
    let thrown: unknown;
    try { encodeEventRows(big(), 5000); } catch (err) { thrown = err; }
    expect(isAppError(thrown) && thrown.code).toBe('PAYLOAD_TOO_LARGE');
    expect((thrown as Error).message).toMatch(/the event "e0" is \d+ bytes as stored, more than the 5000 bytes/);
  });
});
