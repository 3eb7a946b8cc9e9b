// Wire contract of the ingestion API (spec 2 §2, §4, §7), as JSON Schemas: the OpenAPI
// document (gateways/http/openapi.ts) is assembled from them, and the router validates the body
// shape with the batch schema; per-item rules are core/ingest/validate.ts (each item on its own).

/** The JSON type an attribute or event parameter holds; `date` and `geopoint` only when declared or native. */
export const ATTRIBUTE_TYPES = ['string', 'number', 'boolean', 'date', 'array', 'object', 'geopoint'] as const;

export const MAX_BATCH_ITEMS = 100;

/** The body of both POST endpoints: a top-level array of 1 to MAX_BATCH_ITEMS items (spec 2 §4 rule 1); the one source of the limit. */
export const batchSchema = { type: 'array', minItems: 1, maxItems: MAX_BATCH_ITEMS } as const;

/** The reserved attributes of a contact: its schema's properties but the identity (core/ingest/values.ts types each). */
const contactProperties = {
  _user_id: { type: 'string', minLength: 1, maxLength: 256 },
  _first_name: { type: ['string', 'null'], maxLength: 256 },
  _last_name: { type: ['string', 'null'], maxLength: 256 },
  _email: { type: ['string', 'null'], maxLength: 254 },
  _phone_mobile: { type: ['string', 'null'], description: 'E.164, e.g. +4915112345678' },
  _country_code: { type: ['string', 'null'], pattern: '^[A-Z]{2}$' },
  _client_tags: { type: ['array', 'null'], items: { type: 'string', minLength: 1, maxLength: 128 } },
  _is_subscribed_sms: { type: ['boolean', 'null'] },
  _date_birthday: { type: ['string', 'null'], description: 'YYYY-MM-DD' },
  _date_imported: { type: ['string', 'null'], description: 'YYYY-MM-DD or ISO 8601 date-time with offset' },
  _geopoint: { type: ['object', 'null'], required: ['lat', 'lon'], additionalProperties: false, properties: { lat: { type: 'number', minimum: -90, maximum: 90 }, lon: { type: 'number', minimum: -180, maximum: 180 } } },
} as const;
export const NATIVE_NAMES = Object.keys(contactProperties).filter((name) => name !== '_user_id') as ReadonlyArray<Exclude<keyof typeof contactProperties, '_user_id'>>;

export const contactItemSchema = {
  $id: 'IngestContact',
  type: 'object',
  required: ['_user_id'],
  description: `A contact (spec 2 §2.1): \`_user_id\` plus attributes. Reserved attributes: ${NATIVE_NAMES.join(', ')}. ` +
    'Custom names: 1 to 64 letters, digits or underscores starting with a letter. An omitted attribute keeps its value; null clears it.',
  properties: contactProperties,
  additionalProperties: true,
} as const;

export const eventItemSchema = {
  $id: 'IngestEvent',
  type: 'object',
  required: ['_user_id', '_event_id', '_event_type', '_event_parameters'],
  additionalProperties: false,
  description: 'An event (spec 2 §2.2). A repeated `_event_id` in the datasource is stored once and reported success.',
  properties: {
    _user_id: { type: 'string', minLength: 1, maxLength: 256 },
    _event_id: { type: 'string', minLength: 1, maxLength: 256 },
    _event_type: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$' },
    _event_parameters: { type: 'object', additionalProperties: true },
    _event_date: { type: 'string', description: 'ISO 8601 date-time with Z or an offset; default: reception time' },
    _user_data: { type: 'object', additionalProperties: true, description: 'Contact attributes upserted before the event' },
  },
} as const;

export const itemOutcomeSchema = {
  $id: 'IngestItemOutcome',
  type: 'object',
  required: ['status', '_user_id'],
  properties: {
    status: { enum: ['success', 'error'] },
    _user_id: { type: ['string', 'null'] },
    _event_id: { type: ['string', 'null'], description: 'Events only' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'Attribute (or field path) → messages' },
  },
} as const;

export const batchOutcomeSchema = {
  $id: 'IngestBatchOutcome',
  type: 'object',
  required: ['entity'],
  properties: {
    entity: {
      type: 'object',
      required: ['successful', 'failed', 'items'],
      properties: { successful: { type: 'integer' }, failed: { type: 'integer' }, items: { type: 'array', items: { $ref: 'IngestItemOutcome' } } },
    },
  },
} as const;

export const messageErrorSchema = { $id: 'IngestError', type: 'object', required: ['message'], properties: { message: { type: 'string' } } } as const;

const usageCounts = {
  type: 'object',
  properties: { requests: { type: 'integer' }, accepted: { type: 'integer' }, failed: { type: 'integer' }, duplicates: { type: 'integer' }, skipped: { type: 'integer' } },
} as const;
const usageWindow = { type: 'object', properties: { contacts: usageCounts, events: usageCounts, delete: usageCounts } } as const;

export const streamInfoSchema = {
  $id: 'IngestStreamInfo',
  type: 'object',
  properties: {
    organization: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } },
    project: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } },
    datasource: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, strict: { type: 'boolean' }, createdAt: { type: 'string' } } },
    usage: { type: 'object', properties: { lastHour: usageWindow, lastDay: usageWindow } },
  },
} as const;

