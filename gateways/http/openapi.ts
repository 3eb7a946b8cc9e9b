// The OpenAPI 3.1 document served at /openapi.json, assembled from the same JSON Schemas
// that ajv validates with (schemas/sms.ts), so the contract and the code cannot drift.
// It lives with the HTTP gateway because it also reads the error registry (core/errors.ts) and
// Grammar A's catalogues (core/filters): schemas/ imports nothing of the project.
import {
  balanceSchema, bulkErrorSchema, dlrHistoryEntrySchema, dlrSchema, groupCountSchema, ID_PATTERN, lookupCreateSchema, lookupSchema, MAX_BULK_ITEMS, priceEntrySchema, problemSchema,
  rateLimitedSchema, smsBulkSchema, smsCreateItemSchema, smsSchema, validationErrorSchema,
} from '../../schemas/sms';
import { smsQuoteItemSchema, smsQuoteTotalSchema } from '../../schemas/sms';
import { ERRORS as ERROR_REGISTRY } from '../../core/errors';
import { LOOKUP_FIELDS, MAX_LIMIT, SMS_FIELDS, type Catalogue } from '../../core/filters/grammar-a';
import {
  aggregationSchema, audienceContactSchema, audienceNodeSchema, audienceSearchResponseSchema, audienceSearchSchema, SEGMENT_SLUG_PATTERN, segmentCreateSchema,
} from '../../schemas/audience';
import { INGEST_SCHEMAS, ingestOpenApiPaths } from '../../schemas/ingest';
import { STATS_GROUP_TOKENS, STATS_MAX_LIMIT } from '../../core/filters/grammar-a/stats';
import { ADMIN_BASE, ADMIN_SCHEMAS } from '../../schemas/admin';

const SCHEMAS = [
  smsCreateItemSchema, smsBulkSchema, smsSchema, lookupCreateSchema, lookupSchema, balanceSchema, priceEntrySchema, dlrSchema, problemSchema, validationErrorSchema,
  bulkErrorSchema, rateLimitedSchema, groupCountSchema, dlrHistoryEntrySchema,
  audienceNodeSchema, aggregationSchema, audienceSearchSchema, segmentCreateSchema, audienceContactSchema, audienceSearchResponseSchema,
  ...INGEST_SCHEMAS,
  smsQuoteItemSchema, smsQuoteTotalSchema,
];

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
// spec 1 §8: on every response, so required on every documented one.
const rateHeaders = {
  'X-RateLimit-Limit': { required: true, schema: { type: 'integer', minimum: 0 }, description: 'Requests allowed in the window' },
  'X-RateLimit-Remaining': { required: true, schema: { type: 'integer', minimum: 0 }, description: 'Requests left in the window' },
  'X-RateLimit-Reset': { required: true, schema: { type: 'integer', minimum: 0 }, description: 'Unix time of the counter reset' },
};
/** Response bodies other than a Problem (spec 1 §7). */
const ERROR_BODIES: Readonly<Record<number, string>> = { 422: 'ValidationError', 429: 'RateLimited' };
/**
 * One error response per HTTP status, described from the error registry (core/errors.ts), the
 * same table the handlers answer from, so the document cannot promise another meaning.
 */
