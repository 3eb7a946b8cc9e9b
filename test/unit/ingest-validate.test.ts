// Per-item validation of ingestion batches (spec 2 §2.1, §2.2; DESIGN §5 specs and strict
// datasources): native attribute rules, custom names and types, event fields, nothing repaired.
import { BatchSpecs, validateContact, validateEvent, type AttributeType, type Datasource, type SpecView } from '../../core/ingest';
import { parseInstant } from '../../core/ingest/values';

const datasource = (strict: boolean): Datasource => ({ id: 'd', orgId: 'o', projectId: 'p', name: 'd', strict, createdAt: '2026-01-01T00:00:00.000Z' });

function view(strict: boolean, attributes: Record<string, AttributeType> = {}, events: Record<string, Record<string, AttributeType>> = {}): SpecView {
  return {
    datasource: datasource(strict),
    attributeType: (name) => (Object.hasOwn(attributes, name) ? attributes[name] : undefined),
    hasEventType: (t) => Object.hasOwn(events, t),
    parameterType: (t, name) => (Object.hasOwn(events, t) && Object.hasOwn(events[t] ?? {}, name) ? events[t]?.[name] : undefined),
  };
}

const NOW = Date.parse('2026-11-23T12:00:00.000Z');

describe('spec 2 §2.1: contact items', () => {
  test('native attributes are typed; custom values keep their JSON type', () => {
    const specs = new BatchSpecs(view(false));
    const r = validateContact({ _user_id: 'u', _email: 'a@b.io', _date_birthday: '2000-02-29', _date_imported: '2026-01-02T03:04:05+02:00', score: 1.5, tags: ['a'], meta: { k: [1] }, flag: false, gone: null }, specs);
    expect(r.outcome).toEqual({ status: 'success', _user_id: 'u' });
    expect(r.patch?.attributes).toEqual({
      _email: { type: 'string', value: 'a@b.io' }, _date_birthday: { type: 'date', value: '2000-02-29' },
      _date_imported: { type: 'date', value: '2026-01-02T01:04:05.000Z' },
      score: { type: 'number', value: 1.5 }, tags: { type: 'array', value: ['a'] }, meta: { type: 'object', value: { k: [1] } }, flag: { type: 'boolean', value: false }, gone: null,
    });
    expect([...specs.news.attributes]).toEqual([['score', 'number'], ['tags', 'array'], ['meta', 'object'], ['flag', 'boolean']]);
  });

  test.each([
    ['_user_id', { _user_id: '' }, /1 to 256/],
    ['_user_id', { _user_id: 'a\u0000b' }, /control/],
    ['_user_id', { _user_id: 7 }, /string/],
    ['_email', { _user_id: 'u', _email: 'nope' }, /email/],
    ['_phone_mobile', { _user_id: 'u', _phone_mobile: '+49 151 12345678' }, /E\.164/],
    ['_phone_mobile', { _user_id: 'u', _phone_mobile: '+4900000' }, /E\.164/],
    ['_country_code', { _user_id: 'u', _country_code: 'Germany' }, /alpha-2/],
    ['_client_tags', { _user_id: 'u', _client_tags: ['ok', ''] }, /1 to 128/],
    ['_date_birthday', { _user_id: 'u', _date_birthday: '2001-02-29' }, /calendar date/],
    ['_date_imported', { _user_id: 'u', _date_imported: '2026-01-02T03:04:05' }, /offset/],
    ['_geopoint', { _user_id: 'u', _geopoint: { lat: 1 } }, /lat.*lon/],
    ['_geopoint', { _user_id: 'u', _geopoint: { lat: 0, lon: 181 } }, /-180/],
    ['_first_name', { _user_id: 'u', _first_name: 'a\ud800' }, /surrogate/],
    ['_nickname', { _user_id: 'u', _nickname: 'x' }, /reserved/],
    ['9lives', { _user_id: 'u', '9lives': 1 }, /attribute name/],
    ['my-attr', { _user_id: 'u', 'my-attr': 1 }, /attribute name/],
  ])('%s: %j is an item error', (key, item, message) => {
    const r = validateContact(item, new BatchSpecs(view(false)));
    expect(r.patch).toBeNull();
    expect(r.outcome.status).toBe('error');
    expect(r.outcome.errors?.[key]?.[0]).toMatch(message);
  });

  test('client-chosen names such as "__proto__" and "constructor" are plain keys (issue 14 class: no 500, no silent drop)', () => {
    const item = JSON.parse('{"_user_id":"u","__proto__":{"x":1},"constructor":2,"toString":"s"}') as unknown;
    const r = validateContact(item, new BatchSpecs(view(false)));
    expect(r.outcome.status).toBe('error');
    expect(Object.keys(r.outcome.errors ?? {})).toEqual(['__proto__']);
    const ok = validateContact(JSON.parse('{"_user_id":"u","constructor":2,"toString":"s"}') as unknown, new BatchSpecs(view(false)));
    expect(ok.patch?.attributes).toEqual({ constructor: { type: 'number', value: 2 }, toString: { type: 'string', value: 's' } });
    const event = validateEvent(JSON.parse('{"_user_id":"u","_event_id":"e","_event_type":"t","_event_parameters":{"__proto__":1}}') as unknown, new BatchSpecs(view(false)), NOW);
    expect(Object.keys(event.outcome.errors ?? {})).toEqual(['_event_parameters.__proto__']);
  });

  test('the phone hint names the E.164 form when the number is valid in another form', () => {
    const r = validateContact({ _user_id: 'u', _phone_mobile: '+49 151 12345678' }, new BatchSpecs(view(false)));
    expect(r.outcome.errors?.['_phone_mobile']?.[0]).toContain('+4915112345678');
  });

  test('a declared type is enforced; an inferred one from an earlier item of the batch too', () => {
    const specs = new BatchSpecs(view(false, { signup: 'date' }));
    expect(validateContact({ _user_id: 'u', signup: '2026-01-01' }, specs).outcome.status).toBe('success');
    expect(validateContact({ _user_id: 'u', signup: 'soon' }, specs).outcome.errors?.['signup']?.[0]).toMatch(/date/);
    expect(validateContact({ _user_id: 'u', level: 3 }, specs).outcome.status).toBe('success');
    expect(validateContact({ _user_id: 'u', level: 'three' }, specs).outcome.errors?.['level']?.[0]).toMatch(/number/);
  });

  test('a failed item records no new names', () => {
    const specs = new BatchSpecs(view(false));
    validateContact({ _user_id: 'u', fresh: 1, _email: 'bad' }, specs);
    expect(specs.news.attributes.size).toBe(0);
  });

  test('strict datasources refuse unknown custom names but accept natives and declared names', () => {
    const specs = new BatchSpecs(view(true, { plan: 'string' }));
    expect(validateContact({ _user_id: 'u', _email: 'a@b.io', plan: 'x' }, specs).outcome.status).toBe('success');
    expect(validateContact({ _user_id: 'u', plna: 'x' }, specs).outcome.errors?.['plna']?.[0]).toMatch(/strict/);
    // Clearing an unknown name is refused too: it cannot exist.
    expect(validateContact({ _user_id: 'u', plna: null }, specs).outcome.status).toBe('error');
  });
});

