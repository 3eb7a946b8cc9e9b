// ClickHouse through @clickhouse/client: a server when CLICKHOUSE_URL is set, otherwise the
// embedded engine (chdb, in-process, one data directory per process). Versioned migrations
// from infra/migrations/*.sql run at start, idempotently, with identical SQL on both.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from './logger';
import { RemoteChdbConnection, REMOTE_CHDB_SCHEME } from './clickhouse-remote';
import { projectPath } from './paths';

export interface ClickHouseOptions {
  readonly url: string | undefined;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** Directory of the embedded engine's data, used when url is undefined. */
  readonly embeddedPath: string;
}

export interface ClickHouse {
  readonly client: ClickHouseClient;
  readonly kind: 'embedded' | 'server';
  readonly database: string;
  /** Fully qualified, quoted table name. The chdb connection ignores a default database. */
  table(name: string): string;
  /**
   * The in-process engine only: inserts `body` (rows in `format`) into the table `name` of this
   * database by handing the bytes to chdb's parser as they are. Through the client, chdb turns
   * the body into a string and appends it to the statement's text (two copies on the JavaScript
   * thread, then the SQL path); this skips both (docs/acceptance.md, "2026-11-24 02:36–04:50 UTC"). Undefined for a
   * server and for the chdb of another process: use the client there.
   */
  readonly insertRaw?: (name: string, body: Buffer, format: 'JSONEachRow' | 'JSONCompactEachRow', settings: Record<string, number | string>, columns?: readonly string[]) => Promise<void>;
  /**
   * A client for long reads (audience searches) whose queries do not queue behind `client`'s.
   * A chdb session runs its queries one at a time, so on the in-process engine this is a second
   * session on the same data directory (opened on first use, closed with this); a server runs
   * queries concurrently and this is `client`. Undefined for the chdb of another process.
   * `name` picks one of several such lanes (default `search`), each its own session: the
   * statements of a heavy audience searcher run on `heavy` (stores/search-fairness.ts).
   */
  readonly readLane?: (name?: 'search' | 'heavy') => ClickHouseClient;
  /**
   * The in-process engine only: a new chdb session on the same data directory, for statements
   * that must share nothing with any other (analysts' SQL: a session keeps the output a failed
   * statement had written and hands it to its next statement). The caller closes it.
   */
  readonly isolatedSession?: () => ClickHouseClient;
  close(): Promise<void>;
}

type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Opens ClickHouse; the embedded engine (chdb, about 150 MiB of memory) is loaded only by a process that opens it. */
export async function openClickHouse(options: ClickHouseOptions): Promise<ClickHouse> {
  if (!IDENTIFIER.test(options.database)) throw new Error(`CLICKHOUSE_DATABASE must be a plain identifier, got "${options.database}"`);
  let client: ClickHouseClient;
  let insertRaw: ClickHouse['insertRaw'];
  let readLane: ClickHouse['readLane'];
  let isolatedSession: ClickHouse['isolatedSession'];
  const lanes = new Map<string, ClickHouseClient>();
  const remoteChdb = options.url?.startsWith(`${REMOTE_CHDB_SCHEME}//`) ?? false;
  if (remoteChdb) {
    // The chdb of another process of this machine (infra/clickhouse-remote.ts).
    client = createClient({ connection: new RemoteChdbConnection(options.url as string, options.password) as unknown as ClientConnection });
  } else if (options.url) {
    client = createClient({ url: options.url, username: options.user, password: options.password, request_timeout: 30_000 });
    readLane = () => client;
  } else {
    mkdirSync(options.embeddedPath, { recursive: true });
    const { createChdbConnection } = await import('chdb/connection');
    // chdb implements the client's Connection contract against its own copy of
    // @clickhouse/client-common's types; the two copies differ only nominally.
    const chdb = createChdbConnection({ path: options.embeddedPath });
    client = createClient({ connection: chdb as unknown as ClientConnection });
    insertRaw = async (name, body, format, settings, columns) => {
      if (!IDENTIFIER.test(name)) throw new Error(`invalid table name ${name}`);
      // chdb checks the name against its own identifier rules: unquoted, database-qualified.
      await chdb.chdb.rawInsert({ table: `${options.database}.${name}`, values: body, format, settings, ...(columns ? { columns } : {}) });
    };
    readLane = (name = 'search') => {
      let lane = lanes.get(name);
      if (lane === undefined) {
        lane = createClient({ connection: createChdbConnection({ path: options.embeddedPath }) as unknown as ClientConnection });
        lanes.set(name, lane);
      }
      return lane;
    };
    isolatedSession = () => createClient({ connection: createChdbConnection({ path: options.embeddedPath }) as unknown as ClientConnection });
  }
  return {
    client,
    kind: options.url && !remoteChdb ? 'server' : 'embedded',
    database: options.database,
    ...(insertRaw ? { insertRaw } : {}),
    ...(readLane ? { readLane } : {}),
    ...(isolatedSession ? { isolatedSession } : {}),
    table: (name) => {
      if (!IDENTIFIER.test(name)) throw new Error(`invalid table name ${name}`);
      return `\`${options.database}\`.\`${name}\``;
    },
    close: async () => { for (const lane of lanes.values()) await lane.close(); await client.close(); },
  };
}

export const MIGRATIONS_DIR = projectPath('infra', 'migrations');

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), 'utf8');
      const statements = sql
        .split(/;\s*$/m)
        .map((s) => s.split('\n').filter((line) => !line.trim().startsWith('--')).join('\n').trim())
        .filter(Boolean);
      return { version: Number(file.slice(0, 4)), name: file.replace(/\.sql$/, ''), statements };
    });
}

/** Applies every migration not yet recorded in schema_migrations, in version order. */
export async function migrate(ch: ClickHouse, log: Logger, migrations = loadMigrations()): Promise<number[]> {
  await ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS \`${ch.database}\`` });
  await ch.client.command({
    query: `CREATE TABLE IF NOT EXISTS ${ch.table('schema_migrations')} (version UInt32, name String, applied_at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY version`,
  });
  const done = await ch.client.query({ query: `SELECT version FROM ${ch.table('schema_migrations')}`, format: 'JSONEachRow' });
  const applied = new Set((await done.json<{ version: number }>()).map((r) => Number(r.version)));
  const ran: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    for (const statement of migration.statements) {
      await ch.client.command({ query: statement.replaceAll('{db}', `\`${ch.database}\``) });
    }
    await ch.client.insert({
      table: ch.table('schema_migrations'),
      values: [{ version: migration.version, name: migration.name, applied_at: Date.now() }],
      format: 'JSONEachRow',
    });
    log.info({ migration: migration.name }, 'clickhouse migration applied');
    ran.push(migration.version);
  }
  return ran;
}

export async function clickhouseRtt(ch: ClickHouse): Promise<number> {
  const started = performance.now();
  const result = await ch.client.ping();
  if (!result.success) throw result.error;
  return performance.now() - started;
}
