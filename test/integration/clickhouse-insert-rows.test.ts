// insertRows (infra/clickhouse.ts), the ingest writer's inserts: on the in-process engine the
// rows' JSON goes to chdb's parser as bytes (insertRaw), elsewhere (a ClickHouse server, the
// chdb of another process) through the client. Against the embedded engine, both paths store
// the same rows for any strings, nulls, arrays, maps and times, in both row formats, and a row
// ClickHouse cannot take fails the insert, which stores none of its rows.
import fc from 'fast-check';
import { insertRows, type ClickHouse } from '../../infra/clickhouse';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../support/embedded-clickhouse';

let engine: EmbeddedClickHouse;
let raw: ClickHouse;
let client: ClickHouse;

/** Not the table's order: a column list that is dropped on the way shows. */
const COLUMNS = ['name', 'path', 'id', 'note', 'tags', 'scores', 'at'] as const;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('insert_rows', { migrated: false });
  raw = engine.ch;
  const { insertRaw: _, ...rest } = engine.ch;
  client = rest;
  await raw.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${raw.database}` });
  await raw.client.command({
    query: `CREATE TABLE ${raw.table('rows')} (path String, id UInt32, name String, note Nullable(String), tags Array(String), scores Map(String, Float64), at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY (path, id)`,
  });
}, 60_000);

afterAll(() => engine.close());

async function stored(path: string): Promise<unknown[]> {
  const rs = await raw.client.query({ query: `SELECT id, name, note, tags, scores, toString(at) AS at FROM ${raw.table('rows')} WHERE path = {path:String} ORDER BY id`, query_params: { path }, format: 'JSONEachRow' });
  return rs.json();
}

const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('"quoted" \\ back\\slash', 'line\nbreak\ttab', '😀 ünïcödé', '[1,2]', ''));
const row = fc.record({
  name: text,
  note: fc.option(text, { nil: null }),
  tags: fc.array(text, { maxLength: 3 }),
  scores: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }), { maxKeys: 3 }),
  at: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }).map((ms) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '')),
});

test('the in-process engine has insertRaw, and the copy without it goes through the client', () => {
  expect(raw.insertRaw).toBeDefined();
  expect(client.insertRaw).toBeUndefined();
});

test('both paths store the same rows, as objects (JSONEachRow) and as arrays in a column order (JSONCompactEachRow)', async () => {
  let round = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 12 }), async (rows) => {
      round += 1;
      const objects = (path: string) => rows.map((r, id) => ({ path, id, ...r }));
      const arrays = (path: string) => rows.map((r, id) => [r.name, path, id, r.note, r.tags, r.scores, r.at]);
      await insertRows(raw, 'rows', objects(`raw-obj-${round}`), 'JSONEachRow');
      await insertRows(client, 'rows', objects(`cli-obj-${round}`), 'JSONEachRow');
      await insertRows(raw, 'rows', arrays(`raw-arr-${round}`), 'JSONCompactEachRow', COLUMNS);
      await insertRows(client, 'rows', arrays(`cli-arr-${round}`), 'JSONCompactEachRow', COLUMNS);
      const expected = await stored(`cli-obj-${round}`);
      expect(expected).toHaveLength(rows.length);
      expect(await stored(`raw-obj-${round}`)).toEqual(expected);
      expect(await stored(`raw-arr-${round}`)).toEqual(expected);
      expect(await stored(`cli-arr-${round}`)).toEqual(expected);
    }),
    { numRuns: 20 },
  );
}, 120_000);

test.each([['insertRaw', () => raw], ['the client', () => client]] as const)('through %s, a row ClickHouse cannot take fails the insert and stores none of its rows', async (name, ch) => {
  const path = `bad-${name}`;
  const good = { path, id: 1, name: 'a', note: null, tags: [], scores: {}, at: '2026-11-24 00:00:00.000' };
  await expect(insertRows(ch(), 'rows', [good, { ...good, id: 'two' }], 'JSONEachRow')).rejects.toThrow();
  expect(await stored(path)).toEqual([]);
});

test('no rows: nothing is sent and nothing fails', async () => {
  await expect(insertRows(raw, 'rows', [], 'JSONEachRow')).resolves.toBeUndefined();
  await expect(insertRows(client, 'rows', [], 'JSONCompactEachRow', COLUMNS)).resolves.toBeUndefined();
});
