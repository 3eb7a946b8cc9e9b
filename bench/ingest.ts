// Ingestion benchmark (ingestion service, spec 2): contacts and events in 100-item batches
// from many connections against the embedded stack (gateway-http + ingest-writer in one
// process, as `npm start` runs them), with the load generator on the same machine.
// Reports accepted items/s, the ingest writer's visibility lag (202 → queryable in
// ClickHouse, p50/p99 from the product's own histogram) and, in the same run, the raw chdb
// batch-insert rate of event rows as the ceiling. Figures printed and written to
// bench/results/ingest.json (or --out <file>). Usage: npm run bench:ingest [-- --runs 3 --seconds 10 --connections 32 --only events --out ingest-x.json]
import autocannon from 'autocannon';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { migrate, openClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { startStack } from '../test/support/global-setup';
import { createDatasourceAt } from './support/tenant';
import { writeResult } from './support/results';

const { values } = benchArgs({ options: {
  runs: { type: 'string', default: '3' }, only: { type: 'string', default: 'both' }, seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '32' }, users: { type: 'string', default: '10000' },
  out: { type: 'string', default: 'ingest.json' },
} });
const RUNS = Number(values.runs);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const USERS = Number(values.users);
const BATCH = 100;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const log = (line: string): void => { process.stderr.write(`[bench:ingest] ${line}\n`); };

/** p-quantile of a Prometheus histogram (cumulative buckets), at the bucket's upper bound. */
function histogramQuantile(metrics: string, name: string, q: number): number | null {
  const buckets = [...metrics.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm'))].map((m) => ({ le: m[1] === '+Inf' ? Infinity : Number(m[1]), count: Number(m[2]) }));
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return null;
  return buckets.find((b) => b.count >= q * total)?.le ?? null;
}

async function metricsText(httpUrl: string): Promise<string> {
  return (await fetch(`${httpUrl}/metrics`)).text();
}

/** Seconds the ingest writer spent so far per phase (its `ingest_writer_phase_seconds` sums). */
function writerPhases(metrics: string): Record<string, number> {
  return Object.fromEntries([...metrics.matchAll(/^ingest_writer_phase_seconds_sum\{phase="([a-z]+)"\} (\S+)/gm)].map((m) => [m[1] as string, Number(m[2])]));
}

/** CPU seconds used so far by the product process (all its threads, chdb's included) and by nats-server. */
async function cpuSeconds(httpUrl: string, dataDir: string): Promise<{ product: number; nats: number }> {
  const product = Number(/^process_cpu_seconds_total (\S+)/m.exec(await metricsText(httpUrl))?.[1] ?? 0);
  const pidFile = join(dataDir, 'run', 'nats-server.pid');
  let nats = 0;
  if (existsSync(pidFile)) {
    const fields = readFileSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    nats = (Number(fields[11]) + Number(fields[12])) / 100;
  }
  return { product, nats };
}

/** Raw chdb: 100,000-row inserts into the events table (with its event_keys view), rows/s (the ceiling). */
async function chdbCeiling(): Promise<number> {
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'bench_ceiling', embeddedPath: mkdtempSync(join(tmpdir(), 'bench-ingest-chdb-')) });
  try {
    await migrate(ch, createLogger('error'));
    // The writer's own format (JSONCompactEachRow in column order), rows built beforehand: only the insert is timed.
    const rows = (offset: number) => Array.from({ length: 100_000 }, (_, i) => [
      'p', 'd', 'purchase', `u${(offset + i) % USERS}`, 'a', `e${offset + i}`, '2026-11-23 10:00:00.000', '2026-11-23 10:00:00.000', 'api',
      { sku: 'A1' }, { amount: i }, {}, {}, {}, {}, offset + i,
    ]);
    const columns: [string, ...string[]] = ['project_id', 'datasource_id', 'event_type', 'user_id', 'audience_id', 'event_id', 'event_date', 'received_at', 'source', 'params_string', 'params_number', 'params_bool', 'params_date', 'params_array', 'params_json', 'version'];
    const rates: number[] = [];
    for (let r = 0; r < 3; r += 1) {
      const batch = rows(r * 100_000);
      const started = performance.now();
      await ch.client.insert({ table: ch.table('events'), values: batch, columns, format: 'JSONCompactEachRow' });
      rates.push(100_000 / ((performance.now() - started) / 1000));
    }
    return median(rates);
  } finally {
    await ch.close();
  }
}

