// Decoding what arrives from the bus: JSON parsed once and checked against the payload's JSON
// Schema (./payloads.ts), so a consumer works on a value of the promised shape or gets one
// typed error it can log and drop, never a half-read object.
import Ajv, { type ValidateFunction } from 'ajv';
import type { CarrierEvent } from './carrier';
import { BUS_SCHEMAS, type BusPayloads } from './payloads';

export class UnreadableBusMessageError extends Error {
  override readonly name = 'UnreadableBusMessageError';
}

export function isUnreadableBusMessage(err: unknown): err is UnreadableBusMessageError {
  return err instanceof UnreadableBusMessageError;
}

const ajv = new Ajv({ allErrors: false });
const utf8 = new TextDecoder();
const validators = new Map<keyof BusPayloads, ValidateFunction>();

function validator(kind: keyof BusPayloads): ValidateFunction {
  let validate = validators.get(kind);
  if (!validate) {
    validate = ajv.compile(BUS_SCHEMAS[kind]);
    validators.set(kind, validate);
  }
  return validate;
}

/** Checks an already parsed value against the schema of `kind`. */
export function checkPayload<K extends keyof BusPayloads>(kind: K, value: unknown): BusPayloads[K] {
  const validate = validator(kind);
  if (!validate(value)) {
    const first = validate.errors?.[0];
    throw new UnreadableBusMessageError(`${kind} payload does not match its schema: ${first ? `${first.instancePath || '/'} ${first.message ?? ''}` : 'invalid'}`);
  }
  return value as BusPayloads[K];
}

/** The JSON value of the bytes; `kind` names the payload in the error when they are not JSON. */
function parseJson(kind: string, data: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(data));
  } catch (err) {
    throw new UnreadableBusMessageError(`${kind} payload is not JSON`, { cause: err });
  }
}

/** Parses and checks the bytes of a stream message or KV value. */
export function decode<K extends keyof BusPayloads>(kind: K, data: Uint8Array): BusPayloads[K] {
  return checkPayload(kind, parseJson(kind, data));
}

/**
 * The events of one `carrier.events` stream message, in order: a batch `{ events }` as the
 * connector writes it, or the one bare event a message of an earlier release holds.
 */
export function decodeCarrierEvents(data: Uint8Array): readonly CarrierEvent[] {
  const parsed = parseJson('carrierEvents', data);
  const batch = typeof parsed === 'object' && parsed !== null && 'events' in parsed;
  return batch ? checkPayload('carrierEvents', parsed).events : [checkPayload('carrierEvent', parsed)];
}
