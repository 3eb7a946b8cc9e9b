// Delivery statistics of GET /sms/stats and GET /lookup/stats (docs/grammar-a.md, "Statistics"):
// the compiled stats query (core/filters/grammar-a/stats.ts) within a token's scope, one row
// per group. Each record counts once, with its newest state: the table is read FINAL, and the
// conditions on stable columns (written when the record is created, the same in every state
// row) run as PREWHERE before FINAL, exactly as `_group` of GET /sms (stores/scoped-query.ts).
import { AppError } from '../core/errors';
import type { CompiledStats, StatsKey } from '../core/filters/grammar-a/stats';
import { LOOKUP_STATUSES, LOOKUP_SUBSCRIBER_STATUSES, SMS_STATUS_COUNTERS } from '../core/filters/grammar-a/stats';
import { fromMicros } from '../core/money';
import type { Visibility } from '../core/sms/history-ports';
import type { LookupStatsRow, SmsStatsRow, StatsKeys, StatsReader } from '../core/sms/stats';
import type { ClickHouse } from '../infra/clickhouse';
import { ceilingSettings, exceededCeiling, type QueryCeilings } from './query-ceilings';
import { splitWhere } from './scoped-query';

type Raw = Record<string, string | number | null>;

const TABLES = { sms: 'sms_messages', lookup: 'lookups' } as const;

/** The ceiling of one stats statement (stores/query-ceilings.ts; tests lower it). */
const STATS_CEILINGS: QueryCeilings = { maxExecutionSeconds: 10, maxMemoryBytes: 1024 ** 3 };
const STATS_SETTINGS = ceilingSettings(STATS_CEILINGS);

/** The SELECT of a stats query within one scope (also used by bench/stats.ts). */
export function statsStatement(ch: ClickHouse, v: Visibility, compiled: CompiledStats, settings: string = STATS_SETTINGS): { query: string; query_params: Record<string, unknown> } {
  const table = TABLES[compiled.subject];
  const split = splitWhere(table, compiled.where);
  const grouped = compiled.keys.length > 0;
  const query = `SELECT ${compiled.select} FROM ${ch.table(table)} FINAL PREWHERE ${split.prewhere} WHERE ${split.where}`
    + (grouped ? ` GROUP BY ${compiled.groupBy} ORDER BY ${compiled.orderBy} ASC` : '')
    + ` LIMIT {__limit:UInt32} OFFSET {__offset:UInt32} SETTINGS ${settings}`;
  return { query, query_params: { ...compiled.params, __org: v.orgId, __project: v.projectId, __limit: compiled.limit, __offset: compiled.offset } };
}

/** A time bucket as ClickHouse writes it ('YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss[.fff]', UTC) in ISO 8601. */
export function isoPeriod(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}:\d{2}))?/.exec(value);
  if (!m) throw new Error(`stats: unexpected time bucket ${value}`);
  return `${m[1]}T${m[2] ?? '00:00:00'}.000Z`;
}

function keysOf(keys: readonly StatsKey[], raw: Raw): StatsKeys {
  const out: StatsKeys = {};
  keys.forEach((k, i) => {
    const value = raw[`k${i}`];
    out[k.name] = value === null || value === undefined ? null : k.kind === 'time' ? isoPeriod(String(value)) : String(value);
  });
  return out;
}

const n = (value: string | number | null | undefined): number => Number(value ?? 0);

export class MessageStats implements StatsReader {
  private readonly settings: string;

  constructor(private readonly ch: ClickHouse, private readonly ceilings: QueryCeilings = STATS_CEILINGS) {
    this.settings = ceilingSettings(ceilings);
  }

  private async rows(v: Visibility, compiled: CompiledStats): Promise<Raw[]> {
    // The read lane (infra/clickhouse.ts): a stats scan never queues GET /sms behind it.
    const client = this.ch.readLane?.() ?? this.ch.client;
    try {
      const result = await client.query({ ...statsStatement(this.ch, v, compiled, this.settings), format: 'JSONEachRow' });
      return await result.json<Raw>();
    } catch (err) {
      const limit = exceededCeiling(err, this.ceilings);
      if (limit === undefined) throw err;
      throw new AppError('QUERY_TOO_EXPENSIVE', `the statistics query went beyond ${limit}: narrow the filter (a shorter createdAt range, fewer groups) and retry`, { cause: err });
    }
  }

  async sms(v: Visibility, compiled: CompiledStats, currency: string): Promise<SmsStatsRow[]> {
    if (compiled.subject !== 'sms') throw new Error('stats: an SMS query is needed');
    return (await this.rows(v, compiled)).map((raw) => {
      const counts = Object.fromEntries(SMS_STATUS_COUNTERS.map((s) => [s, n(raw[`n_${s}`])])) as Record<(typeof SMS_STATUS_COUNTERS)[number], number>;
      const messages = n(raw['messages']);
      const pending = n(raw['pending']);
      const final = messages - pending;
      const p50 = raw['p50_delivery_ms'];
      return {
        ...keysOf(compiled.keys, raw),
        messages,
        segments: n(raw['segments']),
        ...counts,
        pending,
        deliveryRate: final === 0 ? null : counts.delivered / final,
        cost: fromMicros(n(raw['cost_micros'])),
        currency,
        p50DeliverySeconds: counts.delivered === 0 || p50 === null || !Number.isFinite(Number(p50)) ? null : Number(p50) / 1000,
      };
    });
  }

  async lookups(v: Visibility, compiled: CompiledStats, currency: string): Promise<LookupStatsRow[]> {
    if (compiled.subject !== 'lookup') throw new Error('stats: a lookup query is needed');
    return (await this.rows(v, compiled)).map((raw) => ({
      ...keysOf(compiled.keys, raw),
      lookups: n(raw['lookups']),
      ...(Object.fromEntries(LOOKUP_STATUSES.map((s) => [s, n(raw[`n_${s}`])])) as Record<(typeof LOOKUP_STATUSES)[number], number>),
      ...(Object.fromEntries(LOOKUP_SUBSCRIBER_STATUSES.map((s) => [s, n(raw[`sub_${s}`])])) as Record<(typeof LOOKUP_SUBSCRIBER_STATUSES)[number], number>),
      ported: n(raw['ported']),
      roaming: n(raw['roaming']),
      cost: fromMicros(n(raw['cost_micros'])),
      currency,
    }));
  }
}
