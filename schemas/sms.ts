// Wire contracts of the SMS API (spec 1 §2): the JSON Schemas are the single source for ajv
// validation (core/sms/validate.ts), the TypeScript types (FromSchema) and the
// OpenAPI document (gateways/http/openapi.ts). `x-messages` carries the 422 text per keyword.
import type { FromSchema } from 'json-schema-to-ts';

/** 3 to 11 printable ASCII characters, no leading or trailing space (a blank sender id is refused, not trimmed); or 3 to 14 digits. */
export const FROM_PATTERN = '^(?:[\\x21-\\x7E][\\x20-\\x7E]{1,9}[\\x21-\\x7E]|\\+?[0-9]{3,14})$';
export const E164_PATTERN = '^\\+?[1-9][0-9]{1,14}$';
/** Resource ids are UUIDv7 (core/ids.ts); anything else in a path is a 400, a well-formed unknown id a 404. */
export const ID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$';

/** Bounds of a per-message validity period (DESIGN §4 Scheduling): 1 minute to 72 hours. */
export const VALIDITY_PERIOD_MIN_SECONDS = 60;
export const VALIDITY_PERIOD_MAX_SECONDS = 259_200;

/**
 * Scheduled sends (DESIGN §4 Scheduling): `scheduledAt` from now to 35 days ahead; one within
 * SCHEDULE_IMMEDIATE_MS of the acceptance is sent at once, as if it had none.
 */
export const SCHEDULE_MAX_DAYS = 35;
export const SCHEDULE_IMMEDIATE_MS = 1_000;

/** Most items in one POST /sms/bulk (spec 1 §4); the acceptance core's 413 uses the same number. */
export const MAX_BULK_ITEMS = 100;

export const smsCreateItemSchema = {
  $id: 'SmsCreateItem',
  type: 'object',
  description: 'spec 1 §2.1',
  additionalProperties: false,
  required: ['from', 'to', 'text'],
  properties: {
    from: { type: 'string', minLength: 3, maxLength: 14, pattern: FROM_PATTERN, description: 'Sender id: 3 to 11 printable ASCII characters that do not start or end with a space, or 3 to 14 digits (optional leading +).' },
    to: { type: 'string', minLength: 1, maxLength: 15, pattern: E164_PATTERN, description: 'Destination in E.164 format, at most 15 characters, with or without "+"; it must also be a valid number of its country (libphonenumber) and the country must have a price in the profile, else 422.' },
    text: { type: 'string', minLength: 1, description: 'Message body; at most 10 segments. With allowUnicode false, characters outside GSM-7 are transliterated where a documented transliteration exists (quotes, dashes, accents); any other character (emoji, control characters, most scripts) is a 422 naming it. Unpaired UTF-16 surrogates are a 422.' },
    allowUnicode: { type: 'boolean', default: false },
    clientId: { type: 'string', minLength: 1, maxLength: 40, description: 'Caller reference, unique per SMS per project.' },
    validityPeriod: {
      type: 'number', multipleOf: 1, minimum: VALIDITY_PERIOD_MIN_SECONDS, maximum: VALIDITY_PERIOD_MAX_SECONDS,
      description: 'Validity period of this message in whole seconds, 60 (1 minute) to 259200 (72 hours); else 422. With no final carrier report within it the message becomes expired (code 1). Absent or null: the platform default (MESSAGE_VALIDITY_SECONDS, 48 h unless configured). DESIGN §4 Scheduling.',
    },
    scheduledAt: {
      type: 'string',
      description: 'Send the message at this time instead of now: an ISO 8601 date and time with a UTC offset or Z (2026-12-01T09:30:00+01:00, 2026-12-01T08:30:00Z), from now to 35 days ahead; a time without an offset, in the past or beyond 35 days is a 422. The message is charged at acceptance, answered with status `scheduled`, held on a durable timer and can be canceled (POST /sms/{id}/cancel, refunded) until it leaves. A time within 1 second of now is sent at once (status `queued`, scheduledAt null). Its validity period counts from scheduledAt. DESIGN §4 Scheduling.',
    },
  },
} as const;
export type SmsCreateItem = FromSchema<typeof smsCreateItemSchema>;

export const smsBulkSchema = {
  $id: 'SmsBulk',
  type: 'array',
  minItems: 1,
  maxItems: MAX_BULK_ITEMS,
  // Each item is validated on its own (spec 1 §4 bulk rule 2): an item that is not a valid
  // SmsCreateItem (wrong type, broken rule, not even an object) is reported in `errors` of the
  // 201, never a refusal of the whole bulk. So the body takes any item; SmsCreateItem is the
  // item that gets sent.
  items: { anyOf: [{ $ref: 'SmsCreateItem' }, {}] },
  description: `spec 1 §4: a top-level array of 1 to ${MAX_BULK_ITEMS} SmsCreateItem, no wrapper object. Items are validated one by one: an invalid item is reported in \`errors\` (with its index) and the others are sent.`,
} as const;