async function main(): Promise<void> {
  log('starting the embedded stack (roles: gateway-http, ingest-writer)');
  const stack = await startStack({ LOG_LEVEL: 'error', INGEST_RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_PER_MINUTE: '1000000000' }, (l) => process.stderr.write(l), ['gateway-http', 'ingest-writer']);
  try {
    const { stream: base, token } = await createDatasourceAt(stack.info.natsUrl, stack.info.httpUrl, 'bench');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    let contactSeq = 0;
    const contactBody = (): string => JSON.stringify(Array.from({ length: BATCH }, () => {
      const n = contactSeq++;
      return { _user_id: `user-${n}`, _email: `user${n}@example.com`, _first_name: 'Bench', plan: n % 3 === 0 ? 'gold' : 'free', visits: n % 17, _client_tags: ['bench'] };
    }));
    let eventSeq = 0;
    const eventBody = (): string => JSON.stringify(Array.from({ length: BATCH }, () => {
      const n = eventSeq++;
      return { _user_id: `user-${n % USERS}`, _event_id: `evt-${n}`, _event_type: n % 2 ? 'purchase' : 'view', _event_parameters: { amount: n % 100, sku: `sku-${n % 50}` } };
    }));
    const drain = async (): Promise<void> => {
      // Wait until the writer has applied everything (its lag histogram stops growing).
      let last = '';
      for (let i = 0; i < 600; i += 1) {
        await new Promise((r) => setTimeout(r, 500));
        const m = /^ingest_visibility_seconds_count (\d+)/m.exec(await metricsText(stack.info.httpUrl))?.[1] ?? '';
        if (m === last) return;
        last = m;
      }
    };

    interface Load { itemsPerSecond: number; p50: number; p99: number; non2xx: number; productCpuMsPer1000: number; natsCpuMsPer1000: number; writerMsPer1000: Record<string, number> }
    /** One load phase; CPU per 1000 items counts the writer's work too (measured until it has drained). */
    const load = async (path: string, body: () => string): Promise<Load> => {
      const before = await cpuSeconds(stack.info.httpUrl, stack.info.dataDir);
      const phasesBefore = writerPhases(await metricsText(stack.info.httpUrl));
      const result = await autocannon({
        url: `${base}/${path}`, connections: CONNECTIONS, duration: SECONDS,
        requests: [{ method: 'POST', headers, setupRequest: (req) => ({ ...req, body: body() }) }],
      });
      await drain();
      const after = await cpuSeconds(stack.info.httpUrl, stack.info.dataDir);
      const phasesAfter = writerPhases(await metricsText(stack.info.httpUrl));
      const items = result['2xx'] * BATCH;
      const writerMsPer1000 = Object.fromEntries(Object.entries(phasesAfter).map(([phase, s]) => [phase, Number((((s - (phasesBefore[phase] ?? 0)) * 1e6) / items).toFixed(1))]));
      return {
        itemsPerSecond: items / SECONDS, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors,
        productCpuMsPer1000: Number((((after.product - before.product) * 1e6) / items).toFixed(1)), natsCpuMsPer1000: Number((((after.nats - before.nats) * 1e6) / items).toFixed(1)),
        writerMsPer1000,
      };
    };
    // Enough contacts first that every event has one (else events are skipped, spec 2 §3).
    log(`creating ${USERS} contacts for the events`);
    for (let i = 0; i < USERS / BATCH; i += 1) {
      const res = await fetch(`${base}/contacts`, { method: 'POST', headers, body: contactBody() });
      if (res.status !== 202) throw new Error(`seeding contacts: ${res.status}`);
    }
    await drain();

    const contactsRuns = [];
    const eventsRuns = [];
    for (let r = 0; r < RUNS; r += 1) {
      // `--only events` skips the contacts phase (for profiling one path).
      if (values.only === 'events') { eventsRuns.push(await load('events', eventBody)); continue; }
      const c = await load('contacts', contactBody);
      log(`contacts run ${r + 1}/${RUNS}: ${c.itemsPerSecond.toFixed(0)} upserts/s, p50 ${c.p50} ms, p99 ${c.p99} ms, non-2xx ${c.non2xx}; CPU per 1000: product ${c.productCpuMsPer1000} ms, nats-server ${c.natsCpuMsPer1000} ms; writer wall ms per 1000 by phase ${JSON.stringify(c.writerMsPer1000)}`);
      contactsRuns.push(c);
      const e = await load('events', eventBody);
      log(`events run ${r + 1}/${RUNS}: ${e.itemsPerSecond.toFixed(0)} events/s, p50 ${e.p50} ms, p99 ${e.p99} ms, non-2xx ${e.non2xx}; CPU per 1000: product ${e.productCpuMsPer1000} ms, nats-server ${e.natsCpuMsPer1000} ms; writer wall ms per 1000 by phase ${JSON.stringify(e.writerMsPer1000)}`);
      eventsRuns.push(e);
    }
    const metrics = await metricsText(stack.info.httpUrl);
    const usage = (await (await fetch(base, { headers })).json()) as { usage: { lastDay: { events: { accepted: number; duplicates: number; skipped: number } } } };
    log('measuring the raw chdb insert ceiling');
    const ceiling = await chdbCeiling();

    const results = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
      conditions: `embedded stack (nats-server, chdb), product roles gateway-http + ingest-writer in one process; autocannon in the same machine, ${CONNECTIONS} connections, ${BATCH}-item batches; ${RUNS} runs of ${SECONDS} s each; medians`,
      at: new Date().toISOString(),
      contacts: {
        upsertsPerSecond: median(contactsRuns.map((r) => r.itemsPerSecond)), p50: median(contactsRuns.map((r) => r.p50)), p99: median(contactsRuns.map((r) => r.p99)),
        productCpuMsPer1000: median(contactsRuns.map((r) => r.productCpuMsPer1000)), natsCpuMsPer1000: median(contactsRuns.map((r) => r.natsCpuMsPer1000)), runs: contactsRuns,
      },
      events: {
        acceptedPerSecond: median(eventsRuns.map((r) => r.itemsPerSecond)), p50: median(eventsRuns.map((r) => r.p50)), p99: median(eventsRuns.map((r) => r.p99)),
        productCpuMsPer1000: median(eventsRuns.map((r) => r.productCpuMsPer1000)), natsCpuMsPer1000: median(eventsRuns.map((r) => r.natsCpuMsPer1000)), runs: eventsRuns,
      },
      visibility: { p50Seconds: histogramQuantile(metrics, 'ingest_visibility_seconds', 0.5), p99Seconds: histogramQuantile(metrics, 'ingest_visibility_seconds', 0.99), note: 'per stream message, reception → rows inserted; at the upper bound of its histogram bucket' },
      stored: { eventsSent: eventSeq, eventsAccepted: usage.usage.lastDay.events.accepted, duplicates: usage.usage.lastDay.events.duplicates, skipped: usage.usage.lastDay.events.skipped },
      ceiling: { name: 'raw chdb JSONCompactEachRow insert of 100,000 event rows (events table with its event_keys view), in the bench process', rowsPerSecond: ceiling },
    };
    const out = writeResult(values.out, results);
    process.stdout.write([
      '',
      `Ingestion benchmark (${results.conditions})`,
      `contacts  ${results.contacts.upsertsPerSecond.toFixed(0).padStart(8)} upserts/s   request p50 ${results.contacts.p50} ms, p99 ${results.contacts.p99} ms; CPU per 1000: product ${results.contacts.productCpuMsPer1000} ms, nats-server ${results.contacts.natsCpuMsPer1000} ms`,
      `events    ${results.events.acceptedPerSecond.toFixed(0).padStart(8)} events/s    request p50 ${results.events.p50} ms, p99 ${results.events.p99} ms; CPU per 1000: product ${results.events.productCpuMsPer1000} ms, nats-server ${results.events.natsCpuMsPer1000} ms`,
      `visible in ClickHouse after: p50 ≤ ${results.visibility.p50Seconds} s, p99 ≤ ${results.visibility.p99Seconds} s`,
      `stored: ${results.stored.eventsAccepted} of ${results.stored.eventsSent} events sent (duplicates ${results.stored.duplicates}, skipped ${results.stored.skipped})`,
      `raw chdb insert ceiling ${ceiling.toFixed(0)} rows/s`,
      `written to ${out}`,
      '',
    ].join('\n'));
  } finally {
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:ingest failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
