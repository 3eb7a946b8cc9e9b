// Embedded chdb shared by the processes of one machine. chdb binds one data directory to one
// process (DESIGN §3a), so in a multi-process deployment without a ClickHouse server the
// process that owns it (`main.ts --serve-clickhouse=<port>`) serves its connection on
// loopback, and the others set CLICKHOUSE_URL=chdb+http://127.0.0.1:<port>. The forwarding is
// at the level of @clickhouse/client's Connection contract (the query text, settings and
// parameter values as the client hands them over), so the owner runs exactly what an
// in-process client would: the engine is the same chdb, only the call crosses a socket.
// It is an internal link between the processes of one deployment, on loopback only, and it
// takes no call without the deployment's secret (`Authorization: Bearer <secret>`): any local
// process could otherwise read and write every organization's rows through it.
import { ClickHouseError, type ClickHouseClient } from '@clickhouse/client';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import type { Logger } from './logger';

export const REMOTE_CHDB_SCHEME = 'chdb+http:';

type Op = 'query' | 'exec' | 'command' | 'insert' | 'ping';

interface RemoteCall {
  readonly op: Op;
  readonly query?: string;
  readonly values?: string;
  readonly clickhouse_settings?: Record<string, unknown>;
  readonly query_params?: Record<string, unknown>;
}

interface ConnectionParams {
  query?: string;
  values?: unknown;
  clickhouse_settings?: Record<string, unknown>;
  query_params?: Record<string, unknown>;
  query_id?: string;
  abort_signal?: AbortSignal;
}

// Parameter values cross as JSON; Date and bigint are tagged so they come back as themselves.
const replacer = (_key: string, value: unknown): unknown => {
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  return value;
};
const reviver = (_key: string, value: unknown): unknown => {
  if (value && typeof value === 'object' && '$bigint' in value) return BigInt((value as { $bigint: string }).$bigint);
  if (value && typeof value === 'object' && '$date' in value) return new Date((value as { $date: string }).$date);
  return value;
};
const tagDates = (params: Record<string, unknown> | undefined): Record<string, unknown> | undefined =>
  params && Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v instanceof Date ? { $date: v.toISOString() } : v]));

async function text(values: unknown): Promise<string | undefined> {
  if (values === undefined) return undefined;
  if (typeof values === 'string') return values;
  let body = '';
  for await (const chunk of values as AsyncIterable<string | Buffer>) body += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return body;
}

const ids = (params: ConnectionParams): { query_id: string; response_headers: Record<string, never>; http_status_code: number } =>
  ({ query_id: params.query_id ?? crypto.randomUUID(), response_headers: {}, http_status_code: 200 });

/** A @clickhouse/client Connection that runs every call on the chdb of the owning process. */
export class RemoteChdbConnection {
  private readonly endpoint: string;
  private readonly authorization: string;

  /** `secret`: the owner's serve secret (CLICKHOUSE_PASSWORD of the processes that use this link). */
  constructor(url: string, secret: string) {
    const parsed = new URL(url);
    this.endpoint = `http://${parsed.host}/chdb`;
    this.authorization = `Bearer ${secret}`;
  }

  private async call(op: Op, params: ConnectionParams): Promise<Buffer> {
    const body: RemoteCall = {
      op, query: params.query, values: await text(params.values),
      clickhouse_settings: params.clickhouse_settings, query_params: tagDates(params.query_params),
    };
    const res = await fetch(this.endpoint, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: this.authorization }, body: JSON.stringify(body, replacer),
      ...(params.abort_signal ? { signal: params.abort_signal } : {}),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status === 200) return bytes;
    const err = JSON.parse(bytes.toString('utf8')) as { message: string; code?: string; type?: string };
    throw err.code ? new ClickHouseError({ message: err.message, code: err.code, type: err.type }) : new Error(err.message);
  }

  async query(params: ConnectionParams): Promise<object> {
    return { stream: Readable.from([await this.call('query', params)]), ...ids(params) };
  }

  async exec(params: ConnectionParams): Promise<object> {
    return { stream: Readable.from([await this.call('exec', params)]), ...ids(params) };
  }

  async command(params: ConnectionParams): Promise<object> {
    await this.call('command', params);
    return ids(params);
  }

  async insert(params: ConnectionParams): Promise<object> {
    await this.call('insert', params);
    return ids(params);
  }

  async ping(): Promise<{ success: true } | { success: false; error: Error }> {
    try {
      await this.call('ping', {});
      return { success: true };
    } catch (error) {
      return { success: false, error: error as Error };
    }
  }

  async close(): Promise<void> { /* stateless: fetch's keep-alive pool closes on its own */ }
}

async function readJson(req: IncomingMessage): Promise<RemoteCall> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'), reviver) as RemoteCall;
}

async function run(client: ClickHouseClient, call: RemoteCall): Promise<Buffer> {
  if (call.op === 'ping') {
    const result = await client.ping();
    if (!result.success) throw result.error;
    return Buffer.alloc(0);
  }
  // Every op becomes an exec of the text the calling client built (FORMAT clause included;
  // an insert's rows follow its statement), with the same settings and parameter values.
  const result = await client.exec({
    query: call.query ?? '',
    ...(call.values !== undefined ? { values: call.values } : {}),
    ...(call.clickhouse_settings ? { clickhouse_settings: call.clickhouse_settings } : {}),
    ...(call.query_params ? { query_params: call.query_params } : {}),
  } as Parameters<ClickHouseClient['exec']>[0]);
  const chunks: Buffer[] = [];
  for await (const chunk of result.stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Where the owner keeps the serve secret when CLICKHOUSE_PASSWORD does not give it. */
export const serveSecretPath = (dataDir: string): string => join(dataDir, 'clickhouse-serve.secret');

/**
 * The serve secret: `configured` (CLICKHOUSE_PASSWORD, which the owner of embedded chdb does not
 * otherwise use) when set, else the one in `$DATA_DIR/clickhouse-serve.secret`, made on first use
 * (32 random bytes, readable by its owner only).
 */
export function serveSecret(configured: string, dataDir: string): { secret: string; source: string } {
  if (configured !== '') return { secret: configured, source: 'CLICKHOUSE_PASSWORD' };
  const file = serveSecretPath(dataDir);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return { secret: readFileSync(file, 'utf8').trim(), source: file };
}

function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const given = Buffer.from(req.headers.authorization ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Serves this process's ClickHouse connection on 127.0.0.1:<port> to callers that present `secret`. */
export async function serveClickHouse(client: ClickHouseClient, port: number, secret: string, log: Logger): Promise<{ stop(): Promise<void> }> {
  if (secret.length < 16) throw new Error('the ClickHouse serve secret must be at least 16 characters (CLICKHOUSE_PASSWORD, or leave it empty for a generated one)');
  const expected = Buffer.from(`Bearer ${secret}`);
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/chdb') {
      res.writeHead(404).end();
      return;
    }
    if (!authorized(req, expected)) {
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'this internal link needs the deployment secret (CLICKHOUSE_PASSWORD of the calling process)' }));
      return;
    }
    readJson(req)
      .then((call) => run(client, call))
      .then((bytes) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes))
      .catch((err: unknown) => {
        const e = err as { message?: string; code?: string; type?: string };
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: e.message ?? String(err), code: e.code, type: e.type }));
      });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  log.info({ port }, 'embedded ClickHouse served to the other processes of this machine');
  return {
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
