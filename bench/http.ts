// HTTP acceptance benchmark (SMS API v1, spec 1): POST /sms, POST /sms/bulk (100 GSM-7 items),
// GET /sms/{id}, against the embedded stack on this machine, with a bare Express JSON
// endpoint measured in the same run as the ceiling (served from this process, beside the load
// generator: the ceiling the acceptance targets are ratios of; and again from a process of its own, as the product is
// served, so the ratio can be read against both). Medians of RUNS runs; figures printed and
// written to bench/results/http.json, with the product process's CPU per request and per
// accepted message (from /proc). Usage: npm run bench:http [-- --runs 3 --seconds 10]
// [--roles all] [--only ceiling,ceiling-process,ceiling-classes,send,bulk,read] [--out http-all.json]
import autocannon from 'autocannon';
import { cpus, loadavg, totalmem } from 'node:os';
import { benchArgs } from './cli-args';
import { startStack } from '../support/stack';
import { processCpuMs } from './support/cpu';
import { createTenantAt } from './support/tenant';
import { writeResult } from './support/results';
import { echoApp, startExpressServer } from './support/express-server';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    roles: { type: 'string', default: 'gateway-http' },
    only: { type: 'string', default: 'ceiling,ceiling-process,ceiling-classes,send,bulk,read' },
    out: { type: 'string', default: 'http.json' },
  },
});
const RUNS = Number(values.runs);
const SECONDS = Number(values.seconds);
const PHASES = new Set(values.only.split(','));

interface Figure { rps: number; p50: number; p99: number; non2xx: number; cpuUsPerRequest?: number }

/** The process whose CPU is counted (the product; the bare Express ceiling runs in this one). */
let measuredPid: number | undefined;

