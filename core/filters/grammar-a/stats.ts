// Grammar A for statistics endpoints (spec 3 §4.1 rule 5: `_group` "for statistics and report
// endpoints"): GET /sms/stats and GET /lookup/stats take the filter of GET /sms and GET /lookup,
// plus `_group`: at most one time bucket (hourly, daily, monthly; UTC like every time of the API)
// and the fields country and status, comma-separated (`daily,country`). Each group becomes one
// row of counts and sums (docs/grammar-a.md, "Statistics"). The SQL holds only our columns,
// function names and `{name:Type}` placeholders; client values are in `params`.
import type { AndGroup, Node, Query } from './ast';
import { LOOKUP_FIELDS, SMS_FIELDS, type Catalogue } from './catalogue';
import { compile, type CompileOptions } from './compile';
import { invalidFilter, quote, reservedParam } from './problems';

export type StatsSubject = 'sms' | 'lookup';

/** A group key of a stats row: its name in the row and its SQL expression. */
export interface StatsKey {
  /** `_group` token it came from. */
  readonly token: StatsGroupToken;
  /** The row's property: `period` for a time bucket, else the field's API name. */
  readonly name: 'period' | 'country' | 'status';
  readonly expression: string;
  readonly kind: 'time' | 'field';
}

export const STATS_TIME_TOKENS = ['hourly', 'daily', 'monthly'] as const;
export const STATS_FIELD_TOKENS = ['country', 'status'] as const;
export const STATS_GROUP_TOKENS = [...STATS_TIME_TOKENS, ...STATS_FIELD_TOKENS] as const;
export type StatsGroupToken = (typeof STATS_GROUP_TOKENS)[number];

/** Rows of one stats page: default and maximum (`_start`/`_limit` page the group rows). */
export const STATS_DEFAULT_LIMIT = 1000;
export const STATS_MAX_LIMIT = 10_000;

const TIME_FUNCTION: Readonly<Record<(typeof STATS_TIME_TOKENS)[number], string>> = {
  hourly: 'toStartOfHour', daily: 'toStartOfDay', monthly: 'toStartOfMonth',
};

/** Statuses a message does not leave (core/sms/message.ts FINAL_STATUSES); the others are pending. */
export const SMS_FINAL_STATUSES = ['delivered', 'failed', 'expired', 'rejected', 'error', 'canceled', 'unknown'] as const;
/** Per-status counters of an SMS stats row (each a final status). */
export const SMS_STATUS_COUNTERS = SMS_FINAL_STATUSES;
export const LOOKUP_STATUSES = ['delivered', 'failed'] as const;
export const LOOKUP_SUBSCRIBER_STATUSES = ['active', 'absent', 'unknown'] as const;

export interface CompiledStats {
  readonly subject: StatsSubject;
  readonly keys: readonly StatsKey[];
  /** The select list: the keys (`k0`, `k1`, …) then the measures, each `expr AS alias`. */
  readonly select: string;
  /** Empty when there is no key (one row of totals). */
  readonly groupBy: string;
  readonly orderBy: string;
  /** The filter (SQL boolean; `1` when none), as compile() writes it. */
  readonly where: string;
  readonly params: Record<string, unknown>;
  readonly limit: number;
  readonly offset: number;
}

export function statsCatalogue(subject: StatsSubject): Catalogue {
  return subject === 'sms' ? SMS_FIELDS : LOOKUP_FIELDS;
}

/** `_group` of a stats endpoint → its keys, in the order written; 400 on anything else. */
export function statsKeys(query: Query): StatsKey[] {
  if (query.group === undefined) return [];
  const param = reservedParam(query.origin, '_group');
  const expected = `expected ${STATS_GROUP_TOKENS.join(', ')}, or a comma-separated combination such as daily,country (at most one of hourly, daily, monthly)`;
  const tokens = query.group.split(',');
  if (query.group.length > 100 || tokens.length > STATS_GROUP_TOKENS.length) {
    throw invalidFilter(`too many groups ${quote(query.group)} in parameter "${param}": ${expected}`);
  }
  const keys: StatsKey[] = [];
  for (const token of tokens) {
    if (!(STATS_GROUP_TOKENS as readonly string[]).includes(token)) {
      throw invalidFilter(`unknown group ${quote(token)} in parameter "${param}": ${expected}`);
    }
    const t = token as StatsGroupToken;
    if (keys.some((k) => k.token === t)) throw invalidFilter(`group "${t}" is given more than once in parameter "${param}"`);
    if (t === 'hourly' || t === 'daily' || t === 'monthly') {
      const other = keys.find((k) => k.kind === 'time');
      if (other) throw invalidFilter(`groups "${other.token}" and "${t}" in parameter "${param}": at most one of hourly, daily, monthly`);
      keys.push({ token: t, name: 'period', expression: `${TIME_FUNCTION[t]}(created_at)`, kind: 'time' });
    } else {
      keys.push({ token: t, name: t, expression: t, kind: 'field' });
    }
  }
  return keys;
}

