// Limits of ingested values and batches (spec 2 §2.1, §2.2, §3, §7): nesting depth, numbers
// JSON.parse would change, custom names per item and per datasource, a request too large for
// one bus message, and event ids of a deleted contact. No engine: pure functions.
import { BatchSpecs, capMessages, planWrites, unfaithfulByItem, unfaithfulNumbers, validateContact, validateEvent, type AttributeType, type ContactStates, type Datasource, type IngestMessage, type SpecView } from '../../core/ingest';
import { applyPatch, versionOf } from '../../core/ingest/merge';
import { numberProblem } from '../../core/ingest/numbers';
import { INFERRED_CAPS, LIMITS } from '../../core/ingest/values';
import { isAppError } from '../../core/errors';
import { bodyLimitOf } from '../../infra/pipelined-jetstream';
import { MESSAGE_CAP, splitIngestMessage } from '../../infra/bus/ingest-bus';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const datasource: Datasource = { id: 'd', orgId: 'o', projectId: 'p', name: 'd', strict: false, createdAt: '2026-01-01T00:00:00.000Z' };
function view(attributes: Record<string, AttributeType> = {}): SpecView {
  return { datasource, attributeType: (name) => attributes[name], hasEventType: () => false, parameterType: () => undefined };
}
const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
};

describe('spec 2 §2.1: nesting depth of object values', () => {
  test(`a value nested ${LIMITS.depth} levels is stored; deeper, and 100,000 levels, is an item error naming the limit, not a stack overflow`, () => {
    expect(validateContact({ _user_id: 'u', deep: nested(LIMITS.depth) }, new BatchSpecs(view())).outcome.status).toBe('success');
    for (const depth of [LIMITS.depth + 1, 5_000, 100_000]) {
      const contact = validateContact({ _user_id: 'u', deep: nested(depth) }, new BatchSpecs(view()));
      expect(contact.outcome.errors).toEqual({ deep: [`must nest objects and arrays at most ${LIMITS.depth} levels deep`] });
      const event = validateEvent({ _user_id: 'u', _event_id: 'e', _event_type: 't', _event_parameters: { deep: nested(depth) }, _user_data: { deep: nested(depth) } }, new BatchSpecs(view()), NOW);
      expect(Object.keys(event.outcome.errors ?? {}).sort()).toEqual(['_event_parameters.deep', '_user_data.deep']);
    }
  });

  test('JSON.parse itself reads a body nested a million levels (the guard parses it; validation refuses the item)', () => {
    const text = `[{"_user_id":"u","deep":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}]`;
    const body = JSON.parse(text) as unknown[];
    expect(validateContact(body[0], new BatchSpecs(view())).outcome.errors?.['deep']?.[0]).toMatch(/at most 32 levels/);
  });
});

describe('spec 2 §2.1: numbers are stored as sent or refused', () => {
  test.each([
    ['9007199254740993', /beyond 2\^53 \(9007199254740991\): a 64-bit float would store 9007199254740992/],
    ['123456789012345678901234567890', /beyond 2\^53.*1\.2345678901234568e\+29/],
    ['-9007199254740993', /beyond 2\^53/],
    ['-0', /stored as 0/],
    ['-0.0e5', /stored as 0/],
    ['1e400', /beyond the range/],
    ['1e-400', /more precision/],
    ['0.10000000000000000001', /more precision.*stored as 0\.1;/],
  ])('%s is refused', (literal, message) => {
    expect(numberProblem(literal)).toMatch(message);
  });

  test.each(['0', '9007199254740991', '-9007199254740991', '1.5', '0.1', '1e21', '1E+21', '1.50e2', '100', '-12.25', '5e-324', '1.7976931348623157e308', '0.000001'])('%s is kept', (literal) => {
    expect(numberProblem(literal)).toBeNull();
  });

  test('found with their paths in the raw text, strings and keys ignored', () => {
    const text = '[{"_user_id":"9007199254740993","a":1,"big":9007199254740993},{"x":{"y":[1, -0, "-0"]},"k\\"9007199254740993":2}, 3]';
    expect(unfaithfulNumbers(text).map((n) => n.path)).toEqual([[0, 'big'], [1, 'x', 'y', 1]]);
    expect([...unfaithfulByItem(text).keys()]).toEqual([0, 1]);
    // A string ending in an escaped backslash ends at its quote; a key is decoded for the path.
    expect(unfaithfulNumbers('[{"s":"a\\\\","k\\\\\\u00e9":[-0]}]').map((n) => n.path)).toEqual([[0, 'k\\\u00e9', 0]]);
  });

  test('the item is refused naming the attribute, parameter and path; other items stand', () => {
    const text = '[{"_user_id":"a","score":9007199254740993},{"_user_id":"b","score":2},{"_user_id":"c","meta":{"ids":[1,123456789012345678901234567890]}}]';
    const items = JSON.parse(text) as unknown[];
    const numbers = unfaithfulByItem(text);
    const specs = new BatchSpecs(view());
    const outcomes = items.map((item, i) => validateContact(item, specs, numbers.get(i)).outcome);
    expect(outcomes.map((o) => o.status)).toEqual(['error', 'success', 'error']);
    expect(outcomes[0]?.errors?.['score']?.[0]).toMatch(/^is 9007199254740993, beyond 2\^53/);
    expect(outcomes[2]?.errors?.['meta']?.[0]).toMatch(/^meta\.ids\[1\] is 123456789012345678901234567890, beyond 2\^53/);
    const eventText = '[{"_user_id":"a","_event_id":"e","_event_type":"t","_event_parameters":{"n":-0},"_user_data":{"big":18446744073709551615}}]';
    const event = validateEvent((JSON.parse(eventText) as unknown[])[0], new BatchSpecs(view()), NOW, undefined, unfaithfulByItem(eventText).get(0));
    expect(Object.keys(event.outcome.errors ?? {}).sort()).toEqual(['_event_parameters.n', '_user_data.big']);
  });
});

