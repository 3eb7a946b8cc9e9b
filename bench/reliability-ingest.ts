// Ingestion reliability run (ingestion service, spec 2): the product (gateway-http and
// ingest-writer in one process, as embedded chdb requires) is killed with SIGKILL twice and
// nats-server is restarted while N events in 100-item batches, with duplicates mixed in, are
// sent; a request that fails is sent again as is. Then the product is stopped and its
// ClickHouse opened: every event id that got a 202 must be stored exactly once, and every
// trigger-worthy one must have exactly one automation trigger. Prints lost, duplicated rows,
// missing and duplicated triggers; writes bench/results/reliability-ingest.json.
// Usage: npm run reliability:ingest [-- --events 100000]
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { openClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { STREAMS, SUBJECTS } from '../infra/nats';
import { sleep } from '../infra/supervisor';
import { freePort, startLocalEngines } from '../infra/local-engines';
import { removeData } from '../support/stack';
import { createDatasourceAt } from './support/tenant';
import { writeResult } from './support/results';
import { ensureBuilt, PRODUCT_NODE_FLAGS } from '../infra/paths';

const { values } = benchArgs({ options: { events: { type: 'string', default: '100000' }, users: { type: 'string', default: '1000' } } });
const TOTAL = Number(values.events);
const USERS = Number(values.users);
const ROOT = join(__dirname, '..');
const say = (line: string): void => { process.stderr.write(`[reliability:ingest ${new Date().toISOString().slice(11, 19)}] ${line}\n`); };

interface SentEvent { _user_id: string; _event_id: string; _event_type: string; _event_parameters: Record<string, unknown>; _event_date?: string }

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-reliability-'));
  const log = createLogger('warn', { component: 'reliability-ingest' });
  const engines = await startLocalEngines(dir, log);

  const httpPort = await freePort();
  const natsUrl = engines.natsUrl;
  const productDir = join(dir, 'product');
  const env = {
    ...process.env, NATS_URL: natsUrl, TEMPORAL_ADDRESS: engines.temporalAddress, HTTP_PORT: String(httpPort), HTTP_HOST: '127.0.0.1', DATA_DIR: productDir,
    LOG_LEVEL: 'error', DEMO_SEED: 'false', INGEST_RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_PER_MINUTE: '100000000',
  };
  let product: ChildProcess | undefined;
  const startProduct = (): void => {
    product = spawn(process.execPath, [...PRODUCT_NODE_FLAGS, ensureBuilt(), '--role=gateway-http,ingest-writer'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  };
  const base = `http://127.0.0.1:${httpPort}`;
  const healthy = async (): Promise<void> => { while (!(await fetch(`${base}/health`).then((r) => r.status === 200, () => false))) await sleep(250); };
  startProduct();
  await healthy();

  const { projectId, datasourceId, token, stream } = await createDatasourceAt(natsUrl, base, 'reliability');
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  say(`product up (gateway-http + ingest-writer); data in ${dir}`);

  let refused = 0;
  const post = async (path: string, body: unknown): Promise<number> => {
    let retries = 0;
    for (;;) {
      try {
        const res = await fetch(`${stream}/${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(15000) });
        if (res.status === 202) return retries;
        if (res.status === 429) {
          // Back-pressure (spec 2 §7): the writer is behind; nothing was stored, send it again after Retry-After.
          refused += 1;
          await sleep(1000 * Number(res.headers.get('retry-after') ?? 1));
          continue;
        }
        if (res.status !== 500 && res.status !== 503) throw new Error(`unexpected ${res.status}: ${await res.text()}`);
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('unexpected')) throw err;
      }
      retries += 1;
      await sleep(300);
    }
  };
  for (let b = 0; b < USERS / 100; b += 1) await post('contacts', Array.from({ length: 100 }, (_, i) => ({ _user_id: `u${b * 100 + i}`, _email: `u${b * 100 + i}@example.com` })));

  // Event n: unique id `e<n>`; every 10th item of a batch repeats an earlier id instead (same
  // payload, a client retry); one in five is dated 3 h ago (stored, no trigger).
  const expected = new Map<string, boolean>(); // id → trigger-worthy
  const recent = Date.now();
  const eventOf = (n: number): SentEvent => ({
    _user_id: `u${n % USERS}`, _event_id: `e${n}`, _event_type: n % 2 ? 'purchase' : 'view', _event_parameters: { amount: n % 100 },
    ...(n % 5 === 0 ? { _event_date: new Date(recent - 3 * 3600_000).toISOString() } : {}),
  });
  const batches = Math.ceil(TOTAL / 90);
  let next = 0;
  let produced = 0;
  let retries = 0;
  let duplicatesSent = 0;
  const started = Date.now();
  const sender = async (): Promise<void> => {
    for (;;) {
      const b = next++;
      if (b >= batches) return;
      const items: SentEvent[] = [];
      for (let i = 0; i < 100; i += 1) {
        if (i % 10 === 9 && produced > 0) {
          items.push(eventOf(Math.floor(Math.random() * produced)));
          duplicatesSent += 1;
        } else {
          const n = b * 90 + items.filter((_, j) => j % 10 !== 9).length;
          items.push(eventOf(n));
        }
      }
      retries += await post('events', items);
      for (const e of items) expected.set(e._event_id, e._event_date === undefined);
      produced = Math.max(produced, (b + 1) * 90);
    }
  };

  const chaos = (async () => {
    await sleep(8000);
    say('kill -9 product (gateway-http + ingest-writer)'); product?.kill('SIGKILL'); await sleep(1500); startProduct(); say('product restarted');
    await sleep(8000);
    say('restart nats-server'); await engines.restartNats(); say('nats-server back');
    await sleep(8000);
    say('kill -9 product again'); product?.kill('SIGKILL'); await sleep(1500); startProduct(); say('product restarted');
  })();
  await Promise.all(Array.from({ length: 4 }, sender));
  await chaos;
  await healthy();
  say(`${expected.size} distinct events accepted in ${((Date.now() - started) / 1000).toFixed(0)} s (${duplicatesSent} duplicates sent on purpose, ${retries} request retries, ${refused} answered 429 and sent again after Retry-After)`);

  // Wait until the writer has applied everything: the stream's consumer has nothing pending.
  const nc = await connect({ servers: natsUrl });
  const js = jetstream(nc);
  const jsm = await (await import('@nats-io/jetstream')).jetstreamManager(nc);
  for (;;) {
    const info = await jsm.consumers.info(STREAMS.ingest.name, 'ingest-writer');
    if (info.num_pending === 0 && info.num_ack_pending === 0) break;
    say(`writer: ${info.num_pending} pending, ${info.num_ack_pending} in flight`);
    await sleep(2000);
  }
  const triggerCounts = new Map<string, number>();
  const consumer = await js.consumers.get(STREAMS.automation.name, { filter_subjects: [SUBJECTS.automationTrigger(projectId)] });
  let pending = (await consumer.info()).num_pending;
  while (pending > 0) {
    const batch = await consumer.fetch({ max_messages: Math.min(pending, 1000), expires: 3000 });
    let got = 0;
    for await (const m of batch) {
      for (const { _event_id: id } of (m.json() as { triggers: Array<{ _event_id: string }> }).triggers) triggerCounts.set(id, (triggerCounts.get(id) ?? 0) + 1);
      got += 1;
    }
    if (got === 0) break;
    pending -= got;
  }
  await nc.close();

  product?.kill('SIGTERM');
  await new Promise<void>((resolve) => { if (product?.exitCode !== null) resolve(); else product.once('exit', () => resolve()); });
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'sms_platform', embeddedPath: join(productDir, 'clickhouse') });
  const rows = async <T>(query: string): Promise<T[]> => (await ch.client.query({ query, query_params: { ds: datasourceId }, format: 'JSONEachRow' })).json<T>();
  const [totals] = await rows<{ rows: string; ids: string }>(`SELECT count() AS rows, uniqExact(event_id) AS ids FROM ${ch.table('events')} WHERE datasource_id = {ds:String}`);
  const stored = new Set((await rows<{ event_id: string }>(`SELECT DISTINCT event_id FROM ${ch.table('events')} WHERE datasource_id = {ds:String}`)).map((r) => r.event_id));
  await ch.close();

  const lost = [...expected.keys()].filter((id) => !stored.has(id));
  const worthy = [...expected].filter(([, w]) => w).map(([id]) => id);
  const missingTriggers = worthy.filter((id) => !triggerCounts.has(id));
  const duplicatedTriggers = [...triggerCounts.values()].reduce((s, c) => s + (c - 1), 0);
  const unexpectedTriggers = [...triggerCounts.keys()].filter((id) => !expected.get(id)).length;
  const result = {
    at: new Date().toISOString(), eventsAccepted: expected.size, duplicatesSent, requestRetries: retries, refused429: refused,
    storedRows: Number(totals?.rows ?? 0), storedIds: Number(totals?.ids ?? 0), lost: lost.length, duplicatedRows: Number(totals?.rows ?? 0) - Number(totals?.ids ?? 0),
    triggerWorthy: worthy.length, triggers: [...triggerCounts.values()].reduce((s, c) => s + c, 0), missingTriggers: missingTriggers.length, duplicatedTriggers, unexpectedTriggers,
    chaos: ['kill -9 product (t≈8 s)', 'restart nats-server (t≈17 s)', 'kill -9 product (t≈26 s)'],
  };
  const written = writeResult('reliability-ingest.json', result);
  if (lost.length > 0) say(`lost examples: ${lost.slice(0, 5).join(', ')}`);
  if (missingTriggers.length > 0) say(`missing trigger examples: ${missingTriggers.slice(0, 5).join(', ')}`);
  process.stdout.write(`\naccepted ${result.eventsAccepted} events: lost ${result.lost}, duplicated rows ${result.duplicatedRows}; triggers ${result.triggers} for ${result.triggerWorthy} trigger-worthy events: missing ${result.missingTriggers}, duplicated ${result.duplicatedTriggers}, unexpected ${result.unexpectedTriggers} (written to ${written})\n`);
  await engines.stop();
  const passed = result.lost === 0 && result.duplicatedRows === 0 && result.missingTriggers === 0 && result.duplicatedTriggers === 0 && result.unexpectedTriggers === 0;
  // A failed run keeps its data to be looked at.
  if (passed) removeData(dir, (line) => process.stderr.write(line));
  process.exit(passed ? 0 : 1);
}

main().catch((err: unknown) => { process.stderr.write(`reliability:ingest failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
