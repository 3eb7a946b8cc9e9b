// Ingestion benchmark (ingestion service, spec 2): contacts and events in 100-item batches
// from many connections against the embedded stack (gateway-http + ingest-writer in one
// process, as `npm start` runs them), with the load generator on the same machine.
// Reports per phase: accepted items/s (2xx during the load), the sustained rate (items
// accepted / time from the first POST until the writer has applied the last of them, i.e.
// every accepted item is queryable), 429s (the API's back-pressure), the writer's visibility
// lag (reception → queryable, p50/p99 of the product's own histogram over that phase), CPU per
// 1,000 items by component (the product's JavaScript thread, its other threads: chdb and
// libuv, V8's helpers; nats-server; the load generator), and the writer's time per phase.
// Then a paced events run at 80 % of the sustained events rate (its visibility is the
// "below saturation" figure), and the raw chdb batch-insert rate of the same event rows as
// the ceiling. Figures printed and written to bench/results/ingest.json (or --out <file>).
// Usage: npm run bench:ingest [-- --runs 3 --seconds 10 --connections 16 --only events|contacts --paced-share 0.8 --out ingest-x.json]
// (`--only contacts`: the contacts runs alone, without the events, paced and ceiling phases.)
import autocannon from 'autocannon';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { drainWriter } from './ingest-drain';
import { migrate, openClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { startStack } from '../support/stack';
import { createDatasourceAt } from './support/tenant';
import { loadAverage, writeResult } from './support/results';

const { values } = benchArgs({ options: {
  runs: { type: 'string', default: '3' }, only: { type: 'string', default: 'both' }, seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '16' }, users: { type: 'string', default: '10000' },
  'paced-share': { type: 'string', default: '0.8' },
  out: { type: 'string', default: 'ingest.json' },
} });
const RUNS = Number(values.runs);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const USERS = Number(values.users);
const PACED_SHARE = Number(values['paced-share']);
const BATCH = 100;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const log = (line: string): void => { process.stderr.write(`[bench:ingest] ${line}\n`); };

