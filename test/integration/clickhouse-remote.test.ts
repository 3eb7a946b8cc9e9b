// Embedded chdb served to another process's client (infra/clickhouse-remote.ts): the same
// statements, inserts, parameter values and errors as an in-process client would see.
import { ClickHouseError } from '@clickhouse/client';
import { migrate, openClickHouse, type ClickHouse } from '../../infra/clickhouse';
import { serveClickHouse } from '../../infra/clickhouse-remote';
import { createLogger } from '../../infra/logger';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../support/embedded-clickhouse';
import { freePort } from '../support/global-setup';

const log = createLogger('warn', { component: 'clickhouse-remote-test' });
let engine: EmbeddedClickHouse;
let owner: ClickHouse;
let remote: ClickHouse;
let served: { stop(): Promise<void> };

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('remote_db', { migrated: false });
  owner = engine.ch;
  const port = await freePort();
  served = await serveClickHouse(owner.client, port, log);
  remote = await openClickHouse({ url: `chdb+http://127.0.0.1:${port}`, user: 'default', password: '', database: 'remote_db', embeddedPath: '/nonexistent' });
}, 60_000);

afterAll(async () => {
  await remote.close();
  await served.stop();
  await engine.close();
});

describe('embedded chdb served over loopback', () => {
  test('the migrations run through the remote client and land in the owner', async () => {
    const ran = await migrate(remote, log);
    expect(ran.length).toBeGreaterThan(0);
    const rows = await (await owner.client.query({ query: `SELECT count() AS n FROM ${owner.table('schema_migrations')}`, format: 'JSONEachRow' })).json<{ n: string }>();
    expect(Number(rows[0]?.n)).toBe(ran.length);
    expect(remote.kind).toBe('embedded');
  });

  test('inserts and parameterized reads round-trip hostile strings and arrays', async () => {
    await remote.client.command({ query: `CREATE TABLE IF NOT EXISTS ${remote.table('t')} (id String, n UInt32) ENGINE = MergeTree ORDER BY id` });
    const ids = ["it's", 'tab\there', 'back\\slash', 'new\nline', 'plain'];
    await remote.client.insert({ table: remote.table('t'), values: ids.map((id, n) => ({ id, n })), format: 'JSONEachRow' });
    const one = await (await remote.client.query({ query: `SELECT n FROM ${remote.table('t')} WHERE id = {id:String}`, query_params: { id: "it's" }, format: 'JSONEachRow' })).json<{ n: number }>();
    expect(one).toEqual([{ n: 0 }]);
    const many = await (await remote.client.query({ query: `SELECT id FROM ${remote.table('t')} WHERE id IN {ids:Array(String)} ORDER BY n`, query_params: { ids }, format: 'JSONEachRow' })).json<{ id: string }>();
    expect(many.map((r) => r.id)).toEqual(ids);
  });

  test('an engine error reaches the caller as a ClickHouseError with its code', async () => {
    const failing = remote.client.query({ query: `SELECT * FROM ${remote.table('missing_table')}`, format: 'JSONEachRow' });
    await expect(failing).rejects.toBeInstanceOf(ClickHouseError);
    await expect(failing).rejects.toMatchObject({ code: '60' });
  });

  test('ping answers through the owner', async () => {
    expect((await remote.client.ping()).success).toBe(true);
  });
});
