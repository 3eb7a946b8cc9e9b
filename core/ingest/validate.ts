// Per-item validation of ingestion batches (spec 2 §2, §4): every item is checked on its own
// against the native rules and the datasource's specs, and becomes either a record to store
// or an outcome with `errors` (attribute → messages). Names a non-strict datasource sees for
// the first time are collected so that the caller records them in the specs.
import { automationWindowHolds } from './automation';
import { pathText, type UnfaithfulNumber } from './numbers';
import { CUSTOM_NAME, EVENT_FIELDS, EVENT_TYPE, INFERRED_CAPS, LIMITS, NATIVE_ATTRIBUTES, checkCustom, checkNative, idProblem, inferType, parseInstant } from './values';
import type { AttributeType, ContactPatch, Datasource, EventRecord, ItemOutcome, TypedValue } from './types';

/** What validation needs to know of a datasource's specs. */
export interface SpecView {
  readonly datasource: Datasource;
  attributeType(name: string): AttributeType | undefined;
  hasEventType(eventType: string): boolean;
  parameterType(eventType: string, name: string): AttributeType | undefined;
}

/** Names first seen in this batch (non-strict datasources only), with the type inferred. */
export interface NewSpecs {
  readonly attributes: Map<string, AttributeType>;
  readonly eventTypes: Set<string>;
  /** Keyed `<eventType>.<name>`. */
  readonly parameters: Map<string, { eventType: string; name: string; type: AttributeType }>;
}

const emptyNewSpecs = (): NewSpecs => ({ attributes: new Map(), eventTypes: new Set(), parameters: new Map() });

/** New names the spec store refused because the datasource reached its cap (INFERRED_CAPS); parameters keyed `<eventType>.<name>`. */
export interface RefusedSpecs {
  readonly attributes: ReadonlySet<string>;
  readonly eventTypes: ReadonlySet<string>;
  readonly parameters: ReadonlySet<string>;
}

export const capMessages = {
  attribute: `is a new attribute, and this datasource already has the ${INFERRED_CAPS.attributes} inferred custom attributes it may have: reuse a name of GET /stream/specs/attributes, or have it declared`,
  eventType: `is a new event type, and this datasource already has the ${INFERRED_CAPS.eventTypes} inferred event types it may have: reuse one of GET /stream/specs/events, or have it declared`,
  parameter: `is a new parameter, and this datasource already has the ${INFERRED_CAPS.parameters} inferred event parameters it may have: reuse one of GET /stream/specs/events, or have it declared`,
} as const;

/**
 * The specs as one batch sees them: the datasource's, plus names earlier items of the batch
 * introduced. An item's own new names are staged and kept only if the item is valid.
 */
export class BatchSpecs {
  readonly news: NewSpecs = emptyNewSpecs();
  /** What the current item adds; allocated only when an item brings a new name (rare after the first batches). */
  private staged: NewSpecs | null = null;

  /** `refused`: names the spec store refused at the cap, when a batch is validated again after recording. */
  constructor(private readonly spec: SpecView, private readonly refused?: RefusedSpecs) {}

  /** Whether a name this batch would infer was refused at the datasource's cap. */
  refusedAttribute(name: string): boolean {
    return this.refused?.attributes.has(name) ?? false;
  }

  refusedEventType(eventType: string): boolean {
    return this.refused?.eventTypes.has(eventType) ?? false;
  }

  refusedParameter(eventType: string, name: string): boolean {
    return this.refused?.parameters.has(`${eventType}.${name}`) ?? false;
  }

  get strict(): boolean {
    return this.spec.datasource.strict;
  }

  beginItem(): void {
    this.staged = null;
  }

  commitItem(): void {
    if (!this.staged) return;
    for (const [name, type] of this.staged.attributes) this.news.attributes.set(name, type);
    for (const eventType of this.staged.eventTypes) this.news.eventTypes.add(eventType);
    for (const [key, value] of this.staged.parameters) this.news.parameters.set(key, value);
  }

  private stage(): NewSpecs {
    return (this.staged ??= emptyNewSpecs());
  }

  /** The datasource's answers, remembered for the batch: its items mostly repeat the same names. */
  private readonly known = new Map<string, AttributeType | boolean | undefined>();

  private lookup<T extends AttributeType | boolean | undefined>(key: string, ask: () => T): T {
    if (this.known.has(key)) return this.known.get(key) as T;
    const answer = ask();
    this.known.set(key, answer);
    return answer;
  }

  attributeType(name: string): AttributeType | undefined {
    return this.lookup(`a\u0000${name}`, () => this.spec.attributeType(name)) ?? this.staged?.attributes.get(name) ?? this.news.attributes.get(name);
  }

  addAttribute(name: string, type: AttributeType): void {
    this.stage().attributes.set(name, type);
  }

  hasEventType(eventType: string): boolean {
    return this.lookup(`e\u0000${eventType}`, () => this.spec.hasEventType(eventType)) || (this.staged?.eventTypes.has(eventType) ?? false) || this.news.eventTypes.has(eventType);
  }