type Buckets = Array<{ le: number; count: number }>;
/** The cumulative buckets of a Prometheus histogram without labels. */
function histogramBuckets(metrics: string, name: string): Buckets {
  return [...metrics.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm'))].map((m) => ({ le: m[1] === '+Inf' ? Infinity : Number(m[1]), count: Number(m[2]) }));
}

/** p-quantile of a histogram's observations between two readings (cumulative buckets), at the bucket's upper bound. */
function histogramQuantile(after: Buckets, q: number, before: Buckets = []): number | null {
  const buckets = after.map((b, i) => ({ le: b.le, count: b.count - (before[i]?.count ?? 0) }));
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

/** CPU seconds (user + system) of a /proc stat line. */
const statSeconds = (stat: string): number => {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/** The pid of the recorded nats-server (the run file holds JSON with `pid`, or the bare pid). */
function natsPid(dataDir: string): string | undefined {
  const pidFile = join(dataDir, 'run', 'nats-server.pid');
  if (!existsSync(pidFile)) return undefined;
  const text = readFileSync(pidFile, 'utf8').trim();
  return text.startsWith('{') ? String((JSON.parse(text) as { pid: number }).pid) : text;
}

type Cpu = Record<'productJs' | 'productChdbAndLibuv' | 'productV8Helpers' | 'chdbMerges' | 'libuvWorkers' | 'nats' | 'loadGenerator', number>;
/**
 * CPU seconds used so far, by component: the product's JavaScript thread (HTTP gateway and
 * ingest writer share it), its other threads (chdb's pools and libuv's, where chdb statements
 * run; V8's compiler and GC helpers, threads named `V8Worker`, apart), nats-server, and this
 * process (autocannon). Inside productChdbAndLibuv: chdbMerges (chdb's `MergeMutate` threads,
 * background merges of the parts each insert creates) and libuvWorkers (`libuv-worker`: chdb's
 * asynchronous calls run their statements there); the rest is chdb's query pools.
 */
function cpuSeconds(productPid: number, dataDir: string): Cpu {
  const cpu: Cpu = { productJs: 0, productChdbAndLibuv: 0, productV8Helpers: 0, chdbMerges: 0, libuvWorkers: 0, nats: 0, loadGenerator: 0 };
  for (const tid of readdirSync(`/proc/${productPid}/task`)) {
    let stat: string;
    try { stat = readFileSync(`/proc/${productPid}/task/${tid}/stat`, 'utf8'); } catch { continue; }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (tid === String(productPid)) cpu.productJs += statSeconds(stat);
    else if (comm.startsWith('V8')) cpu.productV8Helpers += statSeconds(stat);
    else if (comm === 'MergeMutate') cpu.chdbMerges += statSeconds(stat);
    else if (comm === 'libuv-worker') cpu.libuvWorkers += statSeconds(stat);
  }
  // The rest of the process (threads that ended included: the process total counts them).
  cpu.productChdbAndLibuv = statSeconds(readFileSync(`/proc/${productPid}/stat`, 'utf8')) - cpu.productJs - cpu.productV8Helpers;
  const nats = natsPid(dataDir);
  if (nats !== undefined) cpu.nats = statSeconds(readFileSync(`/proc/${nats}/stat`, 'utf8'));
  const own = process.cpuUsage();
  cpu.loadGenerator = (own.user + own.system) / 1e6;
  return cpu;
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
    /** Messages applied so far (the writer's visibility histogram) and the gateway's lag gauge (0: everything it published is applied). */
    const writerState = async (): Promise<{ applied: number; lag: number }> => {
      const text = await metricsText(stack.info.httpUrl);
      return { applied: Number(/^ingest_visibility_seconds_count (\d+)/m.exec(text)?.[1] ?? 0), lag: Number(/^ingest_lag_seconds (\S+)/m.exec(text)?.[1] ?? 0) };
    };
    /** Waits until the writer has applied everything (bench/ingest-drain.ts); returns when it last applied a message. */
    const drain = (): Promise<number> => drainWriter(writerState);

    interface Load {
      itemsPerSecond: number; sustainedPerSecond: number; drainSeconds: number; p50: number; p99: number; non2xx: number; refused429: number;
      visibilityP50: number | null; visibilityP99: number | null; maxLagSeconds: number | null;
      cpuMsPer1000: Record<keyof Cpu | 'product', number>; writerMsPer1000: Record<string, number>; load: string;
    }
    /**
     * One load phase; CPU per 1000 items counts the writer's work too (measured until it has
     * drained). `rate`: requests per second over all connections (a paced run), else as fast as answered.
     */
    const load = async (path: string, body: () => string, rate?: number): Promise<Load> => {
      const before = cpuSeconds(stack.pid as number, stack.info.dataDir);
      const metricsBefore = await metricsText(stack.info.httpUrl);
      const phasesBefore = writerPhases(metricsBefore);
      let maxLag: number | null = null;
      const sampler = setInterval(() => {
        metricsText(stack.info.httpUrl).then((m) => {
          const lag = /^ingest_lag_seconds (\S+)/m.exec(m)?.[1];
          if (lag !== undefined) maxLag = Math.max(maxLag ?? 0, Number(lag));
        }).catch(() => undefined);
      }, 250);
      const started = performance.now();
      const result = await autocannon({
        url: `${base}/${path}`, connections: CONNECTIONS, duration: SECONDS, ...(rate === undefined ? {} : { overallRate: rate }),
        requests: [{ method: 'POST', headers, setupRequest: (req) => ({ ...req, body: body() }) }],
      });
      const drainedAt = await drain();
      clearInterval(sampler);
      const after = cpuSeconds(stack.pid as number, stack.info.dataDir);
      const metricsAfter = await metricsText(stack.info.httpUrl);
      const phasesAfter = writerPhases(metricsAfter);
      const items = result['2xx'] * BATCH;
      const per1000 = (seconds: number): number => Number(((seconds * 1e6) / items).toFixed(1));
      const cpu = Object.fromEntries((Object.keys(before) as Array<keyof Cpu>).map((k) => [k, per1000(after[k] - before[k])])) as Record<keyof Cpu, number>;
      const visBefore = histogramBuckets(metricsBefore, 'ingest_visibility_seconds');
      const visAfter = histogramBuckets(metricsAfter, 'ingest_visibility_seconds');
      const statuses = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
      return {
        itemsPerSecond: Math.round(items / SECONDS), sustainedPerSecond: Math.round(items / ((drainedAt - started) / 1000)), drainSeconds: Number(((drainedAt - started) / 1000 - SECONDS).toFixed(1)),
        p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors, refused429: statuses['429']?.count ?? 0,
        visibilityP50: histogramQuantile(visAfter, 0.5, visBefore), visibilityP99: histogramQuantile(visAfter, 0.99, visBefore), maxLagSeconds: maxLag,
        cpuMsPer1000: { ...cpu, product: Number((cpu.productJs + cpu.productChdbAndLibuv + cpu.productV8Helpers).toFixed(1)) },
        writerMsPer1000: Object.fromEntries(Object.entries(phasesAfter).map(([phase, s]) => [phase, per1000(s - (phasesBefore[phase] ?? 0))])),
        load: loadAverage(),
      };
    };
    const describe = (what: string, l: Load): string => `${what}: ${l.itemsPerSecond} accepted/s, sustained ${l.sustainedPerSecond}/s (drained ${l.drainSeconds} s after the load), 429 ${l.refused429}, other non-2xx ${l.non2xx - l.refused429}; `
      + `request p50 ${l.p50} ms, p99 ${l.p99} ms; visibility p50 ≤ ${l.visibilityP50} s, p99 ≤ ${l.visibilityP99} s, max lag ${l.maxLagSeconds ?? 'n/a'} s; `
      + `CPU ms per 1000 ${JSON.stringify(l.cpuMsPer1000)}; writer wall ms per 1000 by phase ${JSON.stringify(l.writerMsPer1000)}; load ${l.load}`;
    // Enough contacts first that every event has one (else events are skipped, spec 2 §3).
    log(`creating ${USERS} contacts for the events`);
    for (let i = 0; i < USERS / BATCH; i += 1) {
      const res = await fetch(`${base}/contacts`, { method: 'POST', headers, body: contactBody() });
      if (res.status !== 202) throw new Error(`seeding contacts: ${res.status}`);
    }
    await drain();

    const contactsRuns: Load[] = [];
    const eventsRuns: Load[] = [];
    for (let r = 0; r < RUNS; r += 1) {
      // `--only events` skips the contacts phase (for profiling one path).
      if (values.only !== 'events') {
        const c = await load('contacts', contactBody);
        log(describe(`contacts run ${r + 1}/${RUNS}`, c));
        contactsRuns.push(c);
      }
      // `--only contacts` skips the events (and below, the paced and ceiling phases).
      if (values.only === 'contacts') continue;
      const e = await load('events', eventBody);
      log(describe(`events run ${r + 1}/${RUNS}`, e));
      eventsRuns.push(e);
    }
    // Below saturation: the same events paced at a share of the sustained rate.
    const pacedRate = (PACED_SHARE * median(eventsRuns.map((r) => r.sustainedPerSecond))) / BATCH;
    const paced = values.only === 'contacts' ? undefined : await load('events', eventBody, Math.max(1, Math.round(pacedRate)));
    if (paced) log(describe(`events paced at ${PACED_SHARE} of sustained (${Math.round(pacedRate * BATCH)} offered/s)`, paced));
    const metrics = await metricsText(stack.info.httpUrl);
    const usage = (await (await fetch(base, { headers })).json()) as { usage: { lastDay: { events: { accepted: number; duplicates: number; skipped: number } } } };
    const ceiling = values.only === 'contacts' ? 0 : (log('measuring the raw chdb insert ceiling'), await chdbCeiling());

    const summary = (runs: Load[]) => ({
      acceptedPerSecond: median(runs.map((r) => r.itemsPerSecond)), sustainedPerSecond: median(runs.map((r) => r.sustainedPerSecond)),
      p50: median(runs.map((r) => r.p50)), p99: median(runs.map((r) => r.p99)), visibilityP99: median(runs.map((r) => r.visibilityP99 ?? 0)),
      productCpuMsPer1000: median(runs.map((r) => r.cpuMsPer1000.product)), runs,
    });
    const results = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
      conditions: `embedded stack (nats-server, chdb), product roles gateway-http + ingest-writer in one process; autocannon in the same machine, ${CONNECTIONS} connections, ${BATCH}-item batches; ${RUNS} runs of ${SECONDS} s each; medians`,
      at: new Date().toISOString(),
      contacts: summary(contactsRuns),
      events: summary(eventsRuns),
      paced: { share: PACED_SHARE, offeredPerSecond: Math.round(pacedRate * BATCH), ...paced },
      visibility: { p50Seconds: histogramQuantile(histogramBuckets(metrics, 'ingest_visibility_seconds'), 0.5), p99Seconds: histogramQuantile(histogramBuckets(metrics, 'ingest_visibility_seconds'), 0.99), note: 'whole run, per stream message, reception → rows inserted; at the upper bound of its histogram bucket' },
      stored: { eventsSent: eventSeq, eventsAccepted: usage.usage.lastDay.events.accepted, duplicates: usage.usage.lastDay.events.duplicates, skipped: usage.usage.lastDay.events.skipped },
      ceiling: { name: 'raw chdb JSONCompactEachRow insert of 100,000 event rows (events table with its event_keys view), in the bench process', rowsPerSecond: Math.round(ceiling) },
    };
    const out = writeResult(values.out, results);
    process.stdout.write([
      '',
      `Ingestion benchmark (${results.conditions})`,
      `contacts  ${results.contacts.acceptedPerSecond} accepted/s, sustained ${results.contacts.sustainedPerSecond} upserts/s; request p50 ${results.contacts.p50} ms, p99 ${results.contacts.p99} ms; product CPU ${results.contacts.productCpuMsPer1000} ms per 1000`,
      `events    ${results.events.acceptedPerSecond} accepted/s, sustained ${results.events.sustainedPerSecond} events/s; request p50 ${results.events.p50} ms, p99 ${results.events.p99} ms; visibility p99 ≤ ${results.events.visibilityP99} s; product CPU ${results.events.productCpuMsPer1000} ms per 1000`,
      `paced     ${results.paced.offeredPerSecond} offered/s (${PACED_SHARE} of sustained): ${paced?.itemsPerSecond} accepted/s, visibility p50 ≤ ${paced?.visibilityP50} s, p99 ≤ ${paced?.visibilityP99} s`,
      `stored: ${results.stored.eventsAccepted} of ${results.stored.eventsSent} events sent (duplicates ${results.stored.duplicates}, skipped ${results.stored.skipped})`,
      `raw chdb insert ceiling ${results.ceiling.rowsPerSecond} rows/s (same event rows)`,
      `load average at the end ${loadAverage()}`,
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