export const lookupCreateSchema = {
  $id: 'LookupCreate',
  type: 'object',
  additionalProperties: false,
  required: ['to'],
  properties: {
    to: { type: 'string', minLength: 1, maxLength: 15, pattern: E164_PATTERN, description: 'E.164 number, at most 15 characters; also a valid number of a country with a lookup price, else 422.' },
  },
} as const;
export type LookupCreate = FromSchema<typeof lookupCreateSchema>;

const timestamp = { type: ['string', 'null'], format: 'date-time' } as const;

export const smsSchema = {
  $id: 'Sms',
  type: 'object',
  description: 'spec 1 §2.2',
  required: ['id', 'clientId', 'status', 'from', 'country', 'to', 'normalizedTo', 'charsCount', 'text', 'deliveredText', 'messagesCount', 'encoding', 'unicode', 'allowUnicode', 'charged', 'createdAt', 'direction'],
  properties: {
    id: { type: 'string', pattern: ID_PATTERN },
    clientId: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['scheduled', 'queued', 'sent', 'accepted', 'buffered', 'delivered', 'error', 'failed', 'expired', 'canceled', 'rejected', 'unknown', 'stop', 'inbound'], description: '`inbound` or `stop` (an opt-out keyword) for a message received on a two-way number (direction `inbound`).' },
    statusCode: { type: ['integer', 'null'] },
    from: { type: 'string', description: 'Outbound: the sender id. Inbound: the handset that sent it (E.164).' },
    country: { type: 'string', description: 'Outbound: the country of the recipient. Inbound: the country of the handset.' },
    to: { type: 'string', description: 'Outbound: the recipient as submitted. Inbound: our number (or sender id) that received it.' },
    normalizedTo: { type: 'string' },
    charsCount: { type: 'integer' },
    text: { type: 'string' },
    deliveredText: { type: 'string' },
    messagesCount: { type: 'integer' },
    encoding: { type: 'string', enum: ['GSM-7', 'UCS-2'] },
    unicode: { type: 'boolean' },
    allowUnicode: { type: 'boolean' },
    charged: { type: 'boolean' },
    pricePerSms: { type: 'number' },
    priceUser: { type: 'number' },
    createdAt: { type: 'string', format: 'date-time' },
    chargedAt: timestamp,
    scheduledAt: timestamp,
    sentAt: timestamp,
    deliveredAt: timestamp,
    direction: { type: 'string', enum: ['outbound', 'inbound'], description: '`outbound`: sent through this API or SMPP. `inbound`: received from a handset on a two-way number of the token (DESIGN "Two-way"): `from` is the handset, `to` our number; never charged (charged false, pricePerSms and priceUser 0); filter with direction_eq on GET /sms.' },
    message: { type: 'string', description: 'Inbound messages only: the text received (the same as `text`, and as `message` of their DLR).' },
    validityPeriod: { type: ['integer', 'null'], description: 'The validityPeriod (seconds) the message was sent with; null when the platform default (MESSAGE_VALIDITY_SECONDS) applies. Kept with the message\'s current state (MESSAGE_STATE_TTL_HOURS, 7 days by default); the ClickHouse history does not keep it, so GET /sms lists and older messages show null.' },
  },
} as const;

export const lookupSchema = {
  $id: 'Lookup',
  type: 'object',
  description: 'spec 1 §2.4',
  required: ['id', 'status', 'country', 'to', 'normalizedTo'],
  properties: {
    id: { type: 'string', pattern: ID_PATTERN },
    status: { type: 'string', enum: ['delivered', 'failed'] },
    country: { type: 'string' },
    to: { type: 'string' },
    normalizedTo: { type: 'string' },
    subscriberStatus: { type: ['string', 'null'] },
    statusCode: { type: ['integer', 'null'] },
    imsi: { type: ['string', 'null'] },
    servingMsc: { type: ['string', 'null'] },
    ported: { type: 'boolean' },
    roaming: { type: 'boolean' },
    network: { type: 'string' },
    charged: { type: 'boolean' },
    pricePerSms: { type: 'number' },
    createdAt: { type: 'string', format: 'date-time' },
    deliveredAt: timestamp,
  },
} as const;

export const balanceSchema = {
  $id: 'Balance',
  type: 'object',
  required: ['currency', 'available'],
  properties: { currency: { type: 'string' }, available: { type: 'number' } },
} as const;

export const priceEntrySchema = {
  $id: 'PriceEntry',
  type: 'object',
  required: ['currency', 'price'],
  properties: { country: { type: 'string', description: 'ISO 3166 alpha-2' }, currency: { type: 'string' }, price: { type: 'number' } },
} as const;