function errorResponse(status: number): Record<string, unknown> {
  const entries = Object.entries(ERROR_REGISTRY).filter(([, e]) => e.status === status && !('console' in e));
  if (entries.length === 0) throw new Error(`no error code answers HTTP ${status}`);
  return { description: entries.map(([code, e]) => `${code}: ${e.description}`).join(' '), headers: rateHeaders, ...json(ref(ERROR_BODIES[status] ?? 'Problem')) };
}
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), errorResponse(c)]));
const ok = (status: number, schema: unknown, links?: Record<string, unknown>) => ({ [status]: { description: 'Success', headers: rateHeaders, ...json(schema), ...(links ? { links } : {}) } });
/** The created resource's id feeds the operations that read it (OpenAPI links). */
const readBack = (...operationIds: string[]) => Object.fromEntries(operationIds.map((operationId) => [operationId, { operationId, parameters: { id: '$response.body#/entity/id' } }]));
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** What the list endpoints enforce (core/filters/grammar-a, docs/grammar-a.md); a request breaking it is a 400. */
function listParams(catalogue: Catalogue): unknown[] {
  const field = `(?:${catalogue.map((f) => escapeRegExp(f.name)).join('|')})`;
  const key = `\\s*${field}(?::[+-]?)?\\s*`;
  const exclusive = 'Cannot be combined with `_q` (400).';
  return [
    { name: '_sort', in: 'query', schema: { type: 'string', pattern: `^${key}(?:,${key})*$` }, description: `Comma-separated fields of the catalogue; \`:-\` descending. ${exclusive}` },
    { name: '_start', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 999_999_999_999_999 }, description: `Offset; only together with \`_limit\` (400 alone). ${exclusive}` },
    { name: '_limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT }, description: `Page size; only together with \`_start\` (400 alone). ${exclusive}` },
    { name: '_group', in: 'query', schema: { type: 'string', enum: ['hourly', 'daily', 'monthly', ...catalogue.map((f) => f.name)] }, description: `Count per time bucket or field value: the entities are then GroupCount objects. ${exclusive}` },
    {
      name: '_q', in: 'query', schema: { type: 'string', contentMediaType: 'application/json' },
      description: 'Grammar A JSON form `{ filter, sort, paging, group }`. Exclusive: with `_q`, no other filter, `_sort`, `_start`, `_limit` or `_group` parameter may be given (400). The URL form `<field>_<operator>=<value>` (docs/grammar-a.md) is not listed as parameters; an unknown field or operator is a 400.',
    },
  ];
}
const idParam = [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: ID_PATTERN }, description: 'A UUIDv7; any other value is a 400, an unknown or foreign id a 404.' }];
const listOf = (item: string) => ({ type: 'object', required: ['entities'], properties: { entities: { type: 'array', items: { anyOf: [ref(item), ref('GroupCount')] } } } });

/** The base path of each API the document describes (config INGEST_BASE_PATH, AUDIENCE_BASE_PATH). */
export interface ApiBases {
  readonly ingest: string;
  readonly audience: string;
}

export const DEFAULT_API_BASES: ApiBases = { ingest: '/ingest/v1', audience: '/audience/v1' };
/** The SMS API's base (gateways/http/app.ts SMS_API_BASE): the document's default server. */
const SMS_SERVERS = [{ url: '/transactional/v1' }];

/**
 * The paths of another API under its own base: the server on the path item (and on each
 * operation), so that a client reading either level, not only the document's default server,
 * calls a real URL.
 */
function underBase(paths: Record<string, unknown>, base: string): Record<string, unknown> {
  const servers = [{ url: base }];
  return Object.fromEntries(Object.entries(paths).map(([path, item]) => [path, {
    servers,
    ...Object.fromEntries(Object.entries(item as Record<string, object>).map(([method, op]) => [method, { ...op, servers }])),
  }]));
}
const projectParam = { name: 'project', in: 'path', required: true, schema: { type: 'string' }, description: 'The project of the product token; another or unknown project is a 404.' };
const slugParam = { name: 'slug', in: 'path', required: true, schema: { type: 'string', pattern: SEGMENT_SLUG_PATTERN } };
const segmentEntity = { type: 'object', properties: { slug: { type: 'string' }, name: { type: 'string' }, root: ref('AudienceNode'), createdAt: { type: 'string' }, updatedAt: { type: 'string' } } };
const AUDIENCE_PATHS = {
  '/project/{project}/audience/search': {
    post: {
      operationId: 'searchAudience', summary: 'Search contacts with the audience filter (Grammar B). Product token with audience:search; aggregations also need PROJECT_AGGREGATIONS (else 400).',
      parameters: [projectParam], requestBody: { required: true, ...json(ref('AudienceSearch')) },
      responses: { ...ok(200, ref('AudienceSearchResponse')), ...errors(400, 401, 404, 413, 415, 429, 500) },
    },
  },
  '/project/{project}/segments': {
    get: { operationId: 'listSegments', summary: 'Segments of the project', parameters: [projectParam], responses: { ...ok(200, { type: 'object', properties: { entities: { type: 'array', items: segmentEntity } } }), ...errors(401, 404, 429, 500) } },
    post: {
      operationId: 'putSegment', summary: 'Create (201) or replace (200) a segment; a cycle or nesting deeper than 4 is a 400', parameters: [projectParam],
      requestBody: { required: true, ...json(ref('AudienceSegmentCreate')) },
      responses: { ...ok(201, { type: 'object', properties: { entity: segmentEntity } }), ...ok(200, { type: 'object', properties: { entity: segmentEntity } }), ...errors(400, 401, 404, 413, 415, 429, 500) },
    },
  },
  '/project/{project}/segments/{slug}': {
    get: { operationId: 'getSegment', summary: 'One segment', parameters: [projectParam, slugParam], responses: { ...ok(200, { type: 'object', properties: { entity: segmentEntity } }), ...errors(401, 404, 429, 500) } },
    delete: { operationId: 'deleteSegment', summary: 'Delete a segment (filters using it then match none)', parameters: [projectParam, slugParam], responses: { 204: { description: 'Deleted', headers: rateHeaders }, ...errors(401, 404, 429, 500) } },
  },
};