/** Query → the parts of the stats SELECT over sms_messages or lookups (the store adds scope and FINAL). */
export function compileStats(query: Query, subject: StatsSubject, options: Omit<CompileOptions, 'defaultLimit' | 'maxLimit'> = {}): CompiledStats {
  if (query.sort.length > 0) {
    throw invalidFilter(`parameter "${reservedParam(query.origin, '_sort')}" is not accepted here: stats rows are ordered by their group keys`);
  }
  const keys = statsKeys(query);
  const { group: _ignored, ...grouped } = query;
  void _ignored;
  const filterOnly = subject === 'sms' && !names(grouped.filter, 'direction') ? { ...grouped, filter: withOutboundOnly(grouped.filter) } : grouped;
  const base = compile(filterOnly, statsCatalogue(subject), { ...options, defaultLimit: STATS_DEFAULT_LIMIT, maxLimit: STATS_MAX_LIMIT });
  const params: Record<string, unknown> = { ...base.params };
  const bind = (name: string, type: string, value: unknown): string => {
    params[name] = value;
    return `{${name}:${type}}`;
  };
  const keySelect = keys.map((k, i) => `${k.expression} AS k${i}`);
  const measures = subject === 'sms' ? smsMeasures(bind) : lookupMeasures(bind);
  const keyNames = keys.map((_, i) => `k${i}`).join(', ');
  return {
    subject,
    keys,
    select: [...keySelect, ...measures].join(', '),
    groupBy: keyNames,
    orderBy: keyNames,
    where: base.where,
    params,
    limit: base.limit,
    offset: base.offset,
  };
}

/** Whether a condition anywhere in the filter names `field`. */
function names(node: Node, field: string): boolean {
  return node.kind === 'cond' ? node.field === field : node.children.some((child) => names(child, field));
}

/**
 * Delivery statistics are about what the organization sends: inbound messages (stored beside
 * them since migration 0014) count only when the filter names `direction`.
 */
function withOutboundOnly(filter: AndGroup): AndGroup {
  return { kind: 'and', children: [...filter.children, { kind: 'cond', field: 'direction', operator: 'eq', value: 'outbound' }] };
}

/** createdAt -> deliveredAt in ms of a message, as the statistics' median counts it (here and in the rollup, stores/stats-rollup.ts). */
export const DELIVERY_MS = "dateDiff('millisecond', created_at, assumeNotNull(delivered_at))";

/**
 * What a message costs the organization: charged, unless it was canceled before it was sent (a
 * scheduled message canceled, or a request the charge settler canceled), which is refunded. A
 * message the carrier canceled after it was sent (DELETED) is not refunded and counts.
 */
export function costs(canceled: string): string {
  return `charged AND NOT (status = ${canceled} AND sent_at IS NULL)`;
}

type Bind = (name: string, type: string, value: unknown) => string;

/**
 * Each message counts once, with its newest state (the store reads FINAL). `pending` is every
 * message not in a final status; `delivery_ms` is createdAt → deliveredAt of delivered messages.
 */
function smsMeasures(bind: Bind): string[] {
  const final = bind('s_final', 'Array(String)', [...SMS_FINAL_STATUSES]);
  const perStatus = SMS_STATUS_COUNTERS.map((s) => `countIf(status = ${bind(`s_${s}`, 'String', s)}) AS n_${s}`);
  const delivered = '{s_delivered:String}';
  return [
    'count() AS messages',
    'sum(messages_count) AS segments',
    ...perStatus,
    `countIf(status NOT IN ${final}) AS pending`,
    `sumIf(price_user_micros, ${costs('{s_canceled:String}')}) AS cost_micros`,
    `quantileExactInclusiveIf(0.5)(${DELIVERY_MS}, status = ${delivered} AND isNotNull(delivered_at)) AS p50_delivery_ms`,
  ];
}

function lookupMeasures(bind: Bind): string[] {
  return [
    'count() AS lookups',
    ...LOOKUP_STATUSES.map((s) => `countIf(status = ${bind(`s_${s}`, 'String', s)}) AS n_${s}`),
    ...LOOKUP_SUBSCRIBER_STATUSES.map((s) => `countIf(subscriber_status = ${bind(`ss_${s}`, 'String', s)}) AS sub_${s}`),
    'countIf(ported) AS ported',
    'countIf(roaming) AS roaming',
    'sumIf(price_micros, charged) AS cost_micros',
  ];
}
