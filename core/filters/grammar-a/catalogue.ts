// Field catalogues: the only names a client may filter, sort or group on, each mapped to a
// ClickHouse expression written by us (user text never becomes SQL), and the operators
// each field type accepts (spec 3 §2.2).
import type { Operator } from './ast';

export type FieldType = 'string' | 'number' | 'date' | 'id' | 'boolean';

export interface FieldDef {
  /** API name (dotted path for nested fields). */
  readonly name: string;
  readonly type: FieldType;
  /** ClickHouse SQL expression, ours only. */
  readonly column: string;
  readonly nullable?: boolean;
}

export type Catalogue = readonly FieldDef[];

const STRING_OPS = [
  'contains', 'containsi', 'ncontains', 'ncontainsi', 'starts', 'startsi', 'ends', 'endsi',
] as const satisfies readonly Operator[];
const RANGE_OPS = ['range', 'between', 'betweeneq'] as const satisfies readonly Operator[];
const ORDER_OPS = ['lt', 'lte', 'gt', 'gte'] as const satisfies readonly Operator[];

export const OPERATORS_BY_TYPE: Readonly<Record<FieldType, readonly Operator[]>> = {
  string: ['exists', 'eq', 'ne', 'eqi', 'nei', 'in', 'nin', 'ini', 'nini', ...STRING_OPS],
  number: ['exists', 'eq', 'ne', ...ORDER_OPS, 'in', 'nin', ...RANGE_OPS],
  date: ['exists', 'eq', 'ne', ...ORDER_OPS, ...RANGE_OPS],
  id: ['exists', 'eq', 'ne', 'in', 'nin'],
  boolean: ['exists', 'eq', 'ne'],
};

export function operatorApplies(type: FieldType, operator: Operator): boolean {
  return OPERATORS_BY_TYPE[type].includes(operator);
}

export function findField(catalogue: Catalogue, name: string): FieldDef | undefined {
  return catalogue.find((f) => f.name === name);
}

/** The column as an operand: plain identifiers as is, expressions in parentheses. */
export function columnSql(def: FieldDef): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(def.column) ? def.column : `(${def.column})`;
}

/** GET /sms: table sms_messages. */
export const SMS_FIELDS: Catalogue = [
  { name: 'id', type: 'id', column: 'id' },
  { name: 'clientId', type: 'string', column: 'client_id', nullable: true },
  { name: 'status', type: 'string', column: 'status' },
  { name: 'statusCode', type: 'number', column: 'status_code', nullable: true },
  { name: 'from', type: 'string', column: 'sender' },
  { name: 'country', type: 'string', column: 'country' },
  { name: 'to', type: 'string', column: 'recipient' },
  { name: 'normalizedTo', type: 'string', column: 'normalized_to' },
  { name: 'charsCount', type: 'number', column: 'chars_count' },
  { name: 'text', type: 'string', column: 'text' },
  { name: 'deliveredText', type: 'string', column: 'delivered_text' },
  { name: 'messagesCount', type: 'number', column: 'messages_count' },
  { name: 'encoding', type: 'string', column: 'encoding' },
  { name: 'unicode', type: 'boolean', column: 'unicode' },
  { name: 'allowUnicode', type: 'boolean', column: 'allow_unicode' },
  { name: 'charged', type: 'boolean', column: 'charged' },
  { name: 'pricePerSms', type: 'number', column: 'price_per_sms_micros / 1000000' },
  { name: 'priceUser', type: 'number', column: 'price_user_micros / 1000000' },
  { name: 'currency', type: 'string', column: 'currency' },
  { name: 'createdAt', type: 'date', column: 'created_at' },
  { name: 'chargedAt', type: 'date', column: 'charged_at', nullable: true },
  { name: 'scheduledAt', type: 'date', column: 'scheduled_at', nullable: true },
  { name: 'sentAt', type: 'date', column: 'sent_at', nullable: true },
  { name: 'deliveredAt', type: 'date', column: 'delivered_at', nullable: true },
  // `outbound` or `inbound` (DESIGN "Two-way"; migration 0014).
  { name: 'direction', type: 'string', column: 'direction' },
];

/** GET /lookup: table lookups. */
export const LOOKUP_FIELDS: Catalogue = [
  { name: 'id', type: 'id', column: 'id' },
  { name: 'status', type: 'string', column: 'status' },
  { name: 'statusCode', type: 'number', column: 'status_code', nullable: true },
  { name: 'country', type: 'string', column: 'country' },
  { name: 'to', type: 'string', column: 'recipient' },
  { name: 'normalizedTo', type: 'string', column: 'normalized_to' },
  { name: 'subscriberStatus', type: 'string', column: 'subscriber_status', nullable: true },
  { name: 'imsi', type: 'string', column: 'imsi', nullable: true },
  { name: 'servingMsc', type: 'string', column: 'serving_msc', nullable: true },
  { name: 'ported', type: 'boolean', column: 'ported' },
  { name: 'roaming', type: 'boolean', column: 'roaming' },
  { name: 'network', type: 'string', column: 'network' },
  { name: 'charged', type: 'boolean', column: 'charged' },
  { name: 'pricePerSms', type: 'number', column: 'price_micros / 1000000' },
  { name: 'createdAt', type: 'date', column: 'created_at' },
  { name: 'deliveredAt', type: 'date', column: 'delivered_at', nullable: true },
];