export const dlrSchema = {
  $id: 'Dlr',
  type: 'object',
  description: 'spec 1 §2.6: the webhook payload',
  required: ['id', 'status', 'code', 'eventAt'],
  properties: {
    id: { type: 'string' },
    clientId: { type: 'string' },
    status: { type: 'string', enum: ['sent', 'accepted', 'buffered', 'delivered', 'error', 'failed', 'expired', 'canceled', 'rejected', 'unknown', 'stop', 'inbound'] },
    code: { type: 'integer', enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 99, 100] },
    eventAt: { type: 'string', format: 'date-time' },
    message: { type: 'string', description: 'Inbound and stop DLRs only (two-way): the text received.' },
    from: { type: 'string', description: 'Inbound and stop DLRs only: the handset that sent the message (E.164). Reply with POST /sms to this number.' },
    to: { type: 'string', description: 'Inbound and stop DLRs only: our number (or sender id) that received it; use it as `from` of the reply.' },
  },
} as const;

export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  required: ['title', 'status', 'detail'],
  properties: { title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' } },
} as const;

export const validationErrorSchema = {
  $id: 'ValidationError',
  type: 'object',
  required: ['errors'],
  properties: { errors: { type: 'object', required: ['fields'], properties: { fields: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } } } },
} as const;

export const bulkErrorSchema = {
  $id: 'BulkError',
  type: 'object',
  required: ['index', 'clientId', 'fields'],
  properties: {
    index: { type: 'integer', description: 'Position of the item in the request array.' },
    clientId: { type: ['string', 'null'] },
    fields: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
} as const;

export const groupCountSchema = {
  $id: 'GroupCount',
  type: 'object',
  description: 'One group of a list with `_group` (docs/grammar-a.md): the group value as text (null for rows without one) and its row count.',
  required: ['group', 'count'],
  properties: { group: { type: ['string', 'null'] }, count: { type: 'integer', minimum: 0 } },
} as const;

export const dlrHistoryEntrySchema = {
  $id: 'DlrHistoryEntry',
  type: 'object',
  description: 'One status transition of a message and each webhook attempt to deliver it as a DLR (docs/lifecycle.md).',
  required: ['seq', 'status', 'code', 'eventAt', 'attempts'],
  properties: {
    seq: { type: 'integer' },
    status: { type: 'string' },
    code: { type: 'integer' },
    eventAt: { type: 'string', format: 'date-time' },
    attempts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['attempt', 'outcome', 'responseStatus', 'latencyMs', 'error', 'at'],
        properties: {
          attempt: { type: 'integer' }, outcome: { type: 'string' }, responseStatus: { type: ['integer', 'null'] }, latencyMs: { type: 'number' },
          error: { type: ['string', 'null'] }, at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
} as const;

export const rateLimitedSchema = {
  $id: 'RateLimited',
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string' }, code: { type: 'integer' } },
} as const;

/** POST /sms/quote (DESIGN §4): what sending one item would be (core/sms/quote.ts). */
export const smsQuoteItemSchema = {
  $id: 'SmsQuoteItem',
  type: 'object',
  description: 'What sending the item would be: its segments, encoding and price, as the send would charge them.',
  required: ['index', 'clientId', 'to', 'normalizedTo', 'country', 'charsCount', 'messagesCount', 'encoding', 'unicode', 'deliveredText', 'pricePerSms', 'priceUser', 'currency'],
  properties: {
    index: { type: 'integer', minimum: 0, description: 'Position of the item in the request (0 for an object body).' },
    clientId: { type: ['string', 'null'] },
    to: { type: 'string' },
    normalizedTo: { type: 'string' },
    country: { type: 'string' },
    charsCount: { type: 'integer' },
    messagesCount: { type: 'integer', description: 'Segments.' },
    encoding: { type: 'string', enum: ['GSM-7', 'UCS-2'] },
    unicode: { type: 'boolean' },
    deliveredText: { type: 'string', description: 'The text as it would be sent (GSM-7 transliterations applied).' },
    pricePerSms: { type: 'number', description: 'Price per segment.' },
    priceUser: { type: 'number', description: 'What sending the item would charge: pricePerSms × messagesCount.' },
    currency: { type: 'string' },
  },
} as const;

export const smsQuoteTotalSchema = {
  $id: 'SmsQuoteTotal',
  type: 'object',
  description: 'What a send of the whole body would charge, and whether the balance covers it now.',
  required: ['messages', 'messagesCount', 'price', 'currency', 'available', 'covered'],
  properties: {
    messages: { type: 'integer', minimum: 0, description: 'Items a send would accept.' },
    messagesCount: { type: 'integer', minimum: 0, description: 'Their segments together.' },
    price: { type: 'number', description: 'The sum of their priceUser: what a send would charge.' },
    currency: { type: 'string' },
    available: { type: 'number', description: 'The balance now (other sends change it).' },
    covered: { type: 'boolean', description: 'Whether the balance now covers price; a send it does not cover is a 402.' },
  },
} as const;
