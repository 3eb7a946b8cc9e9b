// Inbound messages in the SMS history (DESIGN "Two-way", spec 1 §2.2; migration 0014) against the
// embedded engine (chdb) and the product's migrations: rows of direction `inbound` beside the
// outbound ones, read by id and listed with Grammar A's direction_eq, scoped to their
// organization and project; rows stored before the migration, and accepted messages stored
// through sms_messages_intake (whose view does not name the column), read as outbound; the
// analysts' relation `messages` exposes the column.
import { compile, parseUrl, SMS_FIELDS } from '../../core/filters/grammar-a';
import { inboundMessage, inboundMessageId } from '../../core/sms/inbound';
import type { SmsMessage } from '../../core/sms/message';
import { loadMigrations, migrate, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { MessageHistory, type Visibility } from '../../stores/message-history';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { acceptedRows } from '../support/intake';
import { idAt, iso, makeMessage } from '../../support/message-rows';

const ORG: Visibility = { orgId: 'org-in', projectId: 'p1' };
const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);

let engine: EmbeddedClickHouse;
let ch: ClickHouse;
let history: MessageHistory;

const inbound = (n: number, text: string, status: 'inbound' | 'stop', orgId = 'org-in'): SmsMessage => inboundMessage({
  id: inboundMessageId(`sim-${orgId}-${n}`, iso(T0 + n * 1000)), orgId, projectId: 'p1', tokenId: 'tok-1', from: '+4917600000002', to: '+4915100000001',
  text, status, at: iso(T0 + n * 1000), currency: 'EUR',
});
/** Stored before migration 0014 existed (through the intake view, as the writer stores accepted messages). */
const older = makeMessage({ id: idAt(T0 - 60_000), orgId: 'org-in', projectId: 'p1', createdAt: iso(T0 - 60_000), updatedAt: iso(T0 - 60_000) });
const accepted = makeMessage({ id: idAt(T0 + 500), orgId: 'org-in', projectId: 'p1', createdAt: iso(T0 + 500), updatedAt: iso(T0 + 500) });
const hello = inbound(1, 'hello there', 'inbound');
const stop = inbound(2, 'STOP', 'stop');
const elsewhere = inbound(3, 'other org', 'inbound', 'org-other');

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('inbound_history', { migrated: false });
  ch = engine.ch;
  const log = createLogger('warn');
  const all = loadMigrations();
  await migrate(ch, log, all.filter((m) => m.version < 14));
  history = new MessageHistory(ch);
  await history.insertAccepted([acceptedRows([older])]);
  await migrate(ch, log, all);
  await history.insertAccepted([acceptedRows([accepted])]);
  await history.insert([hello, stop, elsewhere]);
}, 60_000);

afterAll(() => engine.close());

const list = async (qs: string, v: Visibility = ORG): Promise<string[]> => (await history.list(v, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS))).map((m) => m.id);

describe('DESIGN Two-way + spec 1 §2.2: inbound messages in the history (migration 0014)', () => {
  test('an inbound message reads back by id as it was stored: direction inbound, from the handset, to our number, not charged', async () => {
    expect(await history.get(ORG, hello.id)).toEqual(hello);
    expect(await history.get(ORG, stop.id)).toMatchObject({ direction: 'inbound', status: 'stop', text: 'STOP', charged: false, priceUserMicros: 0 });
  });

  test('another organization (or another project) does not see it', async () => {
    expect(await history.get({ orgId: 'org-other', projectId: 'p1' }, hello.id)).toBeNull();
    expect(await history.get({ orgId: 'org-in', projectId: 'p2' }, hello.id)).toBeNull();
    expect(await history.get(ORG, elsewhere.id)).toBeNull();
  });

  test('rows stored before the migration and accepted messages stored through the intake view are outbound', async () => {
    const before = await history.get(ORG, older.id);
    const after = await history.get(ORG, accepted.id);
    expect(before).toEqual(older);
    expect(after).toEqual(accepted);
    expect(before?.direction).toBeUndefined();
  });

  test('GET /sms: inbound rows appear in the normal list; direction_eq=inbound and direction_eq=outbound split it', async () => {
    expect(new Set(await list(''))).toEqual(new Set([older.id, accepted.id, hello.id, stop.id]));
    expect(new Set(await list('direction_eq=inbound'))).toEqual(new Set([hello.id, stop.id]));
    expect(new Set(await list('direction_eq=outbound'))).toEqual(new Set([older.id, accepted.id]));
    expect(await list('direction_eq=inbound&status_eq=stop')).toEqual([stop.id]);
    expect(await history.groupCounts(ORG, compile(parseUrl(new URLSearchParams('_group=direction')), SMS_FIELDS))).toEqual(expect.arrayContaining([{ group: 'inbound', count: 2 }, { group: 'outbound', count: 2 }]));
  });

  test('the analysts\' relation `messages` (docs/analytics.md) exposes direction', async () => {
    const rs = await ch.client.query({
      query: `SELECT id, direction FROM ${ch.table('analytics_messages')}(org = {org:String}) ORDER BY id`, query_params: { org: 'org-in' }, format: 'JSONEachRow',
    });
    const rows = await rs.json<{ id: string; direction: string }>();
    expect(Object.fromEntries(rows.map((r) => [r.id, r.direction]))).toEqual({ [older.id]: 'outbound', [accepted.id]: 'outbound', [hello.id]: 'inbound', [stop.id]: 'inbound' });
  });
});
