// The ingestion POST body (spec 2 §4 rule 1, §7): its shape is checked with the batch schema
// (schemas/ingest.ts batchSchema, core/ingest/batch.ts), with the 400 messages the router
// answered before it did (pinned here as text).
import { AppError } from '../../core/errors';
import { batchItems } from '../../core/ingest/batch';
import { NATIVE_ATTRIBUTES } from '../../core/ingest/values';
import { contactItemSchema, eventItemSchema, MAX_BATCH_ITEMS, NATIVE_NAMES } from '../../schemas/ingest';
import { BatchSpecs, validateContact, validateEvent, type SpecView } from '../../core/ingest';

function refusal(body: unknown): { code: string; message: string } {
  try {
    batchItems(body);
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('accepted');
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ _user_id: `u${i}` }));
const notArray = { code: 'BODY_NOT_ARRAY', message: 'the body must be a top-level JSON array of 1 to 100 items, even for one item (spec 2 §4 rule 1)' };

describe('spec 2 §4 rule 1, §7: the batch body is checked with schemas/ingest.ts batchSchema', () => {
  test.each([
    ['an object', { _user_id: 'a' }],
    ['a string', 'hello'],
    ['a number', 1],
    ['null', null],
    ['no body', undefined],
  ])('%s is a 400 BODY_NOT_ARRAY with the message of before', (_name, body) => {
    expect(refusal(body)).toEqual(notArray);
  });

  test('an empty array and 101 items are 400 WRONG_SHAPE with the messages of before', () => {
    expect(refusal([])).toEqual({ code: 'WRONG_SHAPE', message: 'the array is empty: send 1 to 100 items' });
    expect(refusal(items(101))).toEqual({ code: 'WRONG_SHAPE', message: 'the array has 101 items: send at most 100 per request' });
  });

  test('1 to 100 items of any kind pass (each item is validated on its own afterwards)', () => {
    const body = [...items(98), 'not an object', null];
    expect(batchItems(body)).toBe(body);
    expect(batchItems(items(1))).toHaveLength(1);
  });

  test('one source per limit: MAX_BATCH_ITEMS items pass, one more is refused', () => {
    expect(batchItems(items(MAX_BATCH_ITEMS))).toHaveLength(MAX_BATCH_ITEMS);
    expect(refusal(items(MAX_BATCH_ITEMS + 1)).code).toBe('WRONG_SHAPE');
  });
});

describe('spec 2 §2: the item rules name what the schemas define', () => {
  test('the reserved attributes are the contact schema\'s properties but _user_id, in its order', () => {
    expect(Object.keys(NATIVE_ATTRIBUTES)).toEqual([...NATIVE_NAMES]);
    expect(Object.keys(contactItemSchema.properties)).toEqual(['_user_id', ...NATIVE_NAMES]);
  });

  test('an event takes the fields of the event schema and no other; its type must match the schema\'s pattern', () => {
    const event = { _user_id: 'u', _event_id: 'e', _event_type: 'purchase', _event_date: '2026-11-26T12:00:00Z', _event_parameters: {} };
    const errorsOf = (item: Record<string, unknown>) => Object.keys(validateEvent(item, new BatchSpecs(specView), Date.parse('2026-11-26T12:00:00Z')).outcome.errors ?? {});
    expect(Object.keys(eventItemSchema.properties)).toEqual(expect.arrayContaining(Object.keys(event)));
    expect(errorsOf(event)).toEqual([]);
    expect(errorsOf({ ...event, _not_in_schema: 1 })).toEqual(['_not_in_schema']);
    const pattern = new RegExp(eventItemSchema.properties._event_type.pattern);
    expect(pattern.test('no spaces allowed')).toBe(false);
    expect(errorsOf({ ...event, _event_type: 'no spaces allowed' })).toEqual(['_event_type']);
  });
});

const specView: SpecView = {
  datasource: { id: 'd', orgId: 'o', projectId: 'p', name: 'd', strict: false, createdAt: '2026-01-01T00:00:00.000Z' },
  attributeType: () => undefined, hasEventType: () => false, parameterType: () => undefined,
};
const contactErrors = (item: Record<string, unknown>) => validateContact(item, new BatchSpecs(specView)).outcome.errors ?? {};

describe('spec 2 §2.1: the lengths the contact schema states are the ones validation enforces (one source)', () => {
  const p = contactItemSchema.properties;
  test.each([
    ['_user_id', p._user_id.maxLength],
    ['_first_name', p._first_name.maxLength],
    ['_last_name', p._last_name.maxLength],
  ])('%s: at the schema\'s maxLength it passes, one more fails', (field, max) => {
    expect(contactErrors({ _user_id: 'u', [field]: 'x'.repeat(max) })).toEqual({});
    expect(Object.keys(contactErrors({ _user_id: 'u', [field]: 'x'.repeat(max + 1) }))).toEqual([field]);
  });

  test('_email and the tags of _client_tags', () => {
    const tooLong = `must be at most ${p._email.maxLength} characters`;
    expect(contactErrors({ _user_id: 'u', _email: 'a'.repeat(p._email.maxLength) })['_email']).not.toContain(tooLong);
    expect(contactErrors({ _user_id: 'u', _email: 'a'.repeat(p._email.maxLength + 1) })['_email']).toEqual([tooLong]);
    const tagMax = p._client_tags.items.maxLength;
    expect(contactErrors({ _user_id: 'u', _client_tags: ['t'.repeat(tagMax)] })).toEqual({});
    expect(Object.keys(contactErrors({ _user_id: 'u', _client_tags: ['t'.repeat(tagMax + 1)] }))).toEqual(['_client_tags']);
  });
});