const specType = { enum: [...ATTRIBUTE_TYPES] } as const;
export const attributeSpecsSchema = {
  $id: 'IngestAttributeSpecs',
  type: 'object',
  properties: { entities: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, type: specType, source: { enum: ['native', 'declared', 'inferred'] } } } } },
} as const;
export const eventSpecsSchema = {
  $id: 'IngestEventSpecs',
  type: 'object',
  properties: {
    entities: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          eventType: { type: 'string' }, source: { enum: ['declared', 'inferred'] },
          parameters: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, type: specType, source: { enum: ['declared', 'inferred'] } } } },
        },
      },
    },
  },
} as const;

export const INGEST_SCHEMAS = [contactItemSchema, eventItemSchema, itemOutcomeSchema, batchOutcomeSchema, messageErrorSchema, streamInfoSchema, attributeSpecsSchema, eventSpecsSchema];

/** The ingestion paths of the OpenAPI document, relative to `base` (INGEST_BASE_PATH, default /ingest/v1), which each operation names as its server. */
export function ingestOpenApiPaths(base: string): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  // On every response (spec 2 §8).
  const headers = {
    'X-RateLimit-Limit': { required: true, schema: { type: 'integer' } },
    'X-RateLimit-Remaining': { required: true, schema: { type: 'integer' } },
    'X-RateLimit-Reset': { required: true, schema: { type: 'integer' }, description: 'Unix time' },
  };
  const message = (description: string) => ({ description, headers, ...json(ref('IngestError')) });
  const errors = {
    400: message(`Body malformed or wrong shape: not an array, wrong JSON, empty, more than ${MAX_BATCH_ITEMS} items`),
    415: message('The body is not sent as application/json (or a +json type) in UTF-8'),
    401: message('Token missing, malformed, revoked, or of a kind this API does not take'),
    404: message('Project or datasource unknown, or the token may not use it'),
    429: { description: 'Rate limit reached; retry after X-RateLimit-Reset; empty body', headers },
    500: message('Internal error; retry with exponential backoff'),
  };
  const params = [
    { name: 'project', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'datasource', in: 'path', required: true, schema: { type: 'string' } },
  ];
  const batch = (operationId: string, item: string, summary: string) => ({
    post: {
      operationId, summary, tags: ['ingestion'], parameters: params,
      requestBody: { required: true, ...json({ ...batchSchema, items: ref(item) }) },
      responses: {
        202: { description: 'Accepted; inspect items', headers, ...json(ref('IngestBatchOutcome')) },
        413: message('The body is over HTTP_BODY_LIMIT_BYTES, or one item is larger than the message bus carries in one piece'),
        422: { description: 'Every item failed', headers, ...json(ref('IngestBatchOutcome')) },
        ...errors,
      },
    },
  });
  const root = '/project/{project}/datasource/{datasource}/stream';
  const paths: Record<string, Record<string, unknown>> = {
    [`${root}/contacts`]: batch('ingestContacts', 'IngestContact', `Upsert up to ${MAX_BATCH_ITEMS} contacts`),
    [`${root}/contacts/{userId}`]: {
      get: {
        operationId: 'getIngestedContact', summary: 'Read one contact: this datasource\'s attributes, the merged audience record, its event count (beyond spec 2)', tags: ['ingestion'],
        parameters: [...params, { name: 'userId', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 } }],
        responses: { 200: { description: 'The contact', headers, ...json({ type: 'object', properties: { entity: { type: 'object' } } }) }, ...errors },
      },
      delete: {
        operationId: 'deleteContact', summary: 'Delete a contact and its events', tags: ['ingestion'],
        parameters: [...params, { name: 'userId', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 } }],
        responses: { 204: { description: 'Deleted (also when it did not exist)', headers }, ...errors },
      },
    },
    [`${root}/events`]: batch('ingestEvents', 'IngestEvent', `Append up to ${MAX_BATCH_ITEMS} events`),
    [root]: { get: { operationId: 'getStream', summary: 'Credential probe, datasource and usage', tags: ['ingestion'], parameters: params, responses: { 200: { description: 'Valid', headers, ...json(ref('IngestStreamInfo')) }, ...errors } } },
    [`${root}/specs/attributes`]: { get: { operationId: 'getAttributeSpecs', summary: 'Attributes the datasource accepts', tags: ['ingestion'], parameters: params, responses: { 200: { description: 'Attribute specs', headers, ...json(ref('IngestAttributeSpecs')) }, ...errors } } },
    [`${root}/specs/events`]: { get: { operationId: 'getEventSpecs', summary: 'Event types and parameters the datasource accepts', tags: ['ingestion'], parameters: params, responses: { 200: { description: 'Event specs', headers, ...json(ref('IngestEventSpecs')) }, ...errors } } },
  };
  // The document's default server is the SMS API's base: every ingestion operation names its own.
  const servers = [{ url: base }];
  return Object.fromEntries(Object.entries(paths).map(([path, item]) => [path, Object.fromEntries(Object.entries(item).map(([method, op]) => [method, { servers, ...(op as object) }]))]));
}