describe('spec 2 §2.2: event items', () => {
  const base = { _user_id: 'u', _event_id: 'e', _event_type: 'purchase', _event_parameters: { amount: 5 } };

  test('_event_date defaults to reception and decides the trigger window', () => {
    const specs = new BatchSpecs(view(false));
    const omitted = validateEvent(base, specs, NOW);
    expect(omitted.event).toMatchObject({ eventDate: '2026-11-23T12:00:00.000Z', triggers: true, parameters: { amount: { type: 'number', value: 5 } } });
    expect(omitted.outcome).toEqual({ status: 'success', _user_id: 'u', _event_id: 'e' });
    expect(validateEvent({ ...base, _event_date: '2026-11-23T13:01:00+00:00' }, specs, NOW).event?.triggers).toBe(false);
    expect(validateEvent({ ...base, _event_date: '2026-11-23T14:00:00+01:00' }, specs, NOW).event?.triggers).toBe(true);
  });

  test('_user_data becomes a contact patch for the same user', () => {
    const r = validateEvent({ ...base, _user_data: { _first_name: 'Ada', plan: null } }, new BatchSpecs(view(false)), NOW);
    expect(r.userData).toEqual({ userId: 'u', attributes: { _first_name: { type: 'string', value: 'Ada' }, plan: null } });
  });

  test.each([
    ['_event_id', { ...base, _event_id: undefined }, /required/],
    ['_event_type', { ...base, _event_type: 'has space' }, /letters/],
    ['_event_parameters', { ...base, _event_parameters: 'x' }, /object/],
    ['_event_parameters.p', { ...base, _event_parameters: { p: null } }, /null/],
    ['_event_parameters.bad-name', { ...base, _event_parameters: { 'bad-name': 1 } }, /parameter name/],
    ['_event_date', { ...base, _event_date: 1700000000000 }, /ISO 8601/],
    ['_event_date', { ...base, _event_date: '1899-12-31T23:59:59Z' }, /1900/],
    ['_user_data._user_id', { ...base, _user_data: { _user_id: 'other' } }, /must not be given/],
    ['_user_data', { ...base, _user_data: [] }, /object/],
    ['extra', { ...base, extra: 1 }, /not an event field/],
  ])('%s is an item error', (key, item, message) => {
    const r = validateEvent(item, new BatchSpecs(view(false)), NOW);
    expect(r.event).toBeNull();
    expect(r.outcome.errors?.[key]?.[0]).toMatch(message);
  });

  test('strict: unknown event types and parameters are refused; declared parameter types enforced', () => {
    const specs = new BatchSpecs(view(true, {}, { purchase: { amount: 'number' } }));
    expect(validateEvent(base, specs, NOW).outcome.status).toBe('success');
    expect(validateEvent({ ...base, _event_type: 'refund' }, specs, NOW).outcome.errors?.['_event_type']?.[0]).toMatch(/strict/);
    expect(validateEvent({ ...base, _event_parameters: { coupon: 'x' } }, specs, NOW).outcome.errors?.['_event_parameters.coupon']?.[0]).toMatch(/strict/);
    expect(validateEvent({ ...base, _event_parameters: { amount: '5' } }, specs, NOW).outcome.errors?.['_event_parameters.amount']?.[0]).toMatch(/number/);
  });
});

describe('date-time parsing is exact', () => {
  test.each([
    ['2026-11-23T10:00:00Z', '2026-11-23T10:00:00.000Z'],
    ['2026-11-23T10:00Z', '2026-11-23T10:00:00.000Z'],
    ['2026-11-23T10:00:00.123456+05:30', '2026-11-23T04:30:00.123Z'],
    ['2026-11-23T24:00:00Z', null],
    ['2026-11-31T10:00:00Z', null],
    ['2026-11-23 10:00:00Z', null],
    ['2026-11-23T10:00:00', null],
  ])('%s → %s', (input, expected) => {
    expect(parseInstant(input)).toBe(expected);
  });
});
