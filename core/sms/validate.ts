// Shape and field rules of an SMS create item (spec 1 §2.1, §8) from its JSON Schema:
// a wrong JSON type is a 400 (the body has the wrong shape), a broken rule is a 422 with
// one clear message per field and rule (spec 1 §7). Beyond the schema: a text that cannot be
// sent faithfully as GSM-7 while Unicode is not allowed is a 422 naming the characters.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { lookupCreateSchema, SCHEDULE_IMMEDIATE_MS, SCHEDULE_MAX_DAYS, smsCreateItemSchema, VALIDITY_PERIOD_MAX_SECONDS, VALIDITY_PERIOD_MIN_SECONDS, type LookupCreate, type SmsCreateItem } from '../../schemas/sms';
import type { FieldErrors } from '../errors';
import { describeChar, untransliterable } from './encoding';

export interface ShapeProblem {
  /** The first field with the wrong JSON type, or '' for the body itself. */
  readonly field: string;
  readonly message: string;
  /** Every field with the wrong JSON type and its message (a bulk item reports them all). */
  readonly fields: FieldErrors;
}

export type Checked<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly shape: ShapeProblem }
  | { readonly ok: false; readonly fields: FieldErrors };

const FROM_RULE = 'must be 3 to 11 printable ASCII characters that do not start or end with a space, or 3 to 14 digits';
const VALIDITY_RULE = `must be a whole number of seconds from ${VALIDITY_PERIOD_MIN_SECONDS} (1 minute) to ${VALIDITY_PERIOD_MAX_SECONDS} (72 hours)`;
const RULE_MESSAGES: Record<string, Record<string, string>> = {
  from: { minLength: FROM_RULE, maxLength: FROM_RULE, pattern: FROM_RULE },
  to: { minLength: 'is required', maxLength: 'must be at most 15 characters', pattern: 'must be an E.164 number such as +4915112345678' },
  text: { minLength: 'must not be empty' },
  clientId: { minLength: 'must not be empty', maxLength: 'must be at most 40 characters' },
  validityPeriod: { minimum: VALIDITY_RULE, maximum: VALIDITY_RULE, multipleOf: VALIDITY_RULE },
};

const ajv = new Ajv({ allErrors: true, strict: false });

/**
 * Per-field messages keyed by names that come from the client: collected in a Map, because on
 * a plain object a field named "__proto__" would read Object.prototype (a 500, found by the
 * OpenAPI fuzz); Object.fromEntries then defines it as an ordinary own property.
 */
class FieldMessages {
  private readonly byField = new Map<string, string[]>();

  add(field: string, message: string): void {
    const list = this.byField.get(field) ?? [];
    if (!list.includes(message)) list.push(message);
    this.byField.set(field, list);
  }

  toFieldErrors(): FieldErrors {
    return Object.fromEntries(this.byField);
  }
}

function describeTypes(typeErrors: readonly ErrorObject[]): ShapeProblem {
  const fields = new FieldMessages();
  let first: { field: string; message: string } | undefined;
  for (const error of typeErrors) {
    const field = error.instancePath.slice(1).replace(/\//g, '.');
    const expected = String((error.params as { type?: string }).type ?? 'of another type');
    const message = field ? `must be ${expected === 'object' ? 'an object' : `a ${expected}`}` : `must be a JSON ${expected}`;
    first ??= { field, message };
    fields.add(field || 'item', message);
  }
  return { field: first?.field ?? '', message: first?.message ?? 'has the wrong type', fields: fields.toFieldErrors() };
}

const LISTED_CHARACTERS = 10;

/** DESIGN §4: with allowUnicode false, a character with no documented GSM-7 transliteration is refused, never sent as '?'. */
function gsm7Problems(item: SmsCreateItem): FieldErrors | undefined {
  if (item.allowUnicode === true) return undefined;
  const chars = untransliterable(item.text);
  if (chars.length === 0) return undefined;
  const listed = chars.slice(0, LISTED_CHARACTERS).map(describeChar).join(', ');
  const more = chars.length > LISTED_CHARACTERS ? ` and ${chars.length - LISTED_CHARACTERS} more` : '';
  return { text: [`has characters with no GSM-7 equivalent: ${listed}${more}; remove them or set allowUnicode to true (UCS-2)`] };
}

/** Optional fields sent as null mean "not given" (clients often serialize absent as null). */
function dropNullOptionals(value: unknown, required: readonly string[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  // Most items carry no null: they are checked as they are, without a copy.
  if (!Object.values(value).includes(null)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k, v]) => v !== null || required.includes(k)));
}

/** The fields holding a string with a lone UTF-16 surrogate; none (the usual case) without an allocation. */
function brokenStringFields(value: Record<string, unknown>): string[] | undefined {
  let broken: string[] | undefined;
  for (const key in value) {
    const v = value[key];
    if (typeof v === 'string' && !v.isWellFormed()) (broken ??= []).push(key);
  }
  return broken;
}

