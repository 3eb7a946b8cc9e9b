// End-to-end lifecycle benchmark (docs/lifecycle.md): N messages via POST /sms/bulk through the
// simulator (latency 0) to a webhook on loopback, for each lifecycle design side by side in one
// run — `batch` (one workflow per batch of accepted messages, LIFECYCLE_BATCH_MAX_MESSAGES) and
// `per-message` (one workflow per message, the former design) — each on a fresh stack. Reports
// messages/s and DLRs/s sustained, p50/p99 from the 201 to the `delivered` DLR, Temporal history
// events per message (every execution in the namespace), Temporal CPU per message: the dev
// server process, and the SDK threads of the product process (core + workflow threads), beside
// the product's whole CPU. Optionally the dev server's ceiling for a trivial per-message workflow.
// Usage: npm run bench:lifecycle [-- --messages 10000] [--per-message-messages 2000]
//        [--modes batch,per-message] [--rate 100] [--batch-max 500] [--ceiling] [--workers 2] [--out <file>]
// (--rate: offered messages/s, for latency below saturation; without it the whole batch is sent at once)
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { ENV_VARS } from '../config';
import { connectTemporal } from '../infra/temporal';
import { startStack, type RunningStack } from '../support/stack';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { bundleCeilingWorkflow, measureCeiling, type CeilingResult } from './support/ceiling';
import { natsServerPid } from './support/nats-cost';
import { historyEvents, isTemporalSdkThread, longestHistory, processCpuSeconds, temporalServerPid, threadCpuSeconds } from './support/temporal-cost';
import { createTenantAt } from './support/tenant';
import { writeResult } from './support/results';
import { ensureBuilt } from '../infra/paths';

const { values } = benchArgs({
  options: {
    messages: { type: 'string', default: '10000' }, 'per-message-messages': { type: 'string' }, timeout: { type: 'string', default: '1200' },
    modes: { type: 'string', default: 'batch,per-message' }, rate: { type: 'string' }, 'batch-max': { type: 'string', default: '500' }, ceiling: { type: 'boolean', default: false },
    // Worker processes in all: the stack's own, plus `--role=worker` processes beside it (docs/lifecycle.md, "Two worker processes").
    workers: { type: 'string', default: '1' },
    // The result file under bench/results/ (default: lifecycle[-<mode>][-rate<n>].json).
    out: { type: 'string' },
  },
});
const MODES = String(values.modes).split(',').map((m) => m.trim()).filter((m): m is Mode => m === 'batch' || m === 'per-message');
type Mode = 'batch' | 'per-message';
/** Offered load in messages/s (bulks of up to 100 sent on a schedule); unset: as fast as accepted. */
const RATE = values.rate ? Number(values.rate) : null;
const BULK = RATE ? Math.max(1, Math.min(100, Math.round(RATE))) : 100;
const say = (line: string): void => { process.stderr.write(`[bench:lifecycle] ${line}\n`); };
const pct = (xs: number[], p: number): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0; };
const round = (x: number, digits = 1): number => Number(x.toFixed(digits));

const WEBHOOK_TIMEOUT_MS = Number(ENV_VARS.find((v) => v.name === 'WEBHOOK_TIMEOUT_MS')?.default ?? 5000);

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

interface CpuMark { readonly server: number; readonly product: number; readonly nats: number; readonly bench: number; readonly threads: Map<string, number> }

function cpuMark(serverPid: number | undefined, productPid: number | undefined, natsPid: number | undefined, extraPids: readonly number[] = []): CpuMark {
  const own = process.cpuUsage();
  const extra = extraPids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  return {
    server: serverPid ? processCpuSeconds(serverPid) : 0, product: (productPid ? processCpuSeconds(productPid) : 0) + extra, nats: natsPid ? processCpuSeconds(natsPid) : 0,
    bench: (own.user + own.system) / 1e6, threads: productPid ? threadCpuSeconds(productPid) : new Map(),
  };
}

async function sendAndWait(stack: RunningStack, receiver: Receiver, n: number): Promise<{ acceptedAt: Map<string, number>; done: Map<string, number>; started: number; acceptSeconds: number }> {
  const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl, receiver.url);
  const acceptedAt = new Map<string, number>();
  const started = Date.now();
  say(`sending ${n} messages in bulks of ${BULK}${RATE ? ` at ${RATE} messages/s` : ''}`);
  let next = 0;
  const bulks = Math.ceil(n / BULK);
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (;;) {
      const b = next++;
      if (b >= bulks) return;
      if (RATE) {
        const due = started + ((b * BULK) / RATE) * 1000;
        if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      }
      const items = Array.from({ length: Math.min(BULK, n - b * BULK) }, (_, i) => ({ from: 'Bench', to: `+4915113${String(b).padStart(4, '0')}${String(i % 80).padStart(2, '0')}`, text: `lifecycle bench ${b}/${i}` }));
      const res = await fetch(`${stack.info.httpUrl}/transactional/v1/sms/bulk`, { method: 'POST', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, body: JSON.stringify(items) });
      const at = Date.now();
      const body = (await res.json()) as { entities: Array<{ id: string }> };
      for (const e of body.entities) acceptedAt.set(e.id, at);
    }
  }));
  const acceptSeconds = (Date.now() - started) / 1000;
  say(`${acceptedAt.size} accepted in ${acceptSeconds.toFixed(1)} s; waiting for the delivered DLRs`);
  const deadline = Date.now() + Number(values.timeout) * 1000;
  const delivered = (): Map<string, number> => new Map(receiver.received.filter((r) => r.body['status'] === 'delivered' && r.answered === 200).map((r) => [String(r.body['id']), r.at]));
  let done = delivered();
  while (done.size < acceptedAt.size && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    done = delivered();
    say(`${done.size}/${acceptedAt.size} delivered DLRs`);
  }
  return { acceptedAt, done, started, acceptSeconds };
}

