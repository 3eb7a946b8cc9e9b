// Messages sent through the legacy API reach the message history (spec 1 §1: the legacy API is
// "the same SMS surface" with organization-wide tokens, so its messages have no project and
// are stored with projectId ''). Against the embedded engine (chdb) and the product's
// migrations, through sms_messages_intake (migration 0012): a legacy message without a
// project is stored and reads back whole, in a batch with other sources' messages too; a
// message of any other source without a project is still refused, storing nothing.
import type { SmsMessage } from '../../core/sms/message';
import type { ClickHouse } from '../../infra/clickhouse';
import { MessageHistory } from '../../stores/message-history';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../support/embedded-clickhouse';
import { iso, makeMessage } from '../support/message-rows';

let engine: EmbeddedClickHouse;
let ch: ClickHouse;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('legacy_intake');
  ch = engine.ch;
}, 60_000);

afterAll(() => engine.close());

/** The inside of an sms.accepted body, as the accepted queue writes it (stores/message-state.ts). */
const rowsOf = (messages: readonly object[]): Buffer => Buffer.from(messages.map((m) => JSON.stringify(m)).join(','));

async function count(orgId: string): Promise<number> {
  const rs = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('sms_messages')} WHERE org_id = {org:String}`, query_params: { org: orgId }, format: 'JSONEachRow' });
  return Number((await rs.json<{ n: string }>())[0]?.n);
}

const paths: Array<[string, () => MessageHistory]> = [
  ['chdb\'s parser, handed the bytes (insertRaw)', () => {
    expect(ch.insertRaw).toBeDefined();
    return new MessageHistory(ch);
  }],
  ['the client\'s INSERT with a body', () => {
    const { insertRaw: _, ...client } = ch;
    return new MessageHistory(client);
  }],
];

describe.each(paths)('legacy messages in the message history (spec 1 §1 legacy API; migration 0012), through %s', (path, make) => {
  let history: MessageHistory;
  beforeAll(() => {
    history = make();
  });
  const org = (name: string): string => `${path.slice(0, 4)}-${name}`;
  const legacy = (orgId: string, overrides: Partial<SmsMessage> = {}): SmsMessage =>
    makeMessage({ orgId, projectId: '', source: 'legacy', clientId: 'legacy-order-1', ...overrides });

  it('stores an accepted legacy message (no project) and reads it back whole with an organization-wide view', async () => {
    const m = legacy(org('one'));
    await history.insertAccepted([rowsOf([m])]);
    expect(await history.get({ orgId: m.orgId, projectId: null }, m.id)).toEqual(m);
    // A project's token does not see it: it belongs to no project.
    expect(await history.get({ orgId: m.orgId, projectId: 'p1' }, m.id)).toBeNull();
  });

  it('stores a batch mixing legacy, http and smpp messages, all of them', async () => {
    const orgId = org('mixed');
    const at = (minute: number): string => iso(Date.UTC(2026, 10, 22, 12, minute));
    const messages = [
      makeMessage({ orgId, createdAt: at(1) }),
      legacy(orgId, { createdAt: at(2) }),
      makeMessage({ orgId, source: 'smpp', createdAt: at(3) }),
      legacy(orgId, { createdAt: at(4), clientId: null }),
    ];
    await history.insertAccepted([rowsOf(messages.slice(0, 2)), rowsOf(messages.slice(2))]);
    for (const m of messages) expect(await history.get({ orgId, projectId: null }, m.id)).toEqual(m);
    expect(await count(orgId)).toBe(messages.length);
  });

  it.each(['http', 'smpp'] as const)('still refuses a batch holding a %s message without a project, storing none of it', async (source) => {
    const orgId = org(`no-project-${source}`);
    const rows = rowsOf([legacy(orgId), makeMessage({ orgId, source, projectId: '', createdAt: iso(Date.UTC(2026, 10, 22, 13)) })]);
    await expect(history.insertAccepted([rows])).rejects.toThrow();
    expect(await count(orgId)).toBe(0);
  });
});
