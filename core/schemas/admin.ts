// Wire contract of the admin API (DESIGN §4 "Provisioning over HTTP", docs/operations.md): the
// request bodies under /admin/v1 as JSON Schemas. ajv checks them here (parseAdminBody) and the
// OpenAPI document (schemas/openapi.ts) is built from the same objects. A field of the wrong
// JSON type is a 400 naming it; a rule broken (missing, unknown, out of range) a 422 naming it.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { AppError, validationError, type FieldErrors } from '../errors';
import { MAX_AMOUNT } from '../accounts/provisioning';
import { PRODUCT_SCOPES, TOKEN_KINDS } from '../accounts/types';

export const ADMIN_BASE = '/admin/v1';

const RECORD_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const BLANK_PATTERN = '\\S';
const name = { type: 'string', minLength: 1, maxLength: 200, pattern: BLANK_PATTERN } as const;
const currency = { type: 'string', pattern: '^[A-Za-z]{3}$', description: 'ISO 4217; the organization\'s currency when omitted' } as const;
const recordId = (what: string) => ({ type: 'string', pattern: RECORD_ID_PATTERN, description: `The id of a ${what} of the organization (another organization's is a 404)` }) as const;

export const adminOrganizationCreateSchema = {
  $id: 'AdminOrganizationCreate',
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name,
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 currency of its balance and prices (default EUR)' },
    smppEnabled: { type: 'boolean', description: 'Whether its api_sms tokens may get SMPP credentials (default false)' },
  },
} as const;

export const adminProjectCreateSchema = {
  $id: 'AdminProjectCreate',
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name },
} as const;

export const adminTokenCreateSchema = {
  $id: 'AdminTokenCreate',
  type: 'object',
  required: ['kind'],
  additionalProperties: false,
  description: 'api_sms and product tokens need `project`; a datasource token needs `datasource` (its project is implied); a legacy token is account-wide (no project).',
  properties: {
    kind: { type: 'string', enum: [...TOKEN_KINDS] },
    project: recordId('project'),
    datasource: recordId('datasource'),
    scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...PRODUCT_SCOPES] }, description: 'Product tokens only' },
    name,
  },
} as const;

const amount = (what: string, exclusiveMinimum: boolean) => ({ type: 'number', ...(exclusiveMinimum ? { exclusiveMinimum: 0 } : { minimum: 0 }), maximum: MAX_AMOUNT, description: what }) as const;

export const adminBalanceSetSchema = {
  $id: 'AdminBalanceSet',
  type: 'object',
  required: ['amount'],
  additionalProperties: false,
  properties: { amount: amount('The new available amount (replaces the current one)', false), currency },
} as const;

export const adminTopUpSchema = {
  $id: 'AdminTopUp',
  type: 'object',
  required: ['amount'],
  additionalProperties: false,
  properties: { amount: amount('Funds to add, atomically (safe beside live traffic)', true) },
} as const;

export const adminPriceSetSchema = {
  $id: 'AdminPriceSet',
  type: 'object',
  required: ['kind', 'country', 'price'],
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['sms', 'lookup'], description: 'sms: per segment; lookup: per request' },
    country: { type: 'string', pattern: '^[A-Za-z]{2}$', description: 'ISO 3166 alpha-2' },
    price: amount('Price per SMS segment or per lookup', false),
    currency,
  },
} as const;

export const adminWebhookSetSchema = {
  $id: 'AdminWebhookSet',
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2000, description: 'Public HTTPS unless the stack runs with WEBHOOK_ALLOW_PRIVATE_TARGETS=true' },
    secret: { type: 'string', minLength: 1, maxLength: 200, description: 'Signing secret (a whsec_ secret, or any other string used as bytes); generated when omitted' },
  },
} as const;

export const adminDatasourceCreateSchema = {
  $id: 'AdminDatasourceCreate',
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name, strict: { type: 'boolean', description: 'Refuse attribute names, event types and parameters not in its specs (default false)' } },
} as const;

export const ADMIN_SCHEMAS = [
  adminOrganizationCreateSchema, adminProjectCreateSchema, adminTokenCreateSchema, adminBalanceSetSchema, adminTopUpSchema, adminPriceSetSchema,
  adminWebhookSetSchema, adminDatasourceCreateSchema,
] as const;

export interface AdminOrganizationCreate { name: string; currency?: string; smppEnabled?: boolean }
export interface AdminProjectCreate { name: string }
export interface AdminTokenCreate { kind: string; project?: string; datasource?: string; scopes?: string[]; name?: string }
export interface AdminBalanceSet { amount: number; currency?: string }
export interface AdminTopUp { amount: number }
export interface AdminPriceSet { kind: string; country: string; price: number; currency?: string }
export interface AdminWebhookSet { url: string; secret?: string }
export interface AdminDatasourceCreate { name: string; strict?: boolean }

interface AdminBodies {
  AdminOrganizationCreate: AdminOrganizationCreate;
  AdminProjectCreate: AdminProjectCreate;
  AdminTokenCreate: AdminTokenCreate;
  AdminBalanceSet: AdminBalanceSet;
  AdminTopUp: AdminTopUp;
  AdminPriceSet: AdminPriceSet;
  AdminWebhookSet: AdminWebhookSet;
  AdminDatasourceCreate: AdminDatasourceCreate;
}

const RULES: Readonly<Record<string, string>> = {
  minLength: 'must not be empty', pattern: 'has the wrong format', enum: 'is not one of the allowed values', minimum: 'is too small', exclusiveMinimum: 'must be above 0',
  maximum: `must be at most ${MAX_AMOUNT}`, minItems: 'must not be empty', uniqueItems: 'must not repeat a value', maxLength: 'is too long',
};

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction>(ADMIN_SCHEMAS.map((s) => [s.$id, ajv.compile(s)]));

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
  const schema = ADMIN_SCHEMAS.find((s) => s.$id === schemaId) as { readonly properties: object };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('BODY_NOT_OBJECT', `the body must be a JSON object with ${Object.keys(schema.properties).join(', ')}`);
  const validate = validators.get(schemaId) as ValidateFunction;
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