/** POST /analytics/v1/sql (docs/analytics.md): analysts' SQL over the organization's documented relations. */
const ANALYTICS_BASE = '/analytics/v1';
const ANALYTICS_PATHS = {
  '/sql': {
    post: {
      operationId: 'analyticsSql',
      summary: 'Run one read-only SELECT over the documented relations of the token\'s organization (messages, dlrs, webhook_attempts, lookups, contacts, events; docs/analytics.md), with ceilings. Product token with analytics:read (else 404).',
      requestBody: {
        required: true,
        ...json({
          type: 'object', required: ['query'], additionalProperties: false,
          properties: {
            query: { type: 'string', minLength: 1, maxLength: 100_000, description: 'One SELECT (or WITH ... SELECT, UNION of selects) over the documented relations, unqualified; no SETTINGS or FORMAT clause' },
            format: { type: 'string', enum: ['JSON', 'CSV', 'JSONEachRow', 'Parquet'], default: 'JSON', description: 'Output format (ClickHouse\'s); 64-bit integers are strings in JSON formats' },
          },
        }),
      },
      responses: {
        200: {
          description: 'The query\'s output in the requested format', headers: rateHeaders,
          content: {
            'application/json': { schema: { type: 'object', properties: { meta: { type: 'array' }, data: { type: 'array' }, rows: { type: 'integer' }, statistics: { type: 'object' } } } },
            'application/x-ndjson': { schema: { type: 'string' } },
            'text/csv': { schema: { type: 'string' } },
            'application/vnd.apache.parquet': { schema: { type: 'string', contentEncoding: 'binary' } },
          },
        },
        ...errors(400, 401, 404, 413, 415, 429, 500),
      },
    },
  },
};

/** GET /sms/stats, GET /lookup/stats (docs/grammar-a.md, "Statistics"): the list filter, `_group` of stats tokens, paging of the rows, no `_sort`. */
function statsParams(): unknown[] {
  const token = `(?:${STATS_GROUP_TOKENS.join('|')})`;
  return [
    {
      name: '_group', in: 'query', schema: { type: 'string', pattern: `^${token}(?:,${token}){0,${STATS_GROUP_TOKENS.length - 1}}$` },
      description: 'Comma-separated keys of the rows: at most one of hourly, daily, monthly (UTC start of the period, key `period`), and country, status; each once (a repeated or unknown key is a 400). Without it: one row of totals.',
    },
    { name: '_start', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 999_999_999_999_999 }, description: 'Offset into the rows; only together with `_limit`.' },
    { name: '_limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: STATS_MAX_LIMIT }, description: 'Rows per page (default 1000); only together with `_start`.' },
    { name: '_q', in: 'query', schema: { type: 'string', contentMediaType: 'application/json' }, description: 'Grammar A JSON form `{ filter, paging, group }` (no `sort`: rows are ordered by their keys, `_sort` is a 400); exclusive with the URL parameters.' },
  ];
}
const statsKeyProps = {
  period: { type: 'string', description: 'Start of the hour, day or month, ISO 8601 UTC (with hourly, daily or monthly)' },
  country: { type: 'string' },
  status: { type: 'string' },
};
const count = { type: 'integer', minimum: 0 };
const smsStatsRow = {
  type: 'object',
  required: ['messages', 'segments', 'delivered', 'failed', 'expired', 'rejected', 'error', 'canceled', 'unknown', 'pending', 'deliveryRate', 'cost', 'currency', 'p50DeliverySeconds'],
  properties: {
    ...statsKeyProps, messages: count, segments: count, delivered: count, failed: count, expired: count, rejected: count, error: count, canceled: count, unknown: count,
    pending: { ...count, description: 'Not in a final status yet' },
    deliveryRate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'delivered / messages in a final status; null when none is final' },
    cost: { type: 'number', description: 'Sum of priceUser of the charged messages' },
    currency: { type: 'string' },
    p50DeliverySeconds: { type: ['number', 'null'], description: 'Median createdAt to deliveredAt of the delivered messages, in seconds: exact below 0.748 s, within 0.07 % + 1 ms above (docs/grammar-a.md, Statistics); null when none' },
  },
};
const lookupStatsRow = {
  type: 'object',
  required: ['lookups', 'delivered', 'failed', 'active', 'absent', 'unknown', 'ported', 'roaming', 'cost', 'currency'],
  properties: {
    ...statsKeyProps, lookups: count, delivered: count, failed: count,
    active: { ...count, description: 'subscriberStatus active' }, absent: { ...count, description: 'subscriberStatus absent' }, unknown: { ...count, description: 'subscriberStatus unknown' },
    ported: count, roaming: count, cost: { type: 'number', description: 'Sum of pricePerSms of the charged lookups' }, currency: { type: 'string' },
  },
};
const statsOf = (row: unknown) => ({ type: 'object', required: ['entities'], properties: { entities: { type: 'array', items: row } } });

