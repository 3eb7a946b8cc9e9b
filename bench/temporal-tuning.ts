// Measures what each setting of the embedded Temporal dev server buys (DESIGN §3a, the message
// lifecycle). For each variant a fresh dev server (its own SQLite file) runs the ceiling load
// (bench/support/ceiling.ts) against a worker in this process; variants are interleaved round by
// round and the median of the rounds is reported, beside the untuned server in the same run.
// Usage: npm run bench:temporal-tuning [-- --workflows 1000 --rounds 3 --signals 1 --variants untuned,tuned]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { createLogger } from '../infra/logger';
import { Supervisor } from '../infra/supervisor';
import { DEV_SERVER_TUNING, type DevServerTuning } from '../infra/temporal';
import { freePort, temporalDevSpec } from '../infra/local-engines';
import { bundleCeilingWorkflow, measureCeiling, type CeilingResult } from './support/ceiling';
import { writeResult } from './support/results';

const UNTUNED: DevServerTuning = { pragmas: [], dynamicConfig: [], env: {} };
const on = (extra: Partial<DevServerTuning>): DevServerTuning => ({
  pragmas: [...UNTUNED.pragmas, ...(extra.pragmas ?? [])],
  dynamicConfig: [...UNTUNED.dynamicConfig, ...(extra.dynamicConfig ?? [])],
  env: { ...UNTUNED.env, ...extra.env },
});

/** Each setting alone on the untuned server, then the product's tuning as shipped. */
const VARIANTS: Record<string, DevServerTuning> = {
  untuned: UNTUNED,
  'journal_mode=wal': on({ pragmas: ['journal_mode=wal'] }),
  'synchronous=NORMAL': on({ pragmas: ['synchronous=NORMAL'] }),
  'wal+NORMAL': on({ pragmas: ['journal_mode=wal', 'synchronous=NORMAL'] }),
  'shardIOConcurrency=8': on({ dynamicConfig: ['history.shardIOConcurrency=8'] }),
  'rate limits lifted': on({ dynamicConfig: ['frontend.namespaceRPS=100000', 'frontend.namespaceCount=100000', 'history.rps=100000', 'matching.rps=100000'] }),
  'activity eager execution': on({ dynamicConfig: ['system.enableActivityEagerExecution=true'] }),
  'one task queue partition': on({ dynamicConfig: ['matching.numTaskqueueReadPartitions=1', 'matching.numTaskqueueWritePartitions=1'] }),
  'GOGC=400': on({ env: { GOGC: '400' } }),
  tuned: DEV_SERVER_TUNING,
};

const { values } = benchArgs({ options: { workflows: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '3' }, signals: { type: 'string', default: '1' }, variants: { type: 'string' } } });
const WORKFLOWS = Number(values.workflows);
const ROUNDS = Number(values.rounds);
const SIGNALS = Number(values.signals);
const chosen = values.variants ? values.variants.split(',') : Object.keys(VARIANTS);
for (const name of chosen) if (!VARIANTS[name]) throw new Error(`unknown variant "${name}"; known: ${Object.keys(VARIANTS).join(', ')}`);
const say = (line: string): void => { process.stderr.write(`[bench:temporal-tuning ${new Date().toISOString().slice(11, 19)}] ${line}\n`); };
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] ?? 0; };

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Measured extends CeilingResult {
  /** CPU per workflow: the dev server, and this process (the SDK worker and client). */
  readonly serverCpuMsPerWorkflow: number;
  readonly sdkCpuMsPerWorkflow: number;
}

async function measure(tuning: DevServerTuning, code: string): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'temporal-tuning-'));
  const engines = new Supervisor(dir, createLogger('warn', { component: 'temporal-tuning' }));
  const port = await freePort();
  try {
    await engines.start(temporalDevSpec({ dataDir: dir, port, uiPort: await freePort(), namespace: 'default', tuning }));
    const serverPid = engines.pid('temporal') ?? 0;
    const serverBefore = processCpuSeconds(serverPid);
    const sdkBefore = process.cpuUsage();
    const result = await measureCeiling(`127.0.0.1:${port}`, code, WORKFLOWS, SIGNALS, say);
    const sdk = process.cpuUsage(sdkBefore);
    return {
      ...result,
      serverCpuMsPerWorkflow: ((processCpuSeconds(serverPid) - serverBefore) * 1000) / WORKFLOWS,
      sdkCpuMsPerWorkflow: (sdk.user + sdk.system) / 1000 / WORKFLOWS,
    };
  } finally {
    await engines.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  say(`bundling the workflow code; ${chosen.length} variants × ${ROUNDS} rounds × ${WORKFLOWS} workflows`);
  const code = await bundleCeilingWorkflow();
  const runs = new Map<string, Measured[]>(chosen.map((name) => [name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of chosen) {
      const result = await measure(VARIANTS[name] as DevServerTuning, code);
      runs.get(name)?.push(result);
      say(`round ${round}/${ROUNDS} ${name}: ${result.workflowsPerSecond.toFixed(1)} workflows/s (${result.historyEvents} events); CPU per workflow: server ${result.serverCpuMsPerWorkflow.toFixed(1)} ms, SDK ${result.sdkCpuMsPerWorkflow.toFixed(1)} ms`);
    }
  }
  const baseline = median((runs.get('untuned') ?? []).map((r) => r.workflowsPerSecond));
  const table = chosen.map((name) => {
    const rates = (runs.get(name) ?? []).map((r) => r.workflowsPerSecond);
    const m = median(rates);
    const cpu = (pick: (r: Measured) => number): number => Number(median((runs.get(name) ?? []).map(pick)).toFixed(1));
    return {
      variant: name, medianWorkflowsPerSecond: Number(m.toFixed(1)), vsUntuned: baseline ? Number((m / baseline).toFixed(2)) : null, runs: rates.map((r) => Number(r.toFixed(1))),
      serverCpuMsPerWorkflow: cpu((r) => r.serverCpuMsPerWorkflow), sdkCpuMsPerWorkflow: cpu((r) => r.sdkCpuMsPerWorkflow),
    };
  });
  const results = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverage: loadavg().map((l) => Number(l.toFixed(2))) },
    conditions: `temporal CLI dev server (one history shard, SQLite file), a worker in the bench process, ${WORKFLOWS} benchCeiling workflows per run (eager start, local activity, timer, ${SIGNALS} signal(s) each answered by a local activity), 32 concurrent clients; median of ${ROUNDS} interleaved rounds`,
    at: new Date().toISOString(),
    variants: Object.fromEntries(chosen.map((name) => [name, VARIANTS[name]])),
    table,
  };
  const file = values.variants ? `temporal-tuning-${chosen.join('+').replace(/[^A-Za-z0-9+=.-]+/g, '_')}.json` : 'temporal-tuning.json';
  const written = writeResult(file, results);
  for (const row of table) process.stdout.write(`${row.variant.padEnd(28)} ${String(row.medianWorkflowsPerSecond).padStart(7)} wf/s  ×${row.vsUntuned ?? '-'}  runs ${row.runs.join(', ')}  CPU/workflow: server ${row.serverCpuMsPerWorkflow} ms, SDK ${row.sdkCpuMsPerWorkflow} ms\n`);
  process.stdout.write(`written to ${written}\n`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
