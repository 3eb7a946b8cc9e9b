// SMS history in ClickHouse (table sms_messages): batch inserts from the writer, reads by id
// (after the KV state has expired) and filtered lists. Only bound parameters reach SQL.
export type { Visibility } from './scoped-query';
import { Readable } from 'node:stream';
import type { ClickHouse } from '../infra/clickhouse';
import type { HistoryReader, MessageSource, MessageStatus, SmsMessage } from '../core/sms';
import type { CompiledQuery } from '../core/filters/grammar-a';
import { getRow, groupCounts, listRows, type GroupCount, type Visibility } from './scoped-query';
import { insertJsonRows, type InProcessSettings } from './insert-rows';
import { fromClickHouseTime, fromClickHouseTimeOrNull, toClickHouseTime, toClickHouseTimeOrNull } from './clickhouse-time';

export interface MessageRow {
  id: string;
  org_id: string;
  project_id: string;
  token_id: string;
  source: string;
  direction: string;
  client_id: string | null;
  status: string;
  status_code: number | null;
  sender: string;
  country: string;
  recipient: string;
  normalized_to: string;
  chars_count: number;
  text: string;
  delivered_text: string;
  messages_count: number;
  encoding: string;
  unicode: boolean;
  allow_unicode: boolean;
  charged: boolean;
  price_per_sms_micros: number | string;
  price_user_micros: number | string;
  currency: string;
  created_at: string;
  charged_at: string | null;
  scheduled_at: string | null;
  sent_at: string | null;
  delivered_at: string | null;
  updated_at: string;
}

export const MESSAGE_COLUMNS = 'id, org_id, project_id, token_id, source, direction, client_id, status, status_code, sender, country, recipient, normalized_to, chars_count, text, delivered_text, messages_count, encoding, unicode, allow_unicode, charged, price_per_sms_micros, price_user_micros, currency, created_at, charged_at, scheduled_at, sent_at, delivered_at, updated_at';

const NEWLINE = Buffer.from('\n');

export function toRow(m: SmsMessage): MessageRow {
  return {
    id: m.id, org_id: m.orgId, project_id: m.projectId, token_id: m.tokenId, source: m.source, direction: m.direction ?? 'outbound', client_id: m.clientId,
    status: m.status, status_code: m.statusCode, sender: m.from, country: m.country, recipient: m.to, normalized_to: m.normalizedTo,
    chars_count: m.charsCount, text: m.text, delivered_text: m.deliveredText, messages_count: m.messagesCount, encoding: m.encoding,
    unicode: m.unicode, allow_unicode: m.allowUnicode, charged: m.charged, price_per_sms_micros: m.pricePerSmsMicros,
    price_user_micros: m.priceUserMicros, currency: m.currency, created_at: toClickHouseTime(m.createdAt),
    charged_at: toClickHouseTimeOrNull(m.chargedAt), scheduled_at: toClickHouseTimeOrNull(m.scheduledAt),
    sent_at: toClickHouseTimeOrNull(m.sentAt), delivered_at: toClickHouseTimeOrNull(m.deliveredAt), updated_at: toClickHouseTime(m.updatedAt),
  };
}

export function fromRow(r: MessageRow): SmsMessage {
  return {
    id: r.id, orgId: r.org_id, projectId: r.project_id, tokenId: r.token_id, source: r.source as MessageSource, clientId: r.client_id,
    status: r.status as MessageStatus, statusCode: r.status_code === null ? null : Number(r.status_code), from: r.sender, country: r.country,
    to: r.recipient, normalizedTo: r.normalized_to, charsCount: Number(r.chars_count), text: r.text, deliveredText: r.delivered_text,
    messagesCount: Number(r.messages_count), encoding: r.encoding as SmsMessage['encoding'], unicode: Boolean(r.unicode),
    allowUnicode: Boolean(r.allow_unicode), charged: Boolean(r.charged), pricePerSmsMicros: Number(r.price_per_sms_micros),
    priceUserMicros: Number(r.price_user_micros), currency: r.currency, createdAt: fromClickHouseTime(r.created_at),
    chargedAt: fromClickHouseTimeOrNull(r.charged_at), scheduledAt: fromClickHouseTimeOrNull(r.scheduled_at),
    sentAt: fromClickHouseTimeOrNull(r.sent_at), deliveredAt: fromClickHouseTimeOrNull(r.delivered_at), updatedAt: fromClickHouseTime(r.updated_at),
    // Outbound rows read as the messages they were written from (no direction: outbound).
    ...(r.direction === 'inbound' ? { direction: 'inbound' as const } : {}),
  };
}

export class MessageHistory implements HistoryReader<SmsMessage> {
  /** `inProcess`: settings of the inserts on the in-process engine (the history writer's os_thread_priority, stores/insert-rows.ts). */
  constructor(private readonly ch: ClickHouse, private readonly inProcess?: InProcessSettings) {}

  async insert(messages: readonly SmsMessage[]): Promise<void> {
    await insertJsonRows(this.ch, 'sms_messages', messages.map(toRow), this.inProcess);
  }

  /**
   * Inserts accepted messages as they travel on the bus: `batches` are comma-separated JSON
   * objects of SmsMessage (the inside of sms.accepted bodies, core/bus ACCEPTED_FRAME), read by
   * ClickHouse through sms_messages_intake (migration 0011) without being decoded here.
   */
  async insertAccepted(batches: readonly Uint8Array[]): Promise<void> {
    const parts: Uint8Array[] = [];
    for (const batch of batches) {
      if (batch.length === 0) continue;
      if (parts.length > 0) parts.push(NEWLINE);
      parts.push(batch);
    }
    if (parts.length === 0) return;
    const body = Buffer.concat(parts);
    const settings = { input_format_skip_unknown_fields: 1 } as const;
    if (this.ch.insertRaw) {
      await this.ch.insertRaw('sms_messages_intake', body, 'JSONEachRow', { ...settings, ...this.inProcess });
      return;
    }
    const result = await this.ch.client.exec({
      query: `INSERT INTO ${this.ch.table('sms_messages_intake')} FORMAT JSONEachRow`,
      values: Readable.from([body], { objectMode: false }),
      clickhouse_settings: settings,
    });
    // The answer of an INSERT is empty; reading it to the end frees the connection.
    for await (const chunk of result.stream) void chunk;
  }

  async get(visibility: Visibility, id: string): Promise<SmsMessage | null> {
    const row = await getRow<MessageRow>(this.ch, 'sms_messages', MESSAGE_COLUMNS, visibility, id);
    return row ? fromRow(row) : null;
  }

  async list(visibility: Visibility, compiled: CompiledQuery): Promise<SmsMessage[]> {
    return (await listRows<MessageRow>(this.ch, 'sms_messages', MESSAGE_COLUMNS, visibility, compiled)).map(fromRow);
  }

  groupCounts(visibility: Visibility, compiled: CompiledQuery): Promise<GroupCount[]> {
    return groupCounts(this.ch, 'sms_messages', visibility, compiled);
  }
}