function checker<T>(schema: { readonly required: readonly string[] }, rules?: (value: T) => FieldErrors | undefined): (input: unknown) => Checked<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  return (input) => {
    const value = dropNullOptionals(input, schema.required);
    if (validate(value)) {
      // Valid JSON may carry a lone UTF-16 surrogate ("\ud83d"): no SMSC, database or webhook
      // receiver can take it, so it is a field error, not an accepted message.
      const broken = brokenStringFields(value as Record<string, unknown>);
      if (broken) return { ok: false, fields: Object.fromEntries(broken.map((k) => [k, ['contains an unpaired UTF-16 surrogate (broken unicode)']])) };
      const problems = rules?.(value as T);
      if (problems) return { ok: false, fields: problems };
      return { ok: true, value: value as T };
    }
    const errors = validate.errors ?? [];
    const typeErrors = errors.filter((e) => e.keyword === 'type');
    if (typeErrors.length > 0) return { ok: false, shape: describeTypes(typeErrors) };
    const fields = new FieldMessages();
    for (const error of errors) {
      const params = error.params as { missingProperty?: string; additionalProperty?: string };
      if (error.keyword === 'required' && params.missingProperty) fields.add(params.missingProperty, 'is required');
      else if (error.keyword === 'additionalProperties' && params.additionalProperty) fields.add(params.additionalProperty, 'is not a known field');
      else {
        const field = error.instancePath.slice(1);
        fields.add(field, (Object.hasOwn(RULE_MESSAGES, field) ? RULE_MESSAGES[field]?.[error.keyword] : undefined) ?? error.message ?? 'is invalid');
      }
    }
    return { ok: false, fields: fields.toFieldErrors() };
  };
}

/** C0 controls (NUL included) and DEL: as the ingestion API's identifiers (core/ingest/values.ts). */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** A clientId is a caller's key, stored, echoed in DLRs and matched on retries: printable and not blank. */
function clientIdProblems(item: SmsCreateItem): FieldErrors | undefined {
  const clientId = item.clientId;
  if (clientId === undefined) return undefined;
  if (CONTROL_CHARACTER.test(clientId)) return { clientId: ['must not contain control characters (NUL, tabs, line breaks)'] };
  if (clientId.trim() === '') return { clientId: ['must not be only whitespace'] };
  return undefined;
}

export const checkSmsItem = checker<SmsCreateItem>(smsCreateItemSchema, (item) => {
  const clientId = clientIdProblems(item);
  const text = gsm7Problems(item);
  return clientId && text ? { ...clientId, ...text } : (clientId ?? text);
});
export const checkLookupRequest = checker<LookupCreate>(lookupCreateSchema);

/** An ISO 8601 date and time, seconds and fraction optional, then the offset (absent: refused by name). */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const SCHEDULE_MAX_MS = SCHEDULE_MAX_DAYS * 86_400_000;
const SCHEDULE_BOUNDS = `from now to ${SCHEDULE_MAX_DAYS} days ahead`;
const SCHEDULE_STATE_MARGIN_MS = 3_600_000;

/** `scheduledAt` read against `nowMs`: the time to send (epoch ms), null for "at once", or the 422 message. */
export type ScheduleCheck = { readonly ok: true; readonly atMs: number | null } | { readonly ok: false; readonly message: string };

/** Epoch ms of an ISO 8601 date-time with an offset; a string naming why not. */
export function parseIsoWithOffset(value: string): number | string {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return 'must be an ISO 8601 date and time with a UTC offset, such as 2026-12-01T09:30:00+01:00 or 2026-12-01T08:30:00Z';
  const [y, mo, d, h, mi] = m.slice(1, 6).map(Number) as [number, number, number, number, number];
  const s = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  const offset = m[8];
  if (offset === undefined) return 'has no UTC offset: a time without one is ambiguous (whose local time?); add Z or an offset such as +01:00';
  const daysInMonth = mo >= 1 && mo <= 12 ? new Date(Date.UTC(y, mo, 0)).getUTCDate() : 0;
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth || h > 23 || mi > 59 || s > 59) return 'is not a valid date and time';
  let offsetMinutes = 0;
  if (offset.toUpperCase() !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 18 || om > 59) return 'has an offset beyond ±18:00';
    offsetMinutes = (offset.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  // Date.UTC maps years 0-99 to 1900-1999: set the year on its own.
  const local = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms));
  local.setUTCFullYear(y);
  return local.getTime() - offsetMinutes * 60_000;
}

/**
 * DESIGN §4 Scheduling: `scheduledAt` must carry an offset and lie from now to 35 days ahead.
 * Within SCHEDULE_IMMEDIATE_MS of now (either side: clocks differ) it is "at once" (atMs null).
 */
export function checkScheduledAt(value: string, nowMs: number, stateLifetimeMs = Infinity): ScheduleCheck {
  const at = parseIsoWithOffset(value);
  if (typeof at === 'string') return { ok: false, message: at };
  if (Math.abs(at - nowMs) <= SCHEDULE_IMMEDIATE_MS) return { ok: true, atMs: null };
  if (at < nowMs) return { ok: false, message: `is in the past (${new Date(at).toISOString()}); it must be ${SCHEDULE_BOUNDS}` };
  if (at - nowMs > SCHEDULE_MAX_MS) return { ok: false, message: `is more than ${SCHEDULE_MAX_DAYS} days ahead; it must be ${SCHEDULE_BOUNDS} (at most ${new Date(nowMs + SCHEDULE_MAX_MS).toISOString()})` };
  // The message waits as a state record that lives stateLifetimeMs from its last write: it must
  // be released (written again) before that, with an hour to spare for a late timer.
  const horizon = stateLifetimeMs - SCHEDULE_STATE_MARGIN_MS;
  if (at - nowMs > horizon) {
    const hours = Math.round(stateLifetimeMs / 3_600_000);
    return { ok: false, message: `is more than ${Math.floor(horizon / 3_600_000)} hours ahead, beyond what this deployment keeps a waiting message (MESSAGE_STATE_TTL_HOURS=${hours}, less an hour; ${SCHEDULE_MAX_DAYS} days need ${SCHEDULE_MAX_DAYS * 24 + 1}): at most ${new Date(nowMs + horizon).toISOString()}` };
  }
  return { ok: true, atMs: at };
}