async function runMode(mode: Mode, n: number): Promise<Record<string, unknown>> {
  const receiver = await startWebhookReceiver();
  const stack = await startStack({
    LOG_LEVEL: 'error', SIMULATOR_LATENCY_MS: '0', MESSAGE_VALIDITY_SECONDS: '172800', RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_BULK_PER_MINUTE: '100000000',
    LIFECYCLE_BATCH_MAX_MESSAGES: mode === 'batch' ? String(values['batch-max']) : '1',
    // The product's default (the test stack's 2 s is for observing retries quickly): on a saturated
    // machine a 2 s timeout of the loopback receiver sends whole settles to the retry schedule.
    WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
  });
  const temporal = await connectTemporal({ address: stack.info.temporalAddress, namespace: 'default' });
  const serverPid = temporalServerPid(stack.info.temporalAddress.split(':').at(-1) ?? '');
  const natsPid = natsServerPid(stack.info.natsUrl.split(':').at(-1) ?? '');
  const extraWorkers = await Promise.all(Array.from({ length: Math.max(0, Number(values.workers) - 1) }, (_, i) => startExtraWorker(stack, i + 1)));
  const extraPids = extraWorkers.map((w) => w.pid).filter((pid): pid is number => pid !== undefined);
  try {
    say(`${mode}: stack up (Temporal dev server pid ${serverPid ?? '?'}, product pid ${stack.pid ?? '?'}${extraPids.length > 0 ? `, extra worker pids ${extraPids.join(', ')}` : ''}); load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const before = cpuMark(serverPid, stack.pid, natsPid, extraPids);
    const { acceptedAt, done, started, acceptSeconds } = await sendAndWait(stack, receiver, n);
    const after = cpuMark(serverPid, stack.pid, natsPid, extraPids);
    const last = Math.max(...done.values());
    const seconds = (last - started) / 1000;
    const latencies = [...done.entries()].map(([id, at]) => at - (acceptedAt.get(id) ?? at));
    const dlrs = receiver.received.filter((r) => r.answered === 200).length;
    await new Promise((resolve) => setTimeout(resolve, 2000)); // visibility catches up
    const histories = await historyEvents(temporal.client);
    const longest = await longestHistory(temporal.client);
    const events = Object.values(histories).reduce((sum, h) => sum + h.events, 0);
    const threads = [...after.threads.entries()].map(([name, cpu]) => [name, cpu - (before.threads.get(name) ?? 0)] as const).filter(([, cpu]) => cpu > 0.05).sort((a, b) => b[1] - a[1]);
    const withRoleProcesses = threads.some(([name]) => name.includes('/'));
    const sdkSeconds = threads.filter(([name]) => isTemporalSdkThread(name, withRoleProcesses)).reduce((sum, [, cpu]) => sum + cpu, 0);
    const perMessageMs = (cpuSeconds: number): number => round((cpuSeconds * 1000) / Math.max(1, done.size), 2);
    const result = {
      mode, workers: 1 + extraPids.length, offeredRate: RATE ?? 0, messages: done.size, accepted: acceptedAt.size, seconds: round(seconds), messagesPerSecond: round(done.size / seconds), acceptedPerSecond: round(acceptedAt.size / acceptSeconds), dlrsPerSecond: round(dlrs / seconds),
      p50Ms: pct(latencies, 50), p99Ms: pct(latencies, 99),
      historyEventsPerMessage: round(events / Math.max(1, done.size), 2), executions: histories, longestHistory: longest,
      temporalServerCpuMsPerMessage: perMessageMs(after.server - before.server), temporalSdkCpuMsPerMessage: perMessageMs(sdkSeconds),
      temporalCpuMsPerMessage: perMessageMs(after.server - before.server + sdkSeconds), productCpuMsPerMessage: perMessageMs(after.product - before.product),
      natsServerCpuMsPerMessage: perMessageMs(after.nats - before.nats), benchCpuMsPerMessage: perMessageMs(after.bench - before.bench),
      allCpuMsPerMessage: perMessageMs(after.product - before.product + after.server - before.server + after.nats - before.nats + after.bench - before.bench),
      productThreadsCpuSeconds: Object.fromEntries(threads.slice(0, 12).map(([name, cpu]) => [name, round(cpu, 2)])),
      loadAverageAfter: loadavg().map((l) => round(l, 2)),
    };
    say(`${mode}: ${result.messagesPerSecond} messages/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.historyEventsPerMessage} history events/message, Temporal CPU ${result.temporalCpuMsPerMessage} ms/message (server ${result.temporalServerCpuMsPerMessage}, SDK ${result.temporalSdkCpuMsPerMessage}); product ${result.productCpuMsPerMessage} ms/message; nats-server ${result.natsServerCpuMsPerMessage}, bench ${result.benchCpuMsPerMessage}, all ${result.allCpuMsPerMessage} ms/message`);
    return result;
  } finally {
    for (const worker of extraWorkers) worker.kill('SIGTERM');
    await Promise.all(extraWorkers.map((w) => (w.exitCode !== null ? undefined : new Promise((resolve) => w.once('exit', resolve)))));
    await temporal.close();
    await stack.stop();
    await receiver.close();
  }
}

/** One more `--role=worker` process on the stack's engines; resolves once it logs that it is ready. */
function startExtraWorker(stack: RunningStack, n: number): Promise<ChildProcess> {
  const env = { ...stack.info.productEnv, DATA_DIR: join(stack.info.dataDir, `extra-worker-${n}`), LOG_LEVEL: 'info' };
  const worker = spawn(process.execPath, [ensureBuilt(), '--role=worker'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen = (seen + chunk.toString('utf8')).slice(-4096);
      if (seen.includes('"msg":"ready"')) {
        worker.stdout.off('data', onData);
        worker.stdout.resume();
        resolve(worker);
      }
    };
    worker.stdout.on('data', onData);
    worker.once('exit', (code) => reject(new Error(`extra worker ${n} exited with ${code} before it was ready`)));
  });
}

async function runCeiling(signals: number, n: number): Promise<CeilingResult> {
  const stack = await startStack({ LOG_LEVEL: 'error' });
  try {
    say(`ceiling: ${n} benchCeiling workflows with ${signals} signal(s) each, worker in this process`);
    const ceiling = await measureCeiling(stack.info.temporalAddress, await bundleCeilingWorkflow(), n, signals, say);
    say(`ceiling: ${ceiling.workflowsPerSecond.toFixed(0)} workflows/s (${ceiling.historyEvents} history events each)`);
    return ceiling;
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const n = Number(values.messages);
  const loadBefore = loadavg().map((l) => round(l, 2));
  const runs: Array<Record<string, unknown>> = [];
  for (const mode of MODES) runs.push(await runMode(mode, mode === 'per-message' ? Number(values['per-message-messages'] ?? Math.min(n, 2000)) : n));
  const ceiling = values.ceiling ? await runCeiling(1, Math.min(n, 2000)) : null;
  const byMode = Object.fromEntries(runs.map((r) => [String(r['mode']), r]));
  const speedup = byMode['batch'] && byMode['per-message'] ? round(Number(byMode['batch']['messagesPerSecond']) / Number(byMode['per-message']['messagesPerSecond']), 2) : null;
  const results = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverageBefore: loadBefore },
    conditions: `embedded stack (every role in one process), a fresh stack per mode, simulator latency 0, webhook receiver on loopback in the bench process, bulks of ${BULK}${RATE ? ` at ${RATE} messages/s` : ' sent as fast as accepted'}, LIFECYCLE_BATCH_MAX_MESSAGES ${String(values['batch-max'])}; one run`,
    at: new Date().toISOString(),
    runs,
    batchVsPerMessage: speedup,
    ceiling,
  };
  const file = values.out ?? `lifecycle${MODES.length === 1 ? `-${MODES[0]}` : ''}${RATE ? `-rate${RATE}` : ''}.json`;
  const written = writeResult(file, results);
  for (const r of runs) process.stdout.write(`${String(r['mode']).padEnd(12)} ${String(r['messagesPerSecond']).padStart(7)} msg/s  p50 ${String(r['p50Ms']).padStart(6)} ms  p99 ${String(r['p99Ms']).padStart(6)} ms  ${String(r['historyEventsPerMessage']).padStart(6)} events/msg  Temporal CPU ${String(r['temporalCpuMsPerMessage']).padStart(6)} ms/msg (server ${String(r['temporalServerCpuMsPerMessage'])}, SDK ${String(r['temporalSdkCpuMsPerMessage'])})  product ${String(r['productCpuMsPerMessage'])} ms/msg  nats ${String(r['natsServerCpuMsPerMessage'])}  all ${String(r['allCpuMsPerMessage'])} ms/msg\n`);
  process.stdout.write(`${speedup ? `batch / per-message: ×${speedup}\n` : ''}written to ${written}\n`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