/** A project's opt-out list (DESIGN §4 "Two-way"; gateways/http/opt-outs-api.ts), api_sms tokens. */
const optOutEntry = {
  type: 'object', required: ['number', 'since', 'source'],
  properties: {
    number: { type: 'string', description: '+E.164' }, since: { type: 'string', format: 'date-time' },
    source: { type: 'string', enum: ['keyword', 'api'], description: 'An inbound STOP-family keyword, or POST /opt-outs (and the admin CLI)' },
    keyword: { type: 'string', description: 'The keyword that opted the number out (source keyword)' },
  },
};
const OPT_OUT_PATHS = {
  '/opt-outs': {
    get: {
      operationId: 'listOptOuts', summary: 'The numbers opted out of the token\'s project, sorted by number; a send to one is a 422 on `to`. Paging only (`_start` with `_limit`).',
      parameters: (listParams([]) as Array<{ name: string }>).filter((p) => p.name === '_start' || p.name === '_limit'),
      responses: { ...ok(200, { type: 'object', required: ['entities'], properties: { entities: { type: 'array', items: optOutEntry } } }), ...errors(400, 401, 429, 500) },
    },
    post: {
      operationId: 'addOptOut', summary: 'Opt a number out of the token\'s project (the number checked as a send\'s `to`: 422 otherwise)',
      requestBody: { required: true, ...json({ type: 'object', required: ['to'], additionalProperties: false, properties: { to: { type: 'string', description: '+E.164' } } }) },
      responses: { ...ok(201, { type: 'object', properties: { entity: optOutEntry } }), ...errors(400, 401, 413, 415, 422, 429, 500) },
    },
  },
  '/opt-outs/{number}': {
    delete: {
      operationId: 'removeOptOut', summary: 'Opt a number back in (404 when it is not opted out of the token\'s project)',
      parameters: [{ name: 'number', in: 'path', required: true, schema: { type: 'string' }, description: '+E.164 (the + may be sent as %2B)' }],
      responses: { 204: { description: 'Removed', headers: rateHeaders }, ...errors(401, 404, 429, 500) },
    },
  },
};

/**
 * The admin API (DESIGN §4 "Provisioning over HTTP"; gateways/http/admin-api.ts), served when
 * ADMIN_TOKEN is set. Its own bearer scheme and error bodies: every error is a Problem (a 422
 * adds `fields`); no access_token, no rate-limit counters of an organization.
 */
