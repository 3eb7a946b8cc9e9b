// Value rules of ingested attributes and event parameters: the native (`_`) attributes and
// their types (spec 2 §2.1, the native attributes Grammar B filters on, spec 3 §2.3), the
// names custom attributes may take, and the check of a value against a type. Nothing is
// repaired: a value that cannot be stored faithfully is an item error naming why.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { contactItemSchema, eventItemSchema, type NATIVE_NAMES } from '../../schemas/ingest';
import type { AttributeType, TypedValue } from './types';

/** The type of each reserved attribute: exactly the names of the contact schema (schemas/ingest.ts), checked by the compiler. */
export const NATIVE_ATTRIBUTES: Readonly<Record<string, AttributeType>> = {
  _first_name: 'string',
  _last_name: 'string',
  _email: 'string',
  _phone_mobile: 'string',
  _country_code: 'string',
  _client_tags: 'array',
  _is_subscribed_sms: 'boolean',
  _date_birthday: 'date',
  _date_imported: 'date',
  _geopoint: 'geopoint',
} satisfies Record<(typeof NATIVE_NAMES)[number], AttributeType>;

/** Custom attribute and event parameter names: safe as map keys, KV keys and Grammar B keys. */
export const CUSTOM_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** An event type: the event schema's pattern (schemas/ingest.ts). */
export const EVENT_TYPE = new RegExp(eventItemSchema.properties._event_type.pattern);
/** The fields an event item takes: the event schema's properties, in its order. */
export const EVENT_FIELDS: ReadonlySet<string> = new Set(Object.keys(eventItemSchema.properties));

const contactSchema = contactItemSchema.properties;

/** Lengths the contact schema states (schemas/ingest.ts) are read from it: one source per limit. */
export const LIMITS = {
  idLength: contactSchema._user_id.maxLength,
  stringLength: 8192,
  nameLength: contactSchema._first_name.maxLength,
  emailLength: contactSchema._email.maxLength,
  arrayItems: 1000,
  tagLength: contactSchema._client_tags.items.maxLength,
  jsonBytes: 16384,
  /** Levels of objects and arrays in an object value (`{"a":{"b":1}}` is 2): checked without recursion. */
  depth: 32,
  /** Custom attributes of one contact item or one event's `_user_data`, and parameters of one event. */
  attributesPerItem: 200,
  parametersPerItem: 200,
} as const;

/**
 * Names a non-strict datasource may infer from values, per datasource (declared names are an
 * operator's deliberate act and are not counted). Enforced atomically by the spec store.
 */
export const INFERRED_CAPS = {
  attributes: 1000,
  eventTypes: 2000,
  parameters: 2000,
} as const;

/** Whether `value` nests objects or arrays more than `max` levels deep (a scalar is 0). Iterative: no input can exhaust the stack. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ value: object; depth: number }> = [];
  if (value !== null && typeof value === 'object') stack.push({ value, depth: 1 });
  for (let top = stack.pop(); top; top = stack.pop()) {
    if (top.depth > max) return true;
    for (const child of Array.isArray(top.value) ? (top.value as unknown[]) : Object.values(top.value)) {
      if (child !== null && typeof child === 'object') stack.push({ value: child as object, depth: top.depth + 1 });
    }
  }
  return false;
}

const EMAIL = /^[^\s@"(),:;<>[\\\]]+@[^\s@"(),:;<>[\\\]]+\.[^\s@"(),:;<>[\\\]]+$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;
// What ClickHouse DateTime64 and Date32 hold.
const MIN_TIME = Date.UTC(1900, 0, 1);
const MAX_TIME = Date.UTC(2299, 11, 31, 23, 59, 59, 999);

/** A string ClickHouse and JSON can hold faithfully: no lone UTF-16 surrogate, no NUL. */
export function wellFormed(value: string): boolean {
  return value.isWellFormed() && !value.includes('\u0000');
}

/** Ids (`_user_id`, `_event_id`): 1–256 characters, no control characters. */
export function idProblem(value: unknown): string | null {
  if (typeof value !== 'string') return value === undefined ? 'is required' : 'must be a string';
  if (value.length === 0 || value.length > LIMITS.idLength) return `must be 1 to ${LIMITS.idLength} characters`;
  if (!wellFormed(value) || /[\u0000-\u001f\u007f]/.test(value)) return 'must not contain control characters or unpaired surrogates';
  return null;
}

function validDay(y: number, m: number, d: number): boolean {
  const t = Date.UTC(y, m - 1, d);
  const date = new Date(t);
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** `YYYY-MM-DD` (a calendar day) or null. */
export function parseDay(value: string): string | null {
  const m = DAY.exec(value);
  if (!m || !validDay(Number(m[1]), Number(m[2]), Number(m[3]))) return null;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return t >= MIN_TIME && t <= MAX_TIME ? value : null;
}

/** An ISO 8601 date-time with `Z` or an offset, as ISO UTC milliseconds, or null. */
export function parseInstant(value: string): string | null {
  const m = DATE_TIME.exec(value);
  if (!m || !validDay(Number(m[1]), Number(m[2]), Number(m[3]))) return null;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59) return null;
  const t = Date.parse(value);
  if (Number.isNaN(t) || t < MIN_TIME || t > MAX_TIME) return null;
  return new Date(t).toISOString();
}

function stringProblem(value: unknown, max: number = LIMITS.stringLength): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > max) return `must be at most ${max} characters`;
  if (!wellFormed(value)) return 'must not contain NUL or unpaired surrogates';
  return null;
}

type Check = { value: TypedValue } | { problem: string };

