// SMPP gateway benchmark (SMPP transport, spec 1 §4): against the embedded stack on this
// machine, with the gateway in its own process (this file run with --gateway) and the clients
// in this one, as a customer's ESME would be:
//   1. one transceiver with a window of 100 submitting for a fixed time → submit_sm_resp/s;
//   2. 10 binds in parallel (time until all are bound), then 10 transceivers submitting at
//      once, first with window 10 each (as many in flight as the one transceiver), then with
//      window 100 each (each configured as the one transceiver) → aggregate submit_sm_resp/s;
//   3. receipts: N messages accepted with registered_delivery 1, one status transition each
//      published on sms.status.<token> while no receiver is bound (as the lifecycle does), then
//      one receiver binds → deliver_sm/s until all N are in (acked after each deliver_sm_resp).
// Medians of RUNS runs; printed and written to bench/results/smpp.json (or --out <file>).
// Usage: node --import tsx bench/smpp.ts [--runs 3 --seconds 10 --receipts 20000] [--out smpp-x.json]
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { benchArgs } from './cli-args';
import { connect, PDU, type PduOptions, type Session } from 'smpp';
import { toGsm7Bytes } from '../core/sms';
import { createLogger } from '../infra/logger';
import { SUBJECTS } from '../core/bus/names';
import { KvLifecycleStates } from '../stores/lifecycle-records';
import { connectNats } from '../infra/nats';
import { AccountDirectory } from '../stores/account-directory';
import { startStack } from '../support/stack';
import { issueSmpp, startGatewayHarness } from '../support/smpp-client';
import { processCpuMs } from './support/cpu';
import { createTenantAt } from './support/tenant';
import { writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    receipts: { type: 'string', default: '20000' },
    roles: { type: 'string', default: 'gateway-http' },
    gateway: { type: 'boolean', default: false },
    // Experiment: the gateway's NATS connection without async stack traces (nats.js creates an
    // Error per request otherwise); what infra/nats.ts would get from `noAsyncTraces: true`.
    'no-async-traces': { type: 'boolean', default: false },
    nats: { type: 'string' },
    out: { type: 'string' },
  },
});
const RUNS = Number(values.runs);
const SECONDS = Number(values.seconds);
const RECEIPTS = Number(values.receipts);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const log = (line: string): void => { process.stderr.write(`${line}\n`); };

// ---------------------------------------------------------------------------------------------
// The gateway process: the in-process harness over the stack's NATS; prints its port.

async function gatewayProcess(natsUrl: string): Promise<void> {
  if (values['no-async-traces']) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const transport = require('@nats-io/transport-node') as { connect: (o: object) => unknown };
    const original = transport.connect;
    Object.defineProperty(transport, 'connect', { value: (o: object) => original({ ...o, noAsyncTraces: true }) });
  }
  // The per-session throttle (SMPP_SUBMITS_PER_SECOND, default 10,000/s) above reach: this measures the gateway, not its setting.
  const harness = await startGatewayHarness(natsUrl, { maxSubmitsPerSecond: 1_000_000 }, 'error');
  process.stdout.write(`${JSON.stringify({ port: harness.port })}\n`);
  process.on('SIGTERM', () => void harness.stop().finally(() => process.exit(0)));
}

// ---------------------------------------------------------------------------------------------
// Lean clients (no per-PDU bookkeeping beyond counters).

function open(port: number): Promise<Session> {
  return new Promise((resolve, reject) => {
    const session = connect({ host: '127.0.0.1', port });
    session.once('error', reject);
    session.once('connect', () => resolve(session));
  });
}

async function bind(session: Session, mode: 'transceiver' | 'receiver' | 'transmitter', systemId: string, password: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    session.send(new PDU(`bind_${mode}`, { system_id: systemId, password, interface_version: 0x34 }), (resp) => {
      if (resp.command_status === 0) resolve();
      else reject(new Error(`bind refused: 0x${resp.command_status.toString(16)}`));
    });
  });
}

