// Embedded chdb served to another process's client (infra/clickhouse-remote.ts): the same
// statements, inserts, parameter values and errors as an in-process client would see.
import { ClickHouseError } from '@clickhouse/client';
import { migrate, openClickHouse, type ClickHouse } from '../../infra/clickhouse';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveClickHouse, serveSecret, serveSecretPath } from '../../infra/clickhouse-remote';
import { createLogger } from '../../infra/logger';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { freePort } from '../../infra/local-engines';

const log = createLogger('warn', { component: 'clickhouse-remote-test' });
let engine: EmbeddedClickHouse;
let owner: ClickHouse;
let remote: ClickHouse;
let served: { stop(): Promise<void> };
let url: string;
const SECRET = 'a-test-secret-of-the-deployment-0123456789';

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('remote_db', { migrated: false });
  owner = engine.ch;
  const port = await freePort();
  served = await serveClickHouse(owner.client, port, SECRET, log);
  url = `chdb+http://127.0.0.1:${port}`;
  remote = await openClickHouse({ url, user: 'default', password: SECRET, database: 'remote_db', embeddedPath: '/nonexistent' });
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

describe('the loopback link takes only callers with the deployment secret (an internal link, not an API)', () => {
  test('no secret or a wrong one: refused, nothing runs, the error names what to set', async () => {
    for (const password of ['', 'wrong-secret-of-the-same-length-0123456789', SECRET.slice(0, -1)]) {
      const intruder = await openClickHouse({ url, user: 'default', password, database: 'remote_db', embeddedPath: '/nonexistent' });
      try {
        await expect(intruder.client.command({ query: `CREATE TABLE ${intruder.table('intruder')} (x UInt8) ENGINE = Memory` })).rejects.toThrow(/needs the deployment secret \(CLICKHOUSE_PASSWORD/);
        expect((await intruder.client.ping()).success).toBe(false);
      } finally {
        await intruder.close();
      }
    }
    const tables = await (await owner.client.query({ query: `SELECT count() AS n FROM system.tables WHERE database = 'remote_db' AND name = 'intruder'`, format: 'JSONEachRow' })).json<{ n: string }>();
    expect(Number(tables[0]?.n)).toBe(0);
  });

  test('serveSecret: CLICKHOUSE_PASSWORD when set, else a generated secret in DATA_DIR (owner-only), the same on every start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'serve-secret-'));
    try {
      expect(serveSecret('configured-secret-0123456789', dir)).toEqual({ secret: 'configured-secret-0123456789', source: 'CLICKHOUSE_PASSWORD' });
      const first = serveSecret('', dir);
      expect(first.source).toBe(serveSecretPath(dir));
      expect(first.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(statSync(serveSecretPath(dir)).mode & 0o777).toBe(0o600);
      expect(serveSecret('', dir).secret).toBe(first.secret);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a short secret is refused at start', async () => {
    await expect(serveClickHouse(owner.client, await freePort(), 'short', log)).rejects.toThrow(/at least 16 characters/);
  });
});