const ok = (type: AttributeType, value: unknown): Check => ({ value: { type, value } });
const bad = (problem: string): Check => ({ problem });

/** Validates a native attribute's value (never null: callers handle clearing). */
export function checkNative(name: string, value: unknown): Check {
  switch (name) {
    case '_first_name':
    case '_last_name': {
      const problem = stringProblem(value, LIMITS.nameLength);
      return problem ? bad(problem) : ok('string', value);
    }
    case '_email': {
      const problem = stringProblem(value, LIMITS.emailLength);
      if (problem) return bad(problem);
      return EMAIL.test(value as string) ? ok('string', value) : bad('must be an email address such as "ada@example.com"');
    }
    case '_phone_mobile': {
      const problem = stringProblem(value, 32);
      if (problem) return bad(problem);
      const phone = /^\+[1-9]\d{6,14}$/.test(value as string) ? parsePhoneNumberFromString(value as string) : undefined;
      if (!phone?.isValid()) {
        const parsed = parsePhoneNumberFromString(value as string);
        const hint = parsed?.isValid() ? ` (did you mean "${parsed.number}"?)` : '';
        return bad(`must be a valid phone number in E.164 form, such as "+4915112345678"${hint}`);
      }
      return ok('string', value);
    }
    case '_country_code':
      return typeof value === 'string' && /^[A-Z]{2}$/.test(value) ? ok('string', value) : bad('must be an ISO 3166-1 alpha-2 code in capitals, such as "DE"');
    case '_client_tags': {
      if (!Array.isArray(value)) return bad('must be an array of strings');
      if (value.length > LIMITS.arrayItems) return bad(`must have at most ${LIMITS.arrayItems} tags`);
      for (const tag of value as unknown[]) {
        if (typeof tag !== 'string' || tag.length === 0 || tag.length > LIMITS.tagLength || !wellFormed(tag)) return bad(`every tag must be a string of 1 to ${LIMITS.tagLength} characters`);
      }
      return ok('array', value);
    }
    case '_is_subscribed_sms':
      return typeof value === 'boolean' ? ok('boolean', value) : bad('must be true or false');
    case '_date_birthday': {
      const day = typeof value === 'string' ? parseDay(value) : null;
      return day ? ok('date', day) : bad('must be a calendar date "YYYY-MM-DD" between 1900 and 2299');
    }
    case '_date_imported': {
      const day = typeof value === 'string' ? parseDay(value) : null;
      const instant = day ? `${day}T00:00:00.000Z` : typeof value === 'string' ? parseInstant(value) : null;
      return instant ? ok('date', instant) : bad('must be an ISO 8601 date "YYYY-MM-DD" or date-time with an offset, such as "2026-11-23T10:00:00Z"');
    }
    case '_geopoint': {
      const point = value as { lat?: unknown; lon?: unknown } | null;
      const keys = point && typeof point === 'object' && !Array.isArray(point) ? Object.keys(point).sort().join(',') : '';
      if (keys !== 'lat,lon' || typeof point?.lat !== 'number' || typeof point.lon !== 'number') return bad('must be an object { "lat": number, "lon": number }');
      if (point.lat < -90 || point.lat > 90 || point.lon < -180 || point.lon > 180) return bad('lat must be within -90..90 and lon within -180..180');
      return ok('geopoint', { lat: point.lat, lon: point.lon });
    }
    default:
      return bad(`is not a known reserved attribute; reserved names are ${Object.keys(NATIVE_ATTRIBUTES).join(', ')} (custom names start with a letter)`);
  }
}

/** The type a custom value is stored as when its name has no spec yet. */
export function inferType(value: unknown): AttributeType | null {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (Array.isArray(value)) return value.every((v) => typeof v === 'string') ? 'array' : 'object';
  if (value !== null && typeof value === 'object') return 'object';
  return null;
}

/** Validates a custom value against the type its spec gives (declared or inferred earlier). */
export function checkCustom(type: AttributeType, value: unknown): Check {
  switch (type) {
    case 'string': {
      const problem = stringProblem(value);
      return problem ? bad(`${problem} (the spec types it as string)`) : ok('string', value);
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? ok('number', value) : bad('must be a number (the spec types it as number)');
    case 'boolean':
      return typeof value === 'boolean' ? ok('boolean', value) : bad('must be true or false (the spec types it as boolean)');
    case 'date': {
      const day = typeof value === 'string' ? parseDay(value) : null;
      const instant = day ? `${day}T00:00:00.000Z` : typeof value === 'string' ? parseInstant(value) : null;
      return instant ? ok('date', instant) : bad('must be an ISO 8601 date or date-time with an offset (the spec types it as date)');
    }
    case 'array': {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && wellFormed(v))) return bad('must be an array of strings (the spec types it as array)');
      return value.length > LIMITS.arrayItems ? bad(`must have at most ${LIMITS.arrayItems} items`) : ok('array', value);
    }
    case 'object': {
      if (value === null || typeof value !== 'object') return bad('must be an object or an array (the spec types it as object)');
      // Before JSON.stringify, whose recursion a few thousand levels exhaust.
      if (nestedDeeperThan(value, LIMITS.depth)) return bad(`must nest objects and arrays at most ${LIMITS.depth} levels deep`);
      const text = JSON.stringify(value);
      if (Buffer.byteLength(text) > LIMITS.jsonBytes) return bad(`must be at most ${LIMITS.jsonBytes} bytes of JSON`);
      return wellFormed(text) ? ok('object', value) : bad('must not contain NUL or unpaired surrogates');
    }
    case 'geopoint':
      return checkNative('_geopoint', value);
  }
}
