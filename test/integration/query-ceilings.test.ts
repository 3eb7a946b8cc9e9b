// The cost ceilings the stores write into their own statements (stores/query-ceilings.ts), on
// the embedded engine (chdb, whose connection throws the ClickHouseError class of
// @clickhouse/client-common, not the one @clickhouse/client exports): a statement beyond a
// ceiling is a 400 naming it, never a 500, for an audience search (QUERY_TOO_EXPENSIVE, spec 3
// §8; docs/grammar-b.md), the delivery statistics (QUERY_TOO_EXPENSIVE, docs/grammar-a.md
// "Statistics") and analysts' SQL (ANALYTICS_LIMIT_EXCEEDED, docs/analytics.md "Ceilings").
import { DEFAULT_ANALYTICS_CEILINGS } from '../../core/analytics';
import { AppError } from '../../core/errors';
import { parseUrl } from '../../core/filters/grammar-a';
import { compileStats } from '../../core/filters/grammar-a/stats';
import { parseSearch } from '../../core/filters/grammar-b';
import type { ClickHouse } from '../../infra/clickhouse';
import { AnalyticsSql } from '../../stores/analytics-sql';
import { AudienceSearch } from '../../stores/audience-search';
import { MessageHistory } from '../../stores/message-history';
import { MessageStats } from '../../stores/message-stats';
import { contact, contactRow } from '../support/audience-model';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { makeMessage } from '../../support/message-rows';

let engine: EmbeddedClickHouse;
let ch: ClickHouse;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('query_ceilings');
  ch = engine.ch;
  await ch.client.insert({ table: ch.table('audience'), values: ['u1', 'u2', 'u3'].map((userId) => contactRow(contact({ userId }), 0)), format: 'JSONEachRow' });
  await new MessageHistory(ch).insert(['a', 'b', 'c'].map((clientId) => makeMessage({ orgId: 'org-c', projectId: 'p1', clientId })));
}, 60_000);

afterAll(() => engine.close());

const refusal = async (work: Promise<unknown>): Promise<{ code: string; detail: string }> => {
  const err: unknown = await work.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  return { code: (err as AppError).code, detail: (err as AppError).message };
};

describe('a statement beyond its ceiling is a 400 naming the ceiling, on the embedded engine', () => {
  test('spec 3 §8: an audience search beyond max_rows_to_read is QUERY_TOO_EXPENSIVE', async () => {
    const search = new AudienceSearch(ch, { getRoot: async () => null }, Buffer.alloc(32, 7), { maxExecutionSeconds: 5, maxRowsToRead: 1, maxMemoryBytes: 1024 ** 3 });
    const answer = await refusal(search.search(parseSearch({ version: '0.0.1' }), { project: 'p1', timezone: 'UTC', now: new Date() }));
    expect(answer).toEqual({ code: 'QUERY_TOO_EXPENSIVE', detail: expect.stringContaining('max_rows_to_read (1 rows)') });
  });

  test('docs/grammar-a.md "Statistics": GET /sms/stats beyond max_memory_usage is QUERY_TOO_EXPENSIVE', async () => {
    const stats = new MessageStats(ch, { maxExecutionSeconds: 10, maxMemoryBytes: 1 });
    const answer = await refusal(stats.sms({ orgId: 'org-c', projectId: null }, compileStats(parseUrl(new URLSearchParams('_group=country')), 'sms'), 'EUR'));
    expect(answer).toEqual({ code: 'QUERY_TOO_EXPENSIVE', detail: expect.stringContaining('max_memory_usage (1 bytes)') });
  });

  test('docs/analytics.md "Ceilings": analysts\' SQL beyond max_rows_to_read is ANALYTICS_LIMIT_EXCEEDED', async () => {
    const sql = new AnalyticsSql(ch, { ...DEFAULT_ANALYTICS_CEILINGS, maxRowsToRead: 1 });
    const answer = await refusal(sql.run('SELECT count() FROM messages', 'JSON', { orgId: 'org-c', projectIds: ['p1'] }));
    expect(answer).toEqual({ code: 'ANALYTICS_LIMIT_EXCEEDED', detail: expect.stringContaining('max_rows_to_read (1 rows)') });
  });
});
