// What a store bound as one query parameter, statement by statement: the ClickHouse client's
// query is wrapped (the real engine still answers every statement) while `run` goes.
import type { ClickHouse } from '../../infra/clickhouse';

export async function boundParams(ch: ClickHouse, param: string, run: () => Promise<unknown>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const query = ch.client.query.bind(ch.client);
  const spy = jest.spyOn(ch.client, 'query').mockImplementation((params) => {
    seen.push((params.query_params as Record<string, unknown> | undefined)?.[param]);
    return query(params);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return seen;
}
