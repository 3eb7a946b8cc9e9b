// Messages sent through the legacy API reach the message history (spec 1 §1: the legacy API is
// "the same SMS surface" with organization-wide tokens, so its messages have no project and
// are stored with projectId ''). Against the embedded engine (chdb) and the product's
// migrations, through sms_messages_intake (migration 0012): a legacy message without a
// project is stored and reads back whole, in a batch with other sources' messages too; a
// message of any other source without a project is still refused, storing nothing.
import type { SmsMessage } from '../../core/sms/message';
import type { ClickHouse } from '../../infra/clickhouse';
import type { MessageHistory } from '../../stores/message-history';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { acceptedRows, countMessages, intakePaths } from '../support/intake';
import { iso, makeMessage } from '../../support/message-rows';

let engine: EmbeddedClickHouse;
let ch: ClickHouse;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('legacy_intake');
  ch = engine.ch;
}, 60_000);

afterAll(() => engine.close());


const count = (orgId: string): Promise<number> => countMessages(ch, orgId);

const paths = intakePaths(() => ch);

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
    await history.insertAccepted([acceptedRows([m])]);
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
    await history.insertAccepted([acceptedRows(messages.slice(0, 2)), acceptedRows(messages.slice(2))]);
    for (const m of messages) expect(await history.get({ orgId, projectId: null }, m.id)).toEqual(m);
    expect(await count(orgId)).toBe(messages.length);
  });

  it.each(['http', 'smpp'] as const)('still refuses a batch holding a %s message without a project, storing none of it', async (source) => {
    const orgId = org(`no-project-${source}`);
    const rows = acceptedRows([legacy(orgId), makeMessage({ orgId, source, projectId: '', createdAt: iso(Date.UTC(2026, 10, 22, 13)) })]);
    await expect(history.insertAccepted([rows])).rejects.toThrow();
    expect(await count(orgId)).toBe(0);
  });
});
