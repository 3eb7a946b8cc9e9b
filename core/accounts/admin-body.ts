// The admin API's request bodies checked against their JSON Schemas (schemas/admin.ts, DESIGN §4
// "Provisioning over HTTP"). A field of the wrong JSON type is a 400 naming it; a rule broken
// (missing, unknown, out of range) a 422 naming it.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { AppError, validationError, type FieldErrors } from '../errors';
import { ADMIN_SCHEMAS, BLANK_PATTERN, MAX_AMOUNT, RECORD_ID_PATTERN, type AdminBodies } from '../../schemas/admin';

const RULES: Readonly<Record<string, string>> = {
  minLength: 'must not be empty', pattern: 'has the wrong format', enum: 'is not one of the allowed values', minimum: 'is too small', exclusiveMinimum: 'must be above 0',
  maximum: `must be at most ${MAX_AMOUNT}`, minItems: 'must not be empty', uniqueItems: 'must not repeat a value', maxLength: 'is too long',
};

// Compiled on the first body of each kind (as core/bus/decode.ts does): the accounts entry is
// loaded by every role and the admin CLI, and only the admin API checks bodies.
const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction>();

function validator(schema: (typeof ADMIN_SCHEMAS)[number]): ValidateFunction {
  let validate = validators.get(schema.$id);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema.$id, validate);
  }
  return validate;
}

/** `scopes/1` → `scopes[1]`; field names come from the client, so they are kept short. */
const fieldOf = (error: ErrorObject): string => error.instancePath.slice(1).replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.').slice(0, 64);

function describe(error: ErrorObject, schema: { readonly properties: object }): [string, string] {
  const params = error.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[]; pattern?: string };
  if (error.keyword === 'required' && params.missingProperty) return [params.missingProperty, 'is required'];
  if (error.keyword === 'additionalProperties' && params.additionalProperty) {
    return [params.additionalProperty.slice(0, 64), `is not a field of this request (it takes ${Object.keys(schema.properties).join(', ')})`];
  }
  const field = fieldOf(error);
  if (error.keyword === 'enum' && params.allowedValues) return [field, `must be one of ${params.allowedValues.map(String).join(', ')}`];
  if (error.keyword === 'pattern' && params.pattern === RECORD_ID_PATTERN) return [field, 'is not an id (letters, digits, - and _)'];
  if (error.keyword === 'pattern' && params.pattern === BLANK_PATTERN) return [field, 'must not be blank'];
  return [field, RULES[error.keyword] ?? error.message ?? 'is invalid'];
}

/**
 * The body checked against the named schema. Not an object, or a field of the wrong JSON type:
 * 400 naming it; otherwise each broken rule is a 422 field message (FieldErrors keyed by field).
 */
export function parseAdminBody<K extends keyof AdminBodies>(schemaId: K, body: unknown): AdminBodies[K] {
  const schema = ADMIN_SCHEMAS.find((s) => s.$id === schemaId) as (typeof ADMIN_SCHEMAS)[number];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('BODY_NOT_OBJECT', `the body must be a JSON object with ${Object.keys(schema.properties).join(', ')}`);
  const validate = validator(schema);
  if (validate(body)) return body as AdminBodies[K];
  const errors = validate.errors ?? [];
  const typeError = errors.find((e) => e.keyword === 'type');
  if (typeError) {
    const field = fieldOf(typeError) || 'body';
    throw new AppError('WRONG_SHAPE', `${field}: must be ${String((typeError.params as { type?: string }).type ?? 'of another type')}`);
  }
  // A Map: field names come from the client, and "__proto__" must stay an ordinary key.
  const fields = new Map<string, string[]>();
  for (const error of errors) {
    const [field, message] = describe(error, schema);
    const list = fields.get(field) ?? [];
    if (!list.includes(message)) list.push(message);
    fields.set(field, list);
  }
  throw validationError(Object.fromEntries(fields) as FieldErrors);
}
