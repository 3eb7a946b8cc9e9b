// Delivery statistics (GET /sms/stats, GET /lookup/stats; docs/grammar-a.md "Statistics"): the
// rows the endpoints answer and the port that reads them (stores/message-stats.ts).
import type { CompiledStats } from '../filters/grammar-a/stats';
import type { Visibility } from './history-ports';

/** The group keys of a row: those `_group` asked for, in its order (time buckets as ISO 8601, UTC). */
export interface StatsKeys {
  period?: string | null;
  country?: string | null;
  status?: string | null;
}

export interface SmsStatsRow extends StatsKeys {
  messages: number;
  segments: number;
  delivered: number;
  failed: number;
  expired: number;
  rejected: number;
  error: number;
  canceled: number;
  unknown: number;
  /** Not in a final status yet (queued, sent, accepted, buffered). */
  pending: number;
  /** delivered / (messages − pending); null when none is final. */
  deliveryRate: number | null;
  /** Σ priceUser of the charged messages, in `currency`. */
  cost: number;
  currency: string;
  /** Median createdAt → deliveredAt of the delivered messages, in seconds; null when none is delivered. */
  p50DeliverySeconds: number | null;
}

export interface LookupStatsRow extends StatsKeys {
  lookups: number;
  delivered: number;
  failed: number;
  /** Per subscriberStatus. */
  active: number;
  absent: number;
  unknown: number;
  ported: number;
  roaming: number;
  /** Σ pricePerSms of the charged lookups, in `currency`. */
  cost: number;
  currency: string;
}

export interface StatsReader {
  /** `currency`: the organization's, which its messages are priced in. */
  sms(visibility: Visibility, compiled: CompiledStats, currency: string): Promise<SmsStatsRow[]>;
  lookups(visibility: Visibility, compiled: CompiledStats, currency: string): Promise<LookupStatsRow[]>;
}
