// The OpenAPI 3.1 document served at /openapi.json, assembled from the same JSON Schemas
// that ajv validates with (schemas/sms.ts), so the contract and the code cannot drift.
import {
  balanceSchema, bulkErrorSchema, dlrSchema, lookupCreateSchema, lookupSchema, priceEntrySchema, problemSchema,
  rateLimitedSchema, smsBulkSchema, smsCreateItemSchema, smsSchema, validationErrorSchema,
} from './sms';

const SCHEMAS = [smsCreateItemSchema, smsBulkSchema, smsSchema, lookupCreateSchema, lookupSchema, balanceSchema, priceEntrySchema, dlrSchema, problemSchema, validationErrorSchema, bulkErrorSchema, rateLimitedSchema];

/** JSON Schema → OpenAPI component: drop $id, point bare $refs at components. */
function component(schema: object): unknown {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => {
    if (key === '$id') return undefined;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) return `#/components/schemas/${value}`;
    return value;
  }));
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const rateHeaders = {
  'X-RateLimit-Limit': { schema: { type: 'integer' }, description: 'Requests allowed in the window' },
  'X-RateLimit-Remaining': { schema: { type: 'integer' }, description: 'Requests left in the window' },
  'X-RateLimit-Reset': { schema: { type: 'integer' }, description: 'Unix time of the counter reset' },
};
const problem = (description: string) => ({ description, headers: rateHeaders, ...json(ref('Problem')) });
const ERRORS: Record<string, unknown> = {
  400: problem('Malformed body, wrong shape or invalid filter'),
  401: problem('Token missing, malformed or revoked'),
  402: problem('Balance exhausted'),
  404: problem('Not found or not visible to this token'),
  413: problem('Body too large, or more than 100 bulk items'),
  422: { description: 'Invalid fields', headers: rateHeaders, ...json(ref('ValidationError')) },
  429: { description: 'Rate limit reached', headers: rateHeaders, ...json(ref('RateLimited')) },
  500: problem('Internal error; retry with backoff'),
};
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), ERRORS[c]]));
const ok = (status: number, schema: unknown) => ({ [status]: { description: 'Success', headers: rateHeaders, ...json(schema) } });
const listParams = [
  { name: '_sort', in: 'query', schema: { type: 'string' }, description: 'Comma-separated fields; `:-` descending' },
  { name: '_start', in: 'query', schema: { type: 'integer', minimum: 0 } },
  { name: '_limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
  { name: '_group', in: 'query', schema: { type: 'string' }, description: 'hourly, daily, monthly or a field' },
  { name: '_q', in: 'query', schema: { type: 'string' }, description: 'Grammar A JSON form' },
];
const idParam = [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }];

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'SMS API', version: '1.0.0', description: 'Transactional SMS API v1 (spec 1). Filters: Grammar A (docs/grammar-a.md).' },
    servers: [{ url: '/transactional/v1' }],
    security: [{ bearer: [] }, { accessToken: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        accessToken: { type: 'apiKey', in: 'query', name: 'access_token' },
      },
      schemas: Object.fromEntries(SCHEMAS.map((s) => [s.$id, component(s)])),
    },
    paths: {
      '/sms': {
        get: { summary: 'List messages', parameters: listParams, responses: { ...ok(200, { type: 'object', properties: { entities: { type: 'array', items: ref('Sms') } } }), ...errors(400, 401, 429, 500) } },
        post: { summary: 'Send one SMS', requestBody: { required: true, ...json(ref('SmsCreateItem')) }, responses: { ...ok(201, { type: 'object', properties: { entity: ref('Sms') } }), ...errors(400, 401, 402, 413, 422, 429, 500) } },
      },
      '/sms/bulk': {
        post: {
          summary: 'Send up to 100 SMS', requestBody: { required: true, ...json(ref('SmsBulk')) },
          responses: { ...ok(201, { type: 'object', properties: { entities: { type: 'array', items: ref('Sms') }, errors: { type: 'array', items: ref('BulkError') } } }), ...errors(400, 401, 402, 413, 422, 429, 500) },
        },
      },
      '/sms/{id}': { get: { summary: 'Read one message', parameters: idParam, responses: { ...ok(200, { type: 'object', properties: { entity: ref('Sms') } }), ...errors(400, 401, 404, 429, 500) } } },
      '/lookup': {
        get: { summary: 'List lookups', parameters: listParams, responses: { ...ok(200, { type: 'object', properties: { entities: { type: 'array', items: ref('Lookup') } } }), ...errors(400, 401, 429, 500) } },
        post: { summary: 'Look up a number (HLR)', requestBody: { required: true, ...json(ref('LookupCreate')) }, responses: { ...ok(201, { type: 'object', properties: { entity: ref('Lookup') } }), ...errors(400, 401, 402, 413, 422, 429, 500) } },
      },
      '/lookup/{id}': { get: { summary: 'Read one lookup', parameters: idParam, responses: { ...ok(200, { type: 'object', properties: { entity: ref('Lookup') } }), ...errors(400, 401, 404, 429, 500) } } },
      '/organization/account': { get: { summary: 'Balance', responses: { ...ok(200, { type: 'object', properties: { entity: ref('Balance') } }), ...errors(400, 401, 429, 500) } } },
      '/sms/price-profile/me/countries': { get: { summary: 'SMS prices per country (per segment)', responses: { ...ok(200, { type: 'object', properties: { entities: { type: 'array', items: ref('PriceEntry') } } }), ...errors(400, 401, 429, 500) } } },
      '/lookup/price-profile/me/countries': { get: { summary: 'Lookup prices per country', responses: { ...ok(200, { type: 'object', properties: { entities: { type: 'array', items: ref('PriceEntry') } } }), ...errors(400, 401, 429, 500) } } },
    },
    webhooks: {
      dlr: { post: { summary: 'Delivery report (spec 1 §2.6)', requestBody: json(ref('Dlr')), responses: { 200: { description: 'Any 2xx acknowledges' } } } },
    },
  };
}
