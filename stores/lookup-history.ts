// Lookups: current record in the `messages` KV bucket (read-your-writes), queued on
// JetStream for ClickHouse (table lookups, through infra/bus/lookup-queue.ts), and read back
// from ClickHouse for lists.
import type { KV } from '@nats-io/kv';
import type { Lookup, LookupStore } from '../core/lookup';
import type { ClickHouse } from '../infra/clickhouse';
import { decode, KV_KEYS, type HoldRef } from '../core/bus';
import type { JetStreamLookupQueue } from '../infra/bus/lookup-queue';
import { fromClickHouseTime, fromClickHouseTimeOrNull, toClickHouseTime, toClickHouseTimeOrNull } from './clickhouse-time';
import type { CompiledQuery } from '../core/filters/grammar-a';
import type { CurrentReader, HistoryReader } from '../core/sms';
import { getRow, groupCounts, listRows, type GroupCount, type Visibility } from './scoped-query';
import { insertJsonRows, type InProcessSettings } from './insert-rows';

export class NatsLookupStore implements LookupStore, CurrentReader<Lookup> {
  constructor(private readonly kv: KV, private readonly queue: JetStreamLookupQueue) {}

  /** An unconfirmed publish rejects with OutcomeUnknownError (the charge stays held; JetStreamLookupQueue). */
  async put(lookup: Lookup, hold?: HoldRef): Promise<void> {
    await this.kv.put(KV_KEYS.lookupState(lookup.id), JSON.stringify(lookup));
    await this.queue.publish(lookup, hold);
  }

  async get(id: string): Promise<Lookup | null> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return null;
    const entry = await this.kv.get(KV_KEYS.lookupState(id));
    return entry && entry.operation === 'PUT' && entry.length > 0 ? decode('lookupState', entry.value) : null;
  }
}

interface LookupRow {
  id: string; org_id: string; project_id: string; token_id: string; source: string; status: string; status_code: number | null;
  country: string; recipient: string; normalized_to: string; subscriber_status: string | null; imsi: string | null; serving_msc: string | null;
  ported: boolean; roaming: boolean; network: string; charged: boolean; price_micros: number | string; currency: string;
  created_at: string; delivered_at: string | null; updated_at: string;
}

const COLUMNS = 'id, org_id, project_id, token_id, source, status, status_code, country, recipient, normalized_to, subscriber_status, imsi, serving_msc, ported, roaming, network, charged, price_micros, currency, created_at, delivered_at, updated_at';

function toRow(l: Lookup): LookupRow {
  return {
    id: l.id, org_id: l.orgId, project_id: l.projectId, token_id: l.tokenId, source: l.source, status: l.status, status_code: l.statusCode,
    country: l.country, recipient: l.to, normalized_to: l.normalizedTo, subscriber_status: l.subscriberStatus, imsi: l.imsi, serving_msc: l.servingMsc,
    ported: l.ported, roaming: l.roaming, network: l.network, charged: l.charged, price_micros: l.priceMicros, currency: l.currency,
    created_at: toClickHouseTime(l.createdAt), delivered_at: toClickHouseTimeOrNull(l.deliveredAt), updated_at: toClickHouseTime(l.updatedAt),
  };
}

function fromRow(r: LookupRow): Lookup {
  return {
    id: r.id, orgId: r.org_id, projectId: r.project_id, tokenId: r.token_id, source: r.source as Lookup['source'], status: r.status as Lookup['status'],
    statusCode: Number(r.status_code ?? 0), country: r.country, to: r.recipient, normalizedTo: r.normalized_to,
    subscriberStatus: r.subscriber_status as Lookup['subscriberStatus'], imsi: r.imsi, servingMsc: r.serving_msc, ported: Boolean(r.ported),
    roaming: Boolean(r.roaming), network: r.network, charged: Boolean(r.charged), priceMicros: Number(r.price_micros), currency: r.currency,
    createdAt: fromClickHouseTime(r.created_at), deliveredAt: fromClickHouseTimeOrNull(r.delivered_at), updatedAt: fromClickHouseTime(r.updated_at),
  };
}

export class LookupHistory implements HistoryReader<Lookup> {
  /** `inProcess`: settings of the inserts on the in-process engine (stores/insert-rows.ts). */
  constructor(private readonly ch: ClickHouse, private readonly inProcess?: InProcessSettings) {}

  async insert(lookups: readonly Lookup[]): Promise<void> {
    await insertJsonRows(this.ch, 'lookups', lookups.map(toRow), this.inProcess);
  }

  async get(visibility: Visibility, id: string): Promise<Lookup | null> {
    const row = await getRow<LookupRow>(this.ch, 'lookups', COLUMNS, visibility, id);
    return row ? fromRow(row) : null;
  }

  async list(visibility: Visibility, compiled: CompiledQuery): Promise<Lookup[]> {
    return (await listRows<LookupRow>(this.ch, 'lookups', COLUMNS, visibility, compiled)).map(fromRow);
  }

  groupCounts(visibility: Visibility, compiled: CompiledQuery): Promise<GroupCount[]> {
    return groupCounts(this.ch, 'lookups', visibility, compiled);
  }
}