describe('spec 2 §2.1: custom names per item and per datasource', () => {
  const many = (n: number, prefix = 'a'): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));

  test(`${LIMITS.attributesPerItem} custom attributes per item pass; one more is an item error naming the cap, and nothing of it is inferred`, () => {
    const specs = new BatchSpecs(view());
    expect(validateContact({ _user_id: 'u', _email: 'a@b.io', ...many(LIMITS.attributesPerItem) }, specs).outcome.status).toBe('success');
    const over = new BatchSpecs(view());
    const r = validateContact({ _user_id: 'u', ...many(10_000) }, over);
    expect(r.outcome.errors).toEqual({ _item: [`has 10000 custom attributes: at most ${LIMITS.attributesPerItem} per item`] });
    expect(over.news.attributes.size).toBe(0);
    const event = validateEvent({ _user_id: 'u', _event_id: 'e', _event_type: 't', _event_parameters: many(LIMITS.parametersPerItem + 1), _user_data: many(LIMITS.attributesPerItem + 1) }, new BatchSpecs(view()), NOW);
    expect(Object.keys(event.outcome.errors ?? {}).sort()).toEqual(['_event_parameters', '_user_data']);
  });

  test('names the spec store refused at the datasource cap fail the items using them; known names do not', () => {
    const specs = new BatchSpecs(view({ known: 'number' }), { attributes: new Set(['fresh']), eventTypes: new Set(['newtype']), parameters: new Set(['t.p']) });
    expect(validateContact({ _user_id: 'u', fresh: 1 }, specs).outcome.errors).toEqual({ fresh: [capMessages.attribute] });
    expect(validateContact({ _user_id: 'u', known: 1, other: 2 }, specs).outcome.status).toBe('success');
    expect(capMessages.attribute).toContain(String(INFERRED_CAPS.attributes));
    const e = validateEvent({ _user_id: 'u', _event_id: 'e', _event_type: 'newtype', _event_parameters: {} }, specs, NOW);
    expect(e.outcome.errors).toEqual({ _event_type: [capMessages.eventType] });
    const p = validateEvent({ _user_id: 'u', _event_id: 'e', _event_type: 't', _event_parameters: { p: 1, q: 2 } }, specs, NOW);
    expect(p.outcome.errors).toEqual({ '_event_parameters.p': [capMessages.parameter] });
  });
});