const adminSecurity = [{ adminToken: [] }];
const adminErrors = (...codes: number[]) => Object.fromEntries(codes.map((c) => {
  const described = errorResponse(c) as { description: string };
  return [String(c), { description: described.description, ...json(c === 422 ? { allOf: [ref('Problem'), { type: 'object', properties: { fields: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } } }] } : ref('Problem')) }];
}));
const adminDone = (status: number, entity: unknown, description: string) => ({ [status]: { description, ...json({ type: 'object', required: ['entity'], properties: { entity } }) } });
const adminBody = (name: string) => ({ required: true, ...json(ref(name)) });
const orgParam = { name: 'org', in: 'path', required: true, schema: { type: 'string' }, description: 'Organization id; unknown is a 404' };
const adminIds = (...names: string[]) => [orgParam, ...names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' }, description: `${name} id of the organization; unknown or another organization's is a 404` }))];
const ADMIN_WRITE_ERRORS = [400, 401, 404, 413, 415, 422, 500];
const adminOp = (operationId: string, summary: string, body: string, responses: Record<string, unknown>, parameters: unknown[] = [orgParam]) => ({
  operationId, summary, tags: ['admin'], security: adminSecurity, ...(parameters.length > 0 ? { parameters } : {}), requestBody: adminBody(body), responses: { ...responses, ...adminErrors(...ADMIN_WRITE_ERRORS) },
});
const adminOrg = { type: 'object', required: ['id', 'name', 'currency', 'smppEnabled', 'createdAt'], properties: { id: { type: 'string' }, name: { type: 'string' }, currency: { type: 'string' }, smppEnabled: { type: 'boolean' }, createdAt: { type: 'string', format: 'date-time' } } };
const adminProject = { type: 'object', required: ['id', 'orgId', 'name', 'createdAt'], properties: { id: { type: 'string' }, orgId: { type: 'string' }, name: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' } } };
const adminBalance = { type: 'object', required: ['organization', 'currency', 'available'], properties: { organization: { type: 'string' }, currency: { type: 'string' }, available: { type: 'number' } } };
const ADMIN_PATHS = {
  '/organizations': { post: adminOp('adminCreateOrganization', 'Create an organization (with a zero balance in its currency)', 'AdminOrganizationCreate', adminDone(201, adminOrg, 'Created'), []) },
  '/organizations/{org}/projects': { post: adminOp('adminCreateProject', 'Create a project of the organization', 'AdminProjectCreate', adminDone(201, adminProject, 'Created')) },
  '/organizations/{org}/tokens': {
    post: adminOp('adminCreateToken', 'Create a token (api_sms, legacy, datasource, product). Its value is in this answer only (stored as a SHA-256 hash); the answer comes once the serving process authenticates it.', 'AdminTokenCreate', adminDone(201, {
      type: 'object', required: ['id', 'kind', 'organization', 'value'],
      properties: { id: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, organization: { type: 'string' }, project: { type: ['string', 'null'] }, datasource: { type: ['string', 'null'] }, scopes: { type: 'array', items: { type: 'string' } }, createdAt: { type: 'string' }, value: { type: 'string', description: 'The token value, shown once' } },
    }, 'Created')),
  },
  '/organizations/{org}/balance': { put: adminOp('adminSetBalance', 'Set the available balance', 'AdminBalanceSet', adminDone(200, adminBalance, 'The balance now')) },
  '/organizations/{org}/balance/top-up': { post: adminOp('adminTopUp', 'Add funds, atomically (safe beside live traffic)', 'AdminTopUp', adminDone(200, adminBalance, 'The balance now')) },
  '/organizations/{org}/prices': {
    post: adminOp('adminSetPrice', 'Set the price of an SMS segment (kind sms) or a lookup (kind lookup) to a country', 'AdminPriceSet', adminDone(200, {
      type: 'object', required: ['kind', 'country', 'currency', 'price'], properties: { kind: { type: 'string' }, country: { type: 'string' }, currency: { type: 'string' }, price: { type: 'number' } },
    }, 'The price now')),
  },
  '/organizations/{org}/tokens/{token}/webhook': {
    put: adminOp('adminSetWebhook', 'Set the DLR webhook of an api_sms token (public HTTPS unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true); the answer carries the receiver\'s whsec_ signing secret', 'AdminWebhookSet', adminDone(200, {
      type: 'object', required: ['token', 'url', 'secret'], properties: { token: { type: 'string' }, url: { type: 'string' }, secret: { type: 'string', description: 'Standard Webhooks secret (whsec_...) for the receiver' } },
    }, 'The webhook now'), adminIds('token')),
  },
  '/organizations/{org}/projects/{project}/datasources': {
    post: adminOp('adminCreateDatasource', 'Create a datasource of a project (ingestion, spec 2); its tokens: POST /organizations/{org}/tokens with kind datasource', 'AdminDatasourceCreate', adminDone(201, {
      type: 'object', required: ['id', 'orgId', 'projectId', 'name', 'strict', 'createdAt'], properties: { id: { type: 'string' }, orgId: { type: 'string' }, projectId: { type: 'string' }, name: { type: 'string' }, strict: { type: 'boolean' }, createdAt: { type: 'string' } },
    }, 'Created'), adminIds('project')),
  },
};

/** `admin`: document the admin API (served when ADMIN_TOKEN is set). */
export function openApiDocument(bases: ApiBases = DEFAULT_API_BASES, options: { readonly admin?: boolean } = {}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'SMS API', version: '1.0.0', description: 'Transactional SMS API v1 (spec 1). Filters: Grammar A (docs/grammar-a.md).' },
    servers: SMS_SERVERS,
    security: [{ bearer: [] }, { accessToken: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        accessToken: { type: 'apiKey', in: 'query', name: 'access_token', description: 'For quick checks only (spec 1 §5). Never together with an Authorization header: conflicting credentials are a 401.' },
        ...(options.admin ? { adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN of the deployment (the admin API only; never in a query string)' } } : {}),
      },
      schemas: Object.fromEntries([...SCHEMAS, ...(options.admin ? ADMIN_SCHEMAS : [])].map((s) => [s.$id, component(s)])),
    },
    paths: {
      // The ingestion API (spec 2, docs/ingestion.md) and the audience API (spec 3 §4.2) under their base paths.
      ...underBase(ingestOpenApiPaths(bases.ingest), bases.ingest),
      '/sms': {
        get: { operationId: 'listSms', summary: 'List messages', parameters: listParams(SMS_FIELDS), responses: { ...ok(200, listOf('Sms')), ...errors(400, 401, 429, 500) } },
        post: { operationId: 'sendSms', summary: 'Send one SMS', requestBody: { required: true, ...json(ref('SmsCreateItem')) }, responses: { ...ok(201, { type: 'object', properties: { entity: ref('Sms') } }, readBack('getSms', 'getSmsDlrs')), ...errors(400, 401, 402, 413, 415, 422, 429, 500) } },
      },
      '/sms/bulk': {
        post: {
          operationId: 'sendSmsBulk', summary: `Send up to ${MAX_BULK_ITEMS} SMS`, requestBody: { required: true, ...json(ref('SmsBulk')) },
          responses: { ...ok(201, { type: 'object', properties: { entities: { type: 'array', items: ref('Sms') }, errors: { type: 'array', items: ref('BulkError') } } }), ...errors(400, 401, 402, 413, 415, 422, 429, 500) },
        },
      },
      '/sms/quote': {
        post: {
          operationId: 'quoteSms',
          summary: `Price without sending (DESIGN §4): the body of POST /sms (an object) or of POST /sms/bulk (an array of 1 to ${MAX_BULK_ITEMS}), checked and priced as a send would; nothing is charged, queued or claimed. An object answers { entity, total } or the error a single send would (400, 422); an array { entities, errors, total } with the bulk's per-item errors (413 beyond ${MAX_BULK_ITEMS} items, 422 when empty). A clientId a send would replay is priced as new.`,
          requestBody: { required: true, ...json({ oneOf: [ref('SmsCreateItem'), ref('SmsBulk')] }) },
          responses: {
            ...ok(200, {
              oneOf: [
                { type: 'object', required: ['entity', 'total'], properties: { entity: ref('SmsQuoteItem'), total: ref('SmsQuoteTotal') } },
                { type: 'object', required: ['entities', 'errors', 'total'], properties: { entities: { type: 'array', items: ref('SmsQuoteItem') }, errors: { type: 'array', items: ref('BulkError') }, total: ref('SmsQuoteTotal') } },
              ],
            }),
            ...errors(400, 401, 413, 415, 422, 429, 500),
          },
        },
      },
      '/sms/{id}': { get: { operationId: 'getSms', summary: 'Read one message', parameters: idParam, responses: { ...ok(200, { type: 'object', properties: { entity: ref('Sms') } }), ...errors(400, 401, 404, 429, 500) } } },
      '/sms/{id}/cancel': {
        post: {
          operationId: 'cancelSms',
          summary: 'Cancel a scheduled message (DESIGN §4 Scheduling): while its status is `scheduled` it becomes `canceled` (200 with the message), its charge is refunded and a `canceled` DLR goes to the webhook. Once it left (any other status, including canceled already) 409; an id the token does not see 404. 503 while the lifecycle worker has not registered its timer yet (retry).',
          parameters: idParam,
          responses: { ...ok(200, { type: 'object', properties: { entity: ref('Sms') } }), ...errors(400, 401, 404, 409, 429, 500, 503) },
        },
      },
      '/sms/{id}/dlrs': {
        get: {
          operationId: 'getSmsDlrs', summary: 'Status transitions of one message and its webhook attempts (beyond spec 1; docs/lifecycle.md)', parameters: idParam,
          responses: { ...ok(200, { type: 'object', required: ['entities'], properties: { entities: { type: 'array', items: ref('DlrHistoryEntry') }, workflow: { type: 'object', description: 'The Temporal workflow that holds the message (operations): its id and, for a batch, its first run', required: ['id', 'firstRunId'], properties: { id: { type: 'string' }, firstRunId: { type: ['string', 'null'] } } } } }), ...errors(400, 401, 404, 429, 500) },
        },
      },
      '/lookup': {
        get: { operationId: 'listLookups', summary: 'List lookups', parameters: listParams(LOOKUP_FIELDS), responses: { ...ok(200, listOf('Lookup')), ...errors(400, 401, 429, 500) } },
        post: { operationId: 'createLookup', summary: 'Look up a number (HLR)', requestBody: { required: true, ...json(ref('LookupCreate')) }, responses: { ...ok(201, { type: 'object', properties: { entity: ref('Lookup') } }, readBack('getLookup')), ...errors(400, 401, 402, 413, 415, 422, 429, 500) } },
      },
      '/lookup/{id}': { get: { operationId: 'getLookup', summary: 'Read one lookup', parameters: idParam, responses: { ...ok(200, { type: 'object', properties: { entity: ref('Lookup') } }), ...errors(400, 401, 404, 429, 500) } } },
      '/organization/account': { get: { operationId: 'getBalance', summary: 'Balance', responses: { ...ok(200, { type: 'object', properties: { entity: ref('Balance') } }), ...errors(400, 401, 429, 500) } } },
      '/sms/price-profile/me/countries': { get: { operationId: 'getSmsPrices', summary: 'SMS prices per country (per segment)', responses: { ...ok(200, { type: 'object', properties: { entities: { type: 'array', items: ref('PriceEntry') } } }), ...errors(400, 401, 429, 500) } } },
      '/lookup/price-profile/me/countries': { get: { operationId: 'getLookupPrices', summary: 'Lookup prices per country', responses: { ...ok(200, { type: 'object', properties: { entities: { type: 'array', items: ref('PriceEntry') } } }), ...errors(400, 401, 429, 500) } } },
      '/sms/stats': { get: { operationId: 'getSmsStats', summary: 'Delivery statistics of messages: the filter of GET /sms, one row per _group (docs/grammar-a.md, Statistics)', parameters: statsParams(), responses: { ...ok(200, statsOf(smsStatsRow)), ...errors(400, 401, 429, 500) } } },
      '/lookup/stats': { get: { operationId: 'getLookupStats', summary: 'Statistics of lookups: the filter of GET /lookup, one row per _group (docs/grammar-a.md, Statistics)', parameters: statsParams(), responses: { ...ok(200, statsOf(lookupStatsRow)), ...errors(400, 401, 429, 500) } } },
      ...OPT_OUT_PATHS,
      ...underBase(AUDIENCE_PATHS, bases.audience),
      ...underBase(ANALYTICS_PATHS, ANALYTICS_BASE),
      ...(options.admin ? underBase(ADMIN_PATHS, ADMIN_BASE) : {}),
    },
    webhooks: {
      dlr: { post: { summary: 'Delivery report (spec 1 §2.6)', requestBody: json(ref('Dlr')), responses: { 200: { description: 'Any 2xx acknowledges' } } } },
    },
  };
}
