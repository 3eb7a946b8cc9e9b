// What the tests of sms_messages_intake share (test/integration/message-history-intake.test.ts,
// legacy-history-intake.test.ts): an sms.accepted body's inside, the rows an organization has,
// and the two ways the history writer stores a body (MessageHistory.insertAccepted).
import type { ClickHouse } from '../../infra/clickhouse';
import { MessageHistory } from '../../stores/message-history';
import { backgroundInsertSettings } from '../../stores/insert-rows';

/** The inside of an sms.accepted body, as the accepted queue writes it (infra/bus/accepted-queue.ts). */
export const acceptedRows = (messages: readonly object[]): Buffer => Buffer.from(messages.map((m) => JSON.stringify(m)).join(','));

/** Rows of `orgId` in sms_messages (every state row). */
export async function countMessages(ch: ClickHouse, orgId: string): Promise<number> {
  const rs = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('sms_messages')} WHERE org_id = {org:String}`, query_params: { org: orgId }, format: 'JSONEachRow' });
  return Number((await rs.json<{ n: string }>())[0]?.n);
}

/**
 * The message history through chdb's parser handed the bytes (insertRaw, the in-process engine),
 * the same with the history writer's statement settings (every insert through insertRaw), and
 * through the client's INSERT with a body (a ClickHouse server, another process's chdb), for
 * `describe.each`; `engine` is read when a describe block starts (after beforeAll opened it).
 */
export function intakePaths(engine: () => ClickHouse): Array<[string, () => MessageHistory]> {
  return [
    ['chdb\'s parser, handed the bytes (insertRaw)', () => {
      expect(engine().insertRaw).toBeDefined();
      return new MessageHistory(engine());
    }],
    // The history writer's stores at BACKGROUND_NICE: os_thread_priority as the statements' own settings (stores/insert-rows.ts).
    ['os_thread_priority of the history writer, on chdb\'s parser (insertRaw, every insert)', () => {
      expect(engine().insertRaw).toBeDefined();
      return new MessageHistory(engine(), backgroundInsertSettings(10));
    }],
    ['the client\'s INSERT with a body', () => {
      const { insertRaw: _, ...client } = engine();
      return new MessageHistory(client);
    }],
  ];
}