describe('spec 2 §7: a request larger than one bus message', () => {
  const header = { orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt: '2026-11-23T12:00:00.000Z' };
  const contacts = Array.from({ length: 100 }, (_, i) => ({ userId: `u${i}`, attributes: { note: { type: 'string' as const, value: 'x'.repeat(8000) } } }));

  test('the limit is half the server max_payload, at most 512 KiB', () => {
    expect(bodyLimitOf(undefined, MESSAGE_CAP)).toBe(MESSAGE_CAP);
    expect(bodyLimitOf(1024 * 1024, MESSAGE_CAP)).toBe(512 * 1024);
    expect(bodyLimitOf(8 * 1024 * 1024, MESSAGE_CAP)).toBe(MESSAGE_CAP);
    expect(bodyLimitOf(65536, MESSAGE_CAP)).toBe(32768);
  });

  test('parts under the limit, items whole and in order, the failed count once, later parts numbered', () => {
    const parts = splitIngestMessage({ kind: 'contacts', ...header, contacts, failed: 3 }, 100_000);
    expect(parts.length).toBeGreaterThan(8);
    const decoded = parts.map((b) => { expect(b.length).toBeLessThanOrEqual(100_000); return JSON.parse(b.toString()) as { contacts: Array<{ userId: string }>; failed: number; part?: number } });
    expect(decoded.flatMap((m) => m.contacts.map((c) => c.userId))).toEqual(contacts.map((c) => c.userId));
    expect(decoded.map((m) => m.failed)).toEqual([3, ...decoded.slice(1).map(() => 0)]);
    expect(decoded.map((m) => m.part)).toEqual([undefined, ...decoded.slice(1).map((_, i) => i + 1)]);
  });

  test('an item too large on its own is PAYLOAD_TOO_LARGE naming it and the limit', () => {
    let thrown: unknown;
    try { splitIngestMessage({ kind: 'contacts', ...header, contacts, failed: 0 }, 5000); } catch (err) { thrown = err; }
    expect(isAppError(thrown) && thrown.code).toBe('PAYLOAD_TOO_LARGE');
    expect((thrown as Error).message).toMatch(/the contact "u0" is \d+ bytes as stored, more than the 5000 bytes/);
  });

  test('the writer counts a split request once', () => {
    const messages: Array<{ seq: number; message: IngestMessage }> = splitIngestMessage({ kind: 'contacts', ...header, contacts, failed: 2 }, 100_000)
      .map((b, i) => ({ seq: i + 1, message: JSON.parse(b.toString()) as IngestMessage }));
    const plan = planWrites({ messages, states: new Map(), storedBefore: () => false });
    expect(plan.usage).toEqual([expect.objectContaining({ endpoint: 'contacts', requests: 1, accepted: 100, failed: 2 })]);
  });
});

describe('spec 2 §3: event ids of a deleted contact', () => {
  const at = '2026-11-23T10:00:00.000Z';
  const header = { orgId: 'o', projectId: 'p', datasourceId: 'd', receivedAt: at };
  const event = (userId: string, eventId: string) => ({ userId, eventId, eventType: 'view', eventDate: at, parameters: {}, triggers: false });
  const live = (): ContactStates => new Map([['p\u0000u', new Map([['d', applyPatch(undefined, 'd', { userId: 'u', attributes: {} }, 1, at)]])]]);

  test('re-sent after the deletion with _user_data, an old id of the contact is a new event of the re-created contact; its id is released', () => {
    const plan = planWrites({
      states: live(), storedBefore: (_ds, id) => id === 'old' || id === 'other', eventsOfDeleted: new Map([['d\u0000u', ['old']]]),
      messages: [
        { seq: 1, message: { kind: 'delete', ...header, userId: 'u' } },
        { seq: 2, message: { kind: 'events', ...header, failed: 0, items: [
          { event: event('u', 'old'), userData: { userId: 'u', attributes: {} } },
          { event: event('u', 'other'), userData: null },
        ] } },
      ],
    });
    expect(plan.releasedKeys).toEqual([{ datasourceId: 'd', eventId: 'old' }]);
    expect(plan.events.map((e) => e.eventId)).toEqual(['old']);
    // An id another contact's event holds is still a duplicate.
    expect(plan.usage.find((u) => u.endpoint === 'events')).toEqual(expect.objectContaining({ accepted: 1, duplicates: 1 }));
  });

  test('the same within one run: an event stored, its contact deleted, the event re-sent', () => {
    const plan = planWrites({
      states: live(), storedBefore: () => false,
      messages: [
        { seq: 1, message: { kind: 'events', ...header, failed: 0, items: [{ event: event('u', 'e1'), userData: null }] } },
        { seq: 2, message: { kind: 'delete', ...header, userId: 'u' } },
        { seq: 3, message: { kind: 'events', ...header, failed: 0, items: [{ event: event('u', 'e1'), userData: { userId: 'u', attributes: {} } }] } },
      ],
    });
    // Stored once, as the re-sent event (seq 3): the first one left with its contact, id included.
    expect(plan.events.map((e) => [e.eventId, e.version])).toEqual([['e1', versionOf(3, 0)]]);
    expect(plan.usage.find((u) => u.endpoint === 'events')).toEqual(expect.objectContaining({ duplicates: 0 }));
  });
});
