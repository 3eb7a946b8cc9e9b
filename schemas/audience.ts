// Wire contracts of the audience filter (spec 3 §2.3, §4.2): the JSON Schemas ajv checks the
// *shape* with (core/filters/grammar-b/parse.ts), the OpenAPI document shows, and the segment
// endpoints take. Operator-specific `values` shapes and the rules of §2.4 and §8 are checked by
// the parser after the shape, because their messages must name the operator and the rule.

export const AUDIENCE_FILTER_VERSION = '0.0.1';

export const NODE_TYPES = ['group', 'attribute_condition', 'event_condition', 'group_event', 'segment_condition'] as const;

/** The fields each node type takes (spec 3 §2.3 node table); any other is refused. */
export const NODE_FIELDS = {
  group: ['type', 'join', 'children'],
  attribute_condition: ['type', 'key', 'operator', 'values'],
  event_condition: ['type', 'key', 'operator', 'values'],
  group_event: ['type', 'event', 'datasource', 'join', 'children'],
  segment_condition: ['type', 'key', 'operator', 'values'],
} as const satisfies Record<(typeof NODE_TYPES)[number], readonly string[]>;

/** A name that cannot be a key of a JavaScript object built from it (an aggregation name). */
const usableName = { not: { const: '__proto__' } } as const;

export const audienceNodeSchema = {
  $id: 'AudienceNode',
  type: 'object',
  description: 'spec 3 §2.3 node: group, attribute_condition, event_condition (inside group_event only), group_event, segment_condition.',
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: NODE_TYPES },
    join: { type: 'string', enum: ['and', 'or'], description: 'group and group_event; default "and" (docs/grammar-b.md).' },
    children: { type: 'array', maxItems: 200, items: { $ref: 'AudienceNode' } },
    key: { type: 'string', maxLength: 128, description: 'attribute UID, event attribute, or segment slug.' },
    operator: { type: 'string', maxLength: 64 },
    values: { description: 'shape depends on the operator (spec 3 §2.4).' },
    event: { type: 'string', minLength: 1, maxLength: 128, description: 'group_event: the event type.' },
    datasource: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 128 } },
  },
  allOf: Object.entries(NODE_FIELDS).map(([type, fields]) => ({
    if: { properties: { type: { const: type } }, required: ['type'] },
    then: { propertyNames: { enum: fields } },
  })),
} as const;

const idList = { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 256 } } as const;
const bucketList = { type: 'array', maxItems: 200, items: { type: 'integer', minimum: 0, maximum: 199 } } as const;

export const aggregationSchema = {
  $id: 'AudienceAggregation',
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['terms', 'range', 'nested'] },
    params: { type: 'object' },
    aggs: { type: 'object', maxProperties: 10, propertyNames: usableName, additionalProperties: { $ref: 'AudienceAggregation' } },
  },
} as const;

export const audienceSearchSchema = {
  $id: 'AudienceSearch',
  type: 'object',
  description: 'spec 3 §2.3: the audience filter object; `version` is required (spec 3 §9) unless the request continues a `cursor`, whose filter comes from the cursor.',
  additionalProperties: false,
  if: { not: { required: ['cursor'] } },
  then: { required: ['version'] },
  properties: {
    version: { type: 'string', const: AUDIENCE_FILTER_VERSION },
    root: { $ref: 'AudienceNode' },
    limit: { type: 'integer', minimum: 0, maximum: 1000, description: 'default 50, at most 1000; 0 with aggregations only.' },
    offset: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    sortField: { type: 'string', maxLength: 64 },
    sortAsc: { type: 'boolean' },
    includeAllData: { type: 'boolean' },
    cursor: { type: 'string', minLength: 1, maxLength: 200_000 },
    aggregations: { type: 'object', maxProperties: 10, propertyNames: usableName, additionalProperties: { $ref: 'AudienceAggregation' } },
    filterAudienceIds: idList,
    filterNotAudienceIds: idList,
    filterContactIds: idList,
    filterDatasourceIds: idList,
    filterUniversalSearch: { type: 'string', maxLength: 128 },
    filterSamplingPercent: { type: 'number', minimum: 0, maximum: 100 },
    filterBucketMin: { type: 'integer', minimum: 0, maximum: 199 },
    filterBucketMax: { type: 'integer', minimum: 0, maximum: 199 },
    filterBucketIn: bucketList,
    filterBucketNotIn: bucketList,
  },
} as const;

export const SEGMENT_SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

export const segmentCreateSchema = {
  $id: 'AudienceSegmentCreate',
  type: 'object',
  required: ['slug', 'root'],
  additionalProperties: false,
  properties: {
    slug: { type: 'string', pattern: SEGMENT_SLUG_PATTERN, description: 'lower-case; `_all` is built in and cannot be stored.' },
    name: { type: 'string', maxLength: 200 },
    version: { type: 'string', const: AUDIENCE_FILTER_VERSION },
    root: { $ref: 'AudienceNode' },
  },
} as const;

export const audienceContactSchema = {
  $id: 'AudienceContact',
  type: 'object',
  description: 'One contact. With includeAllData:false only _user_id, _audience_id and _datasource_ids.',
  properties: {
    _user_id: { type: 'string' },
    _audience_id: { type: 'string' },
    _datasource_ids: { type: 'array', items: { type: 'string' } },
    _first_name: { type: ['string', 'null'] },
    _last_name: { type: ['string', 'null'] },
    _email: { type: ['string', 'null'] },
    _phone_mobile: { type: ['string', 'null'] },
    _country_code: { type: ['string', 'null'] },
    _client_tags: { type: 'array', items: { type: 'string' } },
    _tags: { type: 'array', items: { type: 'string' } },
    _is_subscribed_sms: { type: ['boolean', 'null'] },
    _date_birthday: { type: ['string', 'null'], description: 'YYYY-MM-DD' },
    _date_imported: { type: ['string', 'null'], description: 'ISO 8601 UTC' },
    _geopoint: { type: ['object', 'null'], properties: { latitude: { type: 'number' }, longitude: { type: 'number' } } },
    _bucket: { type: 'integer' },
  },
  additionalProperties: { description: 'custom attributes by UID' },
} as const;

export const audienceSearchResponseSchema = {
  $id: 'AudienceSearchResponse',
  type: 'object',
  required: ['entities', 'total', 'cursor'],
  properties: {
    entities: { type: 'array', items: { $ref: 'AudienceContact' } },
    total: { type: 'integer', description: 'all matches, ignoring paging' },
    cursor: { type: ['string', 'null'], description: 'continues after the last entity; null at the end; expires after 5 minutes' },
    aggregations: { type: 'object', description: 'per name: { buckets: [{ key, count, aggregations? }], other? }' },
  },
} as const;