async function run(opts: autocannon.Options): Promise<Figure> {
  const before = measuredPid === undefined ? process.cpuUsage() : undefined;
  const cpu0 = measuredPid === undefined ? undefined : processCpuMs(measuredPid);
  const result = await autocannon({ duration: SECONDS, ...opts });
  const cpu1 = measuredPid === undefined ? undefined : processCpuMs(measuredPid);
  const cpuMs = before ? undefined : cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
  const requests = result.requests.total;
  return {
    rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors,
    ...(cpuMs !== undefined && requests > 0 ? { cpuUsPerRequest: (cpuMs * 1000) / requests } : {}),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function measure(name: string, opts: autocannon.Options): Promise<Figure & { runs: Figure[] }> {
  const runs: Figure[] = [];
  for (let i = 0; i < RUNS; i++) {
    const f = await run(opts);
    runs.push(f);
    process.stderr.write(`  ${name} run ${i + 1}/${RUNS}: ${f.rps.toFixed(0)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, non-2xx ${f.non2xx}\n`);
  }
  const cpu = runs.flatMap((r) => (r.cpuUsPerRequest === undefined ? [] : [r.cpuUsPerRequest]));
  return {
    rps: median(runs.map((r) => r.rps)), p50: median(runs.map((r) => r.p50)), p99: median(runs.map((r) => r.p99)), non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    ...(cpu.length > 0 ? { cpuUsPerRequest: median(cpu) } : {}), runs,
  };
}

/** A ratio as a percentage; a dash when its ceiling was not measured (--only without it). */
const percent = (ratio: number): string => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(0)}%` : '–');

const SKIPPED: Figure & { runs: Figure[] } = { rps: 0, p50: 0, p99: 0, non2xx: 0, runs: [] };

async function main(): Promise<void> {
  process.stderr.write(`[bench:http] starting the embedded stack (roles: ${values.roles})\n`);
  const stack = await startStack({ LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BULK_PER_MINUTE: '1000000000', SIMULATOR_LATENCY_MS: '0', MESSAGE_VALIDITY_SECONDS: '172800' }, (l) => process.stderr.write(l), values.roles === 'all' ? [] : values.roles.split(','));
  const bareServer = echoApp().listen(0, '127.0.0.1');
  await new Promise((resolve) => bareServer.once('listening', resolve));
  const barePort = (bareServer.address() as { port: number }).port;
  // The same endpoint in a process of its own (the product's conditions: its own event loop),
  // and again with its requests made as the product's server makes them.
  const bareProcess = await startExpressServer('echo');
  const bareClassesProcess = await startExpressServer('echo-classes');
  try {
    const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl);
    const headers = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
    const one = JSON.stringify({ from: 'Bench', to: '+4915112345678', text: 'Benchmark message, GSM-7 only, one segment.' });
    const bulk = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ from: 'Bench', to: `+49151123456${String(i).padStart(2, '0')}`, text: `Bulk benchmark item ${i}` })));
    const created = await fetch(`${stack.info.httpUrl}/transactional/v1/sms`, { method: 'POST', headers, body: one });
    const id = ((await created.json()) as { entity: { id: string } }).entity.id;

    process.stderr.write(`[bench:http] measuring (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})\n`);
    const phase = (name: string, work: () => Promise<Figure & { runs: Figure[] }>): Promise<Figure & { runs: Figure[] }> => (PHASES.has(name) ? work() : Promise.resolve(SKIPPED));
    measuredPid = undefined;
    const ceiling = await phase('ceiling', () => measure('bare express POST', { url: `http://127.0.0.1:${barePort}/echo`, method: 'POST', headers: { 'content-type': 'application/json' }, body: one, connections: 64 }));
    measuredPid = bareProcess.process.pid;
    const ceilingProcess = await phase('ceiling-process', () => measure('bare express POST, own process', { url: `http://127.0.0.1:${bareProcess.port}/echo`, method: 'POST', headers: { 'content-type': 'application/json' }, body: one, connections: 64 }));
    measuredPid = bareClassesProcess.process.pid;
    const ceilingClasses = await phase('ceiling-classes', () => measure('bare express POST, own process, app classes', { url: `http://127.0.0.1:${bareClassesProcess.port}/echo`, method: 'POST', headers: { 'content-type': 'application/json' }, body: one, connections: 64 }));
    measuredPid = stack.pid;
    const send = await phase('send', () => measure('POST /sms', { url: `${stack.info.httpUrl}/transactional/v1/sms`, method: 'POST', headers, body: one, connections: 64 }));
    const bulkFig = await phase('bulk', () => measure('POST /sms/bulk x100', { url: `${stack.info.httpUrl}/transactional/v1/sms/bulk`, method: 'POST', headers, body: bulk, connections: 16 }));
    const read = await phase('read', () => measure('GET /sms/{id}', { url: `${stack.info.httpUrl}/transactional/v1/sms/${id}`, headers, connections: 64 }));
    const load = loadavg().map((l) => Number(l.toFixed(2)));

    const results = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
      conditions: `embedded stack (nats-server, Temporal dev server, chdb), product roles: ${values.roles}; load generator (autocannon) in the same machine; ${RUNS} runs of ${SECONDS} s; medians`,
      at: new Date().toISOString(),
      loadAverageAfter: load,
      cpuNote: 'cpuUsPerRequest: CPU of the product process (user + system, /proc) per request of the phase; per accepted message for bulk divide by 100',
      ceiling: { name: 'bare Express JSON POST, 64 connections', ...ceiling },
      ceilingOwnProcess: { name: 'bare Express JSON POST, 64 connections, served from a process of its own', ...ceilingProcess },
      ceilingAppClasses: { name: 'bare Express JSON POST, 64 connections, own process, requests and responses made with the app prototypes (as the product serves)', ...ceilingClasses },
      postSms: { name: 'POST /sms, 64 connections', ...send, ratioToCeiling: send.rps / ceiling.rps, ratioToCeilingOwnProcess: send.rps / ceilingProcess.rps, ratioToCeilingAppClasses: send.rps / ceilingClasses.rps },
      bulk: { name: 'POST /sms/bulk with 100 GSM-7 items, 16 connections', ...bulkFig, messagesPerSecond: bulkFig.rps * 100, ...(bulkFig.cpuUsPerRequest === undefined ? {} : { cpuUsPerMessage: bulkFig.cpuUsPerRequest / 100 }), ratioToCeiling: bulkFig.rps / ceiling.rps },
      getById: { name: 'GET /sms/{id}, 64 connections', ...read, ratioToCeiling: read.rps / ceiling.rps, ratioToCeilingOwnProcess: read.rps / ceilingProcess.rps, ratioToCeilingAppClasses: read.rps / ceilingClasses.rps },
    };
    const written = writeResult(values.out, results);
    const cpuText = (f: Figure, per = 1): string => (f.cpuUsPerRequest === undefined ? '' : `  CPU ${(f.cpuUsPerRequest / per).toFixed(0)} µs/msg`);
    const row = (label: string, f: Figure, extra = '', per = 1): string => `${label.padEnd(38)} ${f.rps.toFixed(0).padStart(7)} req/s  p50 ${String(f.p50).padStart(4)} ms  p99 ${String(f.p99).padStart(4)} ms  ${extra}${cpuText(f, per)}`;
    process.stdout.write([
      '',
      `HTTP benchmark (${results.conditions})`,
      row('bare Express (ceiling)', ceiling, '(served beside the load generator)'),
      row('bare Express, own process', ceilingProcess, '(a process of its own, as the product is)'),
      row('bare Express, own process, app classes', ceilingClasses, '(also made as the product makes requests)'),
      row('POST /sms', send, `(${percent(results.postSms.ratioToCeiling)} of ceiling, ${percent(results.postSms.ratioToCeilingOwnProcess)} of own-process, ${percent(results.postSms.ratioToCeilingAppClasses)} of app-classes)`),
      row('POST /sms/bulk (100 items)', bulkFig, `= ${results.bulk.messagesPerSecond.toFixed(0)} messages/s`, 100),
      row('GET /sms/{id}', read, `(${percent(results.getById.ratioToCeiling)} of ceiling, ${percent(results.getById.ratioToCeilingOwnProcess)} of own-process, ${percent(results.getById.ratioToCeilingAppClasses)} of app-classes)`),
      `load average after: ${load.join(' ')}`,
      `written to ${written}`,
      '',
    ].join('\n'));
  } finally {
    bareServer.close();
    bareProcess.process.kill('SIGTERM');
    bareClassesProcess.process.kill('SIGTERM');
    await stack.stop();
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