function unbind(session: Session): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { session.destroy(); resolve(); }, 3000);
    session.unbind({}, () => { clearTimeout(timer); session.close(); resolve(); });
  });
}

/** Keeps `window` submit_sm outstanding for `ms`; resolves with the OK/error counts (and the ids when asked). */
function pump(session: Session, window: number, ms: number, pdu: () => PduOptions, ids?: string[], limit = Infinity): Promise<{ ok: number; failed: number; elapsedMs: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    let outstanding = 0;
    let sent = 0;
    let ok = 0;
    let failed = 0;
    let done = false;
    const next = (): void => {
      while (!done && outstanding < window && sent < limit && performance.now() - started < ms) {
        outstanding++;
        sent++;
        session.submit_sm(pdu(), (resp) => {
          outstanding--;
          if (resp.command_status === 0) {
            ok++;
            ids?.push(resp.message_id ?? '');
          } else failed++;
          if (outstanding === 0 && (performance.now() - started >= ms || sent >= limit)) {
            done = true;
            resolve({ ok, failed, elapsedMs: performance.now() - started });
          } else next();
        });
      }
    };
    next();
  });
}

const submitPdu = (): PduOptions => ({
  source_addr_ton: 5, source_addr_npi: 0, source_addr: 'Bench',
  dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: `4915112345${String(Math.floor(Math.random() * 1000)).padStart(3, '0')}`,
  data_coding: 0, short_message: toGsm7Bytes('Benchmark message over SMPP, GSM-7, one segment.'),
});

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (values.gateway) return gatewayProcess(values.nats ?? '');
  log(`[bench:smpp] starting the embedded stack (product roles: ${values.roles}; the SMPP gateway runs in a process of its own)`);
  const stack = await startStack({ LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BULK_PER_MINUTE: '1000000000', SIMULATOR_LATENCY_MS: '0', MESSAGE_VALIDITY_SECONDS: '172800' }, (l) => process.stderr.write(l), values.roles === 'all' ? [] : values.roles.split(','));
  let gateway: ChildProcess | undefined;
  try {
    const gatewayArgs = ['--import', 'tsx', __filename, '--gateway', '--nats', stack.info.natsUrl, ...(values['no-async-traces'] ? ['--no-async-traces'] : [])];
    // Profiling the gateway: GATEWAY_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" (as PRODUCT_NODE_FLAGS for the product).
    const gatewayFlags = (process.env['GATEWAY_NODE_FLAGS'] ?? '').split(' ').filter(Boolean);
    gateway = spawn(process.execPath, [...gatewayFlags, ...gatewayArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve, reject) => {
      gateway?.stdout?.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString('utf8')) as { port: number }).port));
      gateway?.once('exit', (code) => reject(new Error(`the gateway process exited with ${code}`)));
    });
    const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl);
    const nats = await connectNats({ servers: stack.info.natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'bench-smpp' }, createLogger('error'));
    const directory = await AccountDirectory.open(nats.kv.accounts);
    const creds = await issueSmpp(stack.info.natsUrl, tenant.orgId, tenant.tokenId, directory);
    // The gateway's own directory mirror catches up within milliseconds; make sure before timing.
    for (let i = 0; i < 100; i++) {
      const probe = await open(port);
      const okBind = await bind(probe, 'transmitter', creds.systemId, creds.password).then(() => true, () => false);
      await unbind(probe);
      if (okBind) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    log('[bench:smpp] measuring');
    const single: number[] = [];
    const singleCpu: number[] = [];
    const parallelCpu: number[] = [];
    const gatewayPid = gateway.pid;
    /** The gateway process's CPU per accepted submit_sm (µs), from /proc. */
    const cpuPer = (before: number | undefined, accepted: number): number[] => {
      const after = processCpuMs(gatewayPid);
      return before === undefined || after === undefined || accepted === 0 ? [] : [((after - before) * 1000) / accepted];
    };
    const bindMs: number[] = [];
    const parallel: number[] = [];
    const parallelFull: number[] = [];
    const parallelFullCpu: number[] = [];
    const receipts: number[] = [];
    let failures = 0;
    for (let run = 1; run <= RUNS; run++) {
      // 1. one transceiver, window 100
      const s = await open(port);
      await bind(s, 'transceiver', creds.systemId, creds.password);
      const cpu0 = processCpuMs(gatewayPid);
      const one = await pump(s, 100, SECONDS * 1000, submitPdu);
      singleCpu.push(...cpuPer(cpu0, one.ok));
      await unbind(s);
      single.push((one.ok / one.elapsedMs) * 1000);
      failures += one.failed;
      log(`  run ${run}/${RUNS}: 1 transceiver, window 100: ${single.at(-1)?.toFixed(0)} submit_sm_resp/s (${one.failed} refused), gateway CPU ${singleCpu.at(-1)?.toFixed(0)} µs/message`);

      // 2. 10 binds in parallel, then 10 transceivers submitting at once (window 10 each)
      const t0 = performance.now();
      const sessions = await Promise.all(Array.from({ length: 10 }, async () => {
        const x = await open(port);
        await bind(x, 'transceiver', creds.systemId, creds.password);
        return x;
      }));
      bindMs.push(performance.now() - t0);
      log(`  run ${run}/${RUNS}: 10 binds in parallel in ${bindMs.at(-1)?.toFixed(0)} ms`);
      for (const [window, rates, cpu] of [[10, parallel, parallelCpu], [100, parallelFull, parallelFullCpu]] as const) {
        const cpu1 = processCpuMs(gatewayPid);
        const many = await Promise.all(sessions.map((x) => pump(x, window, SECONDS * 1000, submitPdu)));
        const manyOk = many.reduce((n, r) => n + r.ok, 0);
        cpu.push(...cpuPer(cpu1, manyOk));
        rates.push((manyOk / Math.max(...many.map((r) => r.elapsedMs))) * 1000);
        failures += many.reduce((n, r) => n + r.failed, 0);
        log(`  run ${run}/${RUNS}: 10 transceivers × window ${window}: ${rates.at(-1)?.toFixed(0)} submit_sm_resp/s, gateway CPU ${cpu.at(-1)?.toFixed(0)} µs/message`);
      }
      await Promise.all(sessions.map(unbind));

      // 3. receipts: accept RECEIPTS messages with registered_delivery 1, publish one transition each, then bind a receiver
      const tx = await open(port);
      await bind(tx, 'transmitter', creds.systemId, creds.password);
      const ids: string[] = [];
      await pump(tx, 100, 600_000, () => ({ ...submitPdu(), registered_delivery: 1 }), ids, RECEIPTS);
      await unbind(tx);
      const stored = new KvLifecycleStates(nats.kv.messages);
      const states = await Promise.all(ids.map(async (id) => (await stored.read(id))?.message));
      const eventAt = new Date().toISOString();
      const publishes: Array<Promise<unknown>> = [];
      for (const m of states) {
        if (!m) continue;
        const updated = { ...m, status: 'delivered', statusCode: 0, deliveredAt: eventAt, updatedAt: eventAt };
        publishes.push(nats.js.publish(SUBJECTS.smsStatus(tenant.tokenId), JSON.stringify({ messages: [updated], transitions: [{ messageId: m.id, seq: 1, status: 'delivered', code: 0, eventAt, orgId: m.orgId, projectId: m.projectId, tokenId: m.tokenId, clientId: null }] })));
        if (publishes.length >= 1000) await Promise.all(publishes.splice(0));
      }
      await Promise.all(publishes);
      const rx = await open(port);
      let got = 0;
      const t1 = performance.now();
      const all = new Promise<void>((resolve) => {
        rx.on('deliver_sm', (pdu) => {
          rx.send(pdu.response());
          if (++got === ids.length) resolve();
        });
      });
      await bind(rx, 'receiver', creds.systemId, creds.password);
      let giveUp: NodeJS.Timeout | undefined;
      // Cleared once all are in: a pending 5-minute timer kept the finished benchmark from exiting.
      await Promise.race([all, new Promise((resolve) => { giveUp = setTimeout(resolve, 300_000); })]);
      clearTimeout(giveUp);
      const elapsed = performance.now() - t1;
      await unbind(rx);
      receipts.push((got / elapsed) * 1000);
      log(`  run ${run}/${RUNS}: ${got}/${ids.length} receipts as deliver_sm in ${(elapsed / 1000).toFixed(1)} s: ${receipts.at(-1)?.toFixed(0)} deliver_sm/s`);
    }
    directory.stop();
    await nats.close();

    const results = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
      conditions: `embedded stack (nats-server, Temporal dev server, chdb); product roles: ${values.roles} (the lifecycle does not run, so accepted messages stay queued on JetStream); the SMPP gateway (default options${values['no-async-traces'] ? ', NATS connection with noAsyncTraces' : ''}) in its own process; clients (the smpp package) in the benchmark process on the same machine; ${RUNS} runs of ${SECONDS} s; medians`,
      at: new Date().toISOString(),
      loadAverageAfter: loadavg().map((l) => Number(l.toFixed(2))),
      singleTransceiver: { name: 'one transceiver, window 100, GSM-7 single segment, registered_delivery 0', submitRespPerSecond: median(single), gatewayCpuUsPerMessage: median(singleCpu), runs: single },
      parallelBinds: { name: '10 bind_transceiver in parallel (scrypt password check)', allBoundMs: median(bindMs), runs: bindMs },
      tenTransceivers: { name: '10 transceivers of one system_id, window 10 each (as many in flight as the one transceiver)', submitRespPerSecond: median(parallel), gatewayCpuUsPerMessage: median(parallelCpu), ratioToOne: median(parallel) / median(single), runs: parallel },
      tenTransceiversFullWindow: { name: '10 transceivers of one system_id, window 100 each (each as the one transceiver)', submitRespPerSecond: median(parallelFull), gatewayCpuUsPerMessage: median(parallelFullCpu), ratioToOne: median(parallelFull) / median(single), runs: parallelFull },
      receipts: { name: `${RECEIPTS} receipts buffered on JetStream, drained by one receiver (deliver_sm acked after each deliver_sm_resp)`, deliverSmPerSecond: median(receipts), runs: receipts },
      refusedSubmits: failures,
    };
    const written = writeResult(values.out ?? (values['no-async-traces'] ? 'smpp-no-async-traces.json' : 'smpp.json'), results);
    process.stdout.write([
      '',
      `SMPP benchmark (${results.conditions})`,
      `1 transceiver, window 100          ${results.singleTransceiver.submitRespPerSecond.toFixed(0).padStart(7)} submit_sm_resp/s  gateway CPU ${results.singleTransceiver.gatewayCpuUsPerMessage.toFixed(0)} µs/message`,
      `10 binds in parallel               ${results.parallelBinds.allBoundMs.toFixed(0).padStart(7)} ms until all bound`,
      `10 transceivers × window 10        ${results.tenTransceivers.submitRespPerSecond.toFixed(0).padStart(7)} submit_sm_resp/s  gateway CPU ${results.tenTransceivers.gatewayCpuUsPerMessage.toFixed(0)} µs/message  (${results.tenTransceivers.ratioToOne.toFixed(2)} of one)`,
      `10 transceivers × window 100       ${results.tenTransceiversFullWindow.submitRespPerSecond.toFixed(0).padStart(7)} submit_sm_resp/s  gateway CPU ${results.tenTransceiversFullWindow.gatewayCpuUsPerMessage.toFixed(0)} µs/message  (${results.tenTransceiversFullWindow.ratioToOne.toFixed(2)} of one)`,
      `load average after: ${results.loadAverageAfter.join(' ')}`,
      `receipts to one receiver           ${results.receipts.deliverSmPerSecond.toFixed(0).padStart(7)} deliver_sm/s`,
      `refused submit_sm: ${failures}`,
      `written to ${written}`,
      '',
    ].join('\n'));
  } finally {
    gateway?.kill('SIGTERM');
    await stack.stop();
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