  addEventType(eventType: string): void {
    this.stage().eventTypes.add(eventType);
  }

  parameterType(eventType: string, name: string): AttributeType | undefined {
    const key = `${eventType}.${name}`;
    return this.lookup(`p\u0000${key}`, () => this.spec.parameterType(eventType, name)) ?? this.staged?.parameters.get(key)?.type ?? this.news.parameters.get(key)?.type;
  }

  addParameter(eventType: string, name: string, type: AttributeType): void {
    this.stage().parameters.set(`${eventType}.${name}`, { eventType, name, type });
  }
}

type Errors = Record<string, string[]>;

/** Keyed by client-chosen names: no prototype, so "__proto__" or "constructor" are plain keys. */
function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function addError(errors: Errors, key: string, message: string): void {
  (errors[key] ??= []).push(message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Attributes of a contact (a contact item without `_user_id`, or an event's `_user_data`). */
/** Every attribute of `input` but `_user_id` (it names the contact; copying the item without it cost more than the checks). */
function validateAttributes(input: Record<string, unknown>, specs: BatchSpecs, errors: Errors, prefix: string): Record<string, TypedValue | null> {
  const attributes = record<TypedValue | null>();
  let custom = 0;
  for (const name in input) if (!name.startsWith('_') && Object.hasOwn(input, name)) custom += 1;
  if (custom > LIMITS.attributesPerItem) {
    addError(errors, prefix === '' ? '_item' : prefix.slice(0, -1), `has ${custom} custom attributes: at most ${LIMITS.attributesPerItem} per item`);
    return attributes;
  }
  for (const name in input) {
    if (name === '_user_id' || !Object.hasOwn(input, name)) continue;
    const value = input[name];
    const key = `${prefix}${name}`;
    if (name.startsWith('_')) {
      if (!Object.hasOwn(NATIVE_ATTRIBUTES, name)) {
        addError(errors, key, `is not a known reserved attribute; reserved names are ${Object.keys(NATIVE_ATTRIBUTES).join(', ')}`);
        continue;
      }
      if (value === null) { attributes[name] = null; continue; }
      const checked = checkNative(name, value);
      if ('problem' in checked) addError(errors, key, checked.problem);
      else attributes[name] = checked.value;
      continue;
    }
    if (!CUSTOM_NAME.test(name)) {
      addError(errors, key, 'is not a valid attribute name: 1 to 64 letters, digits or underscores, starting with a letter');
      continue;
    }
    const known = specs.attributeType(name);
    if (!known && specs.strict) {
      addError(errors, key, 'is not in the attributes spec of this strict datasource (GET /stream/specs/attributes); declare it first');
      continue;
    }
    if (!known && specs.refusedAttribute(name)) { addError(errors, key, capMessages.attribute); continue; }
    if (value === null) { attributes[name] = null; continue; }
    const type = known ?? inferType(value);
    if (!type) { addError(errors, key, 'has an unsupported value'); continue; }
    const checked = checkCustom(type, value);
    if ('problem' in checked) { addError(errors, key, checked.problem); continue; }
    attributes[name] = checked.value;
    if (!known) specs.addAttribute(name, type);
  }
  return attributes;
}

export interface ContactResult {
  readonly outcome: ItemOutcome;
  readonly patch: ContactPatch | null;
}

/** Adds an error per number the body holds that JSON.parse changed (./numbers.ts), under the attribute or parameter holding it. */
function addNumberErrors(errors: Errors, numbers: readonly UnfaithfulNumber[] | undefined, nested: ReadonlySet<string>): void {
  for (const { path, problem } of numbers ?? []) {
    const depth = nested.has(String(path[0])) && path.length > 1 ? 2 : 1;
    const key = path.slice(0, depth).join('.');
    addError(errors, key, path.length > depth ? `${pathText(path)} ${problem}` : problem);
  }
}

const NO_NESTED = new Set<string>();

/** `numbers`: the item's numbers that JSON.parse changed (paths within the item). */
export function validateContact(item: unknown, specs: BatchSpecs, numbers?: readonly UnfaithfulNumber[]): ContactResult {
  specs.beginItem();
  if (!isObject(item)) return { outcome: { status: 'error', _user_id: null, errors: { _item: ['must be a JSON object'] } }, patch: null };
  const errors = record<string[]>();
  const userId = item['_user_id'];
  const idError = idProblem(userId);
  if (idError) addError(errors, '_user_id', idError);
  const attributes = validateAttributes(item, specs, errors, '');
  addNumberErrors(errors, numbers, NO_NESTED);
  const shownId = typeof userId === 'string' ? userId : null;
  if (Object.keys(errors).length > 0) return { outcome: { status: 'error', _user_id: shownId, errors }, patch: null };
  specs.commitItem();
  return { outcome: { status: 'success', _user_id: shownId }, patch: { userId: userId as string, attributes } };
}

export interface EventResult {
  readonly outcome: ItemOutcome;
  readonly event: EventRecord | null;
  readonly userData: ContactPatch | null;
}

const EVENT_NESTED = new Set(['_event_parameters', '_user_data']);

/** `receivedIso` is `receivedAt` as ISO text, computed once per batch by the caller; `numbers` as for validateContact. */
export function validateEvent(item: unknown, specs: BatchSpecs, receivedAt: number, receivedIso: string = new Date(receivedAt).toISOString(), numbers?: readonly UnfaithfulNumber[]): EventResult {
  specs.beginItem();
  if (!isObject(item)) return { outcome: { status: 'error', _user_id: null, _event_id: null, errors: { _item: ['must be a JSON object'] } }, event: null, userData: null };
  const errors = record<string[]>();
  for (const field of Object.keys(item)) if (!EVENT_FIELDS.has(field)) addError(errors, field, `is not an event field; events take ${[...EVENT_FIELDS].join(', ')} (contact attributes go in _user_data)`);
  const userId = item['_user_id'];
  const eventId = item['_event_id'];
  const idError = idProblem(userId);
  if (idError) addError(errors, '_user_id', idError);
  const eventIdError = idProblem(eventId);
  if (eventIdError) addError(errors, '_event_id', eventIdError);

  const eventType = item['_event_type'];
  if (typeof eventType !== 'string' || !EVENT_TYPE.test(eventType)) {
    addError(errors, '_event_type', eventType === undefined ? 'is required' : 'must be 1 to 64 letters, digits, "_" or "-", starting with a letter');
  } else if (!specs.hasEventType(eventType)) {
    if (specs.refusedEventType(eventType)) addError(errors, '_event_type', capMessages.eventType);
    else if (specs.strict) addError(errors, '_event_type', 'is not in the events spec of this strict datasource (GET /stream/specs/events); declare it first');
    else specs.addEventType(eventType);
  }

  const parameters = record<TypedValue>();
  const rawParameters = item['_event_parameters'];
  if (!isObject(rawParameters)) {
    addError(errors, '_event_parameters', rawParameters === undefined ? 'is required (use {} for an event without parameters)' : 'must be a JSON object');
  } else if (Object.keys(rawParameters).length > LIMITS.parametersPerItem) {
    addError(errors, '_event_parameters', `has ${Object.keys(rawParameters).length} parameters: at most ${LIMITS.parametersPerItem} per event`);
  } else if (typeof eventType === 'string' && EVENT_TYPE.test(eventType)) {
    for (const [name, value] of Object.entries(rawParameters)) {
      const key = `_event_parameters.${name}`;
      if (!CUSTOM_NAME.test(name)) { addError(errors, key, 'is not a valid parameter name: 1 to 64 letters, digits or underscores, starting with a letter'); continue; }
      if (value === null) { addError(errors, key, 'must not be null: leave the parameter out instead (events are immutable, there is nothing to clear)'); continue; }
      const known = specs.parameterType(eventType, name);
      if (!known && specs.strict) { addError(errors, key, `is not a parameter of event type "${eventType}" in the events spec of this strict datasource`); continue; }
      if (!known && specs.refusedParameter(eventType, name)) { addError(errors, key, capMessages.parameter); continue; }
      const type = known ?? inferType(value);
      if (!type) { addError(errors, key, 'has an unsupported value'); continue; }
      const checked = checkCustom(type, value);
      if ('problem' in checked) { addError(errors, key, checked.problem); continue; }
      parameters[name] = checked.value;
      if (!known) specs.addParameter(eventType, name, type);
    }
  }

  let eventDate = receivedIso;
  const rawDate = item['_event_date'];
  if (rawDate !== undefined) {
    const parsed = typeof rawDate === 'string' ? parseInstant(rawDate) : null;
    if (parsed) eventDate = parsed;
    else addError(errors, '_event_date', 'must be an ISO 8601 date-time with "Z" or an offset, such as "2026-11-23T10:00:00Z", between 1900 and 2299');
  }

  let userData: Record<string, TypedValue | null> | null = null;
  const rawUserData = item['_user_data'];
  if (rawUserData !== undefined) {
    if (!isObject(rawUserData)) addError(errors, '_user_data', 'must be a JSON object of contact attributes');
    else {
      if ('_user_id' in rawUserData) addError(errors, '_user_data._user_id', 'must not be given: the event\'s _user_id names the contact');
      userData = validateAttributes(rawUserData, specs, errors, '_user_data.');
    }
  }

  addNumberErrors(errors, numbers, EVENT_NESTED);
  const shownUser = typeof userId === 'string' ? userId : null;
  const shownEvent = typeof eventId === 'string' ? eventId : null;
  if (Object.keys(errors).length > 0) return { outcome: { status: 'error', _user_id: shownUser, _event_id: shownEvent, errors }, event: null, userData: null };
  specs.commitItem();
  const event: EventRecord = {
    userId: userId as string,
    eventId: eventId as string,
    eventType: eventType as string,
    eventDate,
    parameters,
    triggers: rawDate === undefined || automationWindowHolds(Date.parse(eventDate), receivedAt),
  };
  return { outcome: { status: 'success', _user_id: shownUser, _event_id: shownEvent }, event, userData: userData ? { userId: userId as string, attributes: userData } : null };
}

