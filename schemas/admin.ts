// Wire contract of the admin API (DESIGN §4 "Provisioning over HTTP", docs/operations.md): the
// request bodies under /admin/v1 as JSON Schemas. ajv checks them (core/accounts/admin-body.ts
// parseAdminBody) and the OpenAPI document (gateways/http/openapi.ts) is built from the same
// objects. The token kinds, product scopes and amount ceiling are named here, where the wire
// contract enumerates them, and core/accounts re-exports them: schemas/ imports nothing.

export const TOKEN_KINDS = ['api_sms', 'legacy', 'datasource', 'product'] as const;

/** `analytics:read`: SQL over the organization's documented relations (POST /analytics/v1/sql, docs/analytics.md). */
export const PRODUCT_SCOPES = ['ingest:write', 'ingest:read', 'audience:search', 'PROJECT_AGGREGATIONS', 'analytics:read'] as const;

/** Largest amount (balance, top-up) and price accepted, in the currency unit: far below the safe range of micro-units. */
export const MAX_AMOUNT = 1_000_000_000;

export const ADMIN_BASE = '/admin/v1';

export const RECORD_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
export const BLANK_PATTERN = '\\S';
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

export interface AdminBodies {
  AdminOrganizationCreate: AdminOrganizationCreate;
  AdminProjectCreate: AdminProjectCreate;
  AdminTokenCreate: AdminTokenCreate;
  AdminBalanceSet: AdminBalanceSet;
  AdminTopUp: AdminTopUp;
  AdminPriceSet: AdminPriceSet;
  AdminWebhookSet: AdminWebhookSet;
  AdminDatasourceCreate: AdminDatasourceCreate;
}
