// The product against Kannel (an open-source SMS gateway, Debian's kannel 1.4.5), driven the
// same way in one run, each on the same SMSC: the product's carrier simulator in a process of
// its own (bench/support/smsc.ts, receipts ENROUTE then DELIVRD, latency 0), one fresh instance
// per system. Kannel: bearerbox (SMPP transceiver to the SMSC, window 64 as the product's
// route) + smsbox (HTTP sendsms, DLR callbacks by GET to dlr-url), configured in a temp dir.
// The product: every role as `npm start` runs them (support/stack.ts startStack: the
// gateway process with the lifecycle and carrier role processes, nats-server, the Temporal dev
// server), CARRIER_ROUTES to the same SMSC, its webhook to the receiver of this process.
// Phases, the same load shape for both (autocannon):
//   singles: single sends from --connections connections for --seconds s, as fast as accepted
//            (Kannel: GET /cgi-bin/sendsms with dlr-mask=31 and a dlr-url naming the message;
//            product: POST /transactional/v1/sms);
//   batch:   --messages messages: the product by POST /sms/bulk of --bulk items; Kannel has no
//            bulk send of distinct messages, so the same messages as singles from --connections.
// Each phase waits until every accepted message has its `delivered` DLR (answered 200 here),
// --timeout s at most, or --idle s without a new one. Reports per system and phase: accepted/s,
// accept latency p50/p99, end to end (first request → last `delivered` DLR), DLRs lost
// (expected statuses per message against those received), per-message order violations, CPU
// per accepted message by process (/proc utime+stime deltas over the phase), the load average.
// A message of the product still without its `delivered` DLR when the wait ends is explained (up
// to 5): its status by GET /sms/{id}, and `admin message story` (its workflow, the carrier events
// in that workflow's history, its transitions).
// Installs Kannel with apt-get when bearerbox is missing (root). Checks at the end that no
// process it started is left (pgrep).
// Usage: npm run bench:kannel [-- --systems kannel,product] [--phases singles,batch] [--seconds 10]
//   [--connections 64] [--messages 10000] [--bulk 100] [--bulk-connections 4] [--timeout 300]
//   [--idle 30] [--kannel-store file|none] [--out <file>]
import autocannon from 'autocannon';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createConnection } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { benchArgs } from './cli-args';
import { freePort } from '../infra/local-engines';
import { adminAt, startStack, type RunningStack } from '../support/stack';
import { ownCpuMs, roleProcessName, roleProcessPids } from './support/cpu';
import { natsServerPid } from './support/nats-cost';
import { temporalServerPid } from './support/temporal-cost';
import { PIPELINE_STACK_ENV } from './support/pipeline-stack';
import { createTenantAt } from './support/tenant';
import { benchCommit, loadAverage, percentile, writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    systems: { type: 'string', default: 'kannel,product' },
    phases: { type: 'string', default: 'singles,batch' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    messages: { type: 'string', default: '10000' },
    bulk: { type: 'string', default: '100' },
    'bulk-connections': { type: 'string', default: '4' },
    timeout: { type: 'string', default: '300' },
    idle: { type: 'string', default: '30' },
    // Kannel's message store: `file` keeps accepted messages across a bearerbox restart, as the
    // product's JetStream does; `none` is Debian's default configuration.
    'kannel-store': { type: 'string', default: 'file' },
    // Single sends before the measured phases (each system just started: JIT, caches, first binds), not reported in the table.
    warmup: { type: 'string', default: '500' },
    out: { type: 'string' },
  },
});

const SYSTEMS = values.systems.split(',').map((s) => s.trim()).filter((s): s is SystemName => s === 'kannel' || s === 'product');
const PHASES = values.phases.split(',').map((s) => s.trim()).filter((s): s is PhaseName => s === 'singles' || s === 'batch');
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const MESSAGES = Number(values.messages);
const BULK = Number(values.bulk);
type SystemName = 'kannel' | 'product';
type PhaseName = 'singles' | 'batch';
type AnyPhase = PhaseName | 'warmup';

const ROOT = join(__dirname, '..');
const say = (line: string): void => { process.stderr.write(`[bench:kannel] ${line}\n`); };
const round = (x: number, digits = 1): number => Number(x.toFixed(digits));
const load1 = (): number => round(loadavg()[0] ?? 0, 2);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The destination of the n-th message: last two digits 00-79, the simulator's `delivered` path (docs/carrier.md). */
const destination = (n: number): string => `+49151123456${String(n % 80).padStart(2, '0')}`;
const TEXT = 'Benchmark message, GSM-7 only, one segment.';

// ---------------------------------------------------------------------------------------------
// CPU of one process (its own threads only): ownCpuMs of bench/support/cpu.ts.

/** The processes whose CPU a phase reports, by name; `bench` is this process (load generator and DLR receiver). */
type ProcessList = () => Record<string, number>;

function cpuSnapshot(list: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(list)) out[name] = ownCpuMs(pid) ?? Number.NaN;
  const own = process.cpuUsage();
  out['bench'] = (own.user + own.system) / 1000;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The DLR receiver: Kannel's callbacks (GET /kannel?id=&type=) and the product's webhooks
// (POST /product, JSON), each answered 200 and recorded per message in arrival order.

interface Dlr { readonly status: string; readonly at: number }
const dlrs = new Map<string, Dlr[]>();
let dlrRequests = 0;

/** Kannel's DLR types (dlr-mask bits) by name. */
const KANNEL_TYPES: Record<string, string> = { '1': 'delivered', '2': 'failed', '4': 'buffered', '8': 'smsc-ack', '16': 'smsc-reject' };
/** Rank of a status in a message's life: a DLR of a lower rank after a higher one is an order violation. */
const RANK: Record<string, number> = { 'smsc-ack': 1, 'smsc-reject': 1, sent: 1, accepted: 2, buffered: 2, delivered: 3, failed: 3, expired: 3, rejected: 3, unknown: 3, canceled: 3, error: 3 };
/** The DLRs each system should send for a message the simulator delivers (ENROUTE then DELIVRD). */
const EXPECTED: Record<SystemName, readonly string[]> = { kannel: ['smsc-ack', 'buffered', 'delivered'], product: ['sent', 'buffered', 'delivered'] };

function record(id: string | undefined, status: string | undefined): void {
  if (!id || !status) return;
  const list = dlrs.get(id) ?? [];
  list.push({ status, at: Date.now() });
  dlrs.set(id, list);
}

async function startReceiver(): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      dlrRequests++;
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/kannel') {
        const type = url.searchParams.get('type') ?? '';
        record(url.searchParams.get('id') ?? undefined, KANNEL_TYPES[type] ?? `type-${type}`);
      } else {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: string; status?: string };
          record(body.id, body.status);
        } catch { /* not a DLR */ }
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return { server, base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

// ---------------------------------------------------------------------------------------------
// Processes this bench starts, stopped in the end whatever happens.

const started: ChildProcess[] = [];
const warmups: PhaseResult[] = [];

function track(child: ChildProcess, name: string): ChildProcess {
  started.push(child);
  child.once('exit', (code, signal) => { if (code !== 0 && signal !== 'SIGTERM' && !stopping) say(`${name} (pid ${child.pid}) exited with ${code ?? signal}`); });
  return child;
}
let stopping = false;

async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(200);
  }
  throw new Error(`${what} not within ${timeoutMs / 1000} s`);
}

async function startSmsc(): Promise<{ child: ChildProcess; port: number }> {
  const child = track(spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'support', 'smsc.ts'), '--latency', '0'], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'error' }, stdio: ['ignore', 'pipe', 'inherit'] }), 'smsc');
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (c: Buffer) => {
      seen += c.toString('utf8');
      const line = /\{"port":(\d+)\}/.exec(seen);
      if (line) resolve(Number(line[1]));
    });
    child.once('exit', (code) => reject(new Error(`smsc exited with ${code} before listening`)));
  });
  return { child, port };
}

// ---------------------------------------------------------------------------------------------
// The two systems.

/** Timed-out workflow tasks (count, and the events around each), with the workflow runs and their history events so far. */
interface TaskTimeouts {
  readonly count: number;
  readonly workflows: string[];
  readonly runs?: number;
  readonly historyEvents?: number;
}

interface System {
  readonly name: SystemName;
  /** Role processes by name → pid, read at each snapshot (a restarted role process gets a new pid). */
  readonly processes: ProcessList;
  /** A phase's load: autocannon options, and what it makes of each answer (the accepted message's id, or none). */
  singles(accepted: Map<string, number>): autocannon.Options;
  batch(accepted: Map<string, number>): autocannon.Options;
  /** What the system says of a message whose `delivered` DLR never came (its status), for the report. */
  explain?(id: string): Promise<string>;
  /** Workflow tasks that timed out so far (every workflow's history): a stalled lifecycle, even one whose shorter timeout recovers it within --idle. */
  taskTimeouts?(): Promise<TaskTimeouts>;
  stop(): Promise<void>;
}

function ensureKannel(): void {
  if (spawnSync('sh', ['-c', 'command -v bearerbox && command -v smsbox'], { stdio: 'ignore' }).status === 0) return;
  say('bearerbox/smsbox not found: installing Kannel (apt-get install -y kannel)');
  execFileSync('apt-get', ['install', '-y', 'kannel'], { stdio: ['ignore', process.stderr, process.stderr], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function kannelVersion(): string {
  const r = spawnSync('dpkg-query', ['-W', '-f', '${Version}', 'kannel'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'unknown';
}

async function startKannel(smscPort: number, dlrBase: string, dir: string): Promise<System> {
  ensureKannel();
  const [adminPort, boxPort, sendsmsPort] = [await freePort(), await freePort(), await freePort()];
  const store = values['kannel-store'] === 'file' ? [`store-type = file`, `store-location = "${join(dir, 'kannel.store')}"`] : [];
  // log-level 3: errors only, as the product runs with LOG_LEVEL=error.
  const conf = [
    'group = core', `admin-port = ${adminPort}`, 'admin-password = bench', 'admin-allow-ip = "127.0.0.1"', `smsbox-port = ${boxPort}`,
    'box-allow-ip = "127.0.0.1"', `log-file = "${join(dir, 'bearerbox.log')}"`, 'log-level = 3', 'dlr-storage = internal', ...store, '',
    'group = smsc', 'smsc = smpp', 'smsc-id = bench', 'host = 127.0.0.1', `port = ${smscPort}`, 'transceiver-mode = true',
    'smsc-username = connector', 'smsc-password = simulatr', 'system-type = ""', 'interface-version = 34',
    // The product's route window (CARRIER_ROUTES window, default 64); Kannel's default is 10.
    'max-pending-submits = 64', '',
    'group = smsbox', 'bearerbox-host = 127.0.0.1', `bearerbox-port = ${boxPort}`, `sendsms-port = ${sendsmsPort}`,
    `log-file = "${join(dir, 'smsbox.log')}"`, 'log-level = 3', '',
    'group = sendsms-user', 'username = bench', 'password = bench', '',
    'group = sms-service', 'keyword = default', 'text = "ok"', '',
  ].join('\n');
  const confFile = join(dir, 'kannel.conf');
  writeFileSync(confFile, conf);
  // -v 4: the console log at panic level only (its default is debug; errors go to the log files).
  const bearerbox = track(spawn('bearerbox', ['-v', '4', confFile], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] }), 'bearerbox');
  await until('bearerbox bound to the SMSC', async () => {
    try {
      const text = await (await fetch(`http://127.0.0.1:${adminPort}/status.txt?password=bench`)).text();
      return /\(online /.test(text.split('SMSC connections:')[1] ?? '');
    } catch { return false; }
  });
  const smsbox = track(spawn('smsbox', ['-v', '4', confFile], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] }), 'smsbox');
  await until('smsbox sendsms port', () => portOpen(sendsmsPort));
  await until('smsbox connected to bearerbox', async () => {
    try { return /smsbox:\(none\)/.test(await (await fetch(`http://127.0.0.1:${adminPort}/status.txt?password=bench`)).text()); } catch { return false; }
  });
  say(`Kannel ${kannelVersion()} up: bearerbox pid ${bearerbox.pid}, smsbox pid ${smsbox.pid}, sendsms on ${sendsmsPort}, store ${values['kannel-store']}`);
  let next = 0;
  const requestFor = (prefix: string) => (request: autocannon.Request, context: object): autocannon.Request => {
    const id = `${prefix}${next++}`;
    (context as { id?: string }).id = id;
    const dlrUrl = `${dlrBase}/kannel?id=${id}&type=%d`;
    return { ...request, method: 'GET', path: `/cgi-bin/sendsms?username=bench&password=bench&from=Bench&to=${encodeURIComponent(destination(next))}&text=${encodeURIComponent(TEXT)}&dlr-mask=31&dlr-url=${encodeURIComponent(dlrUrl)}` };
  };
  const onResponse = (accepted: Map<string, number>) => (status: number, _body: string, context: object): void => {
    const id = (context as { id?: string }).id;
    if (status >= 200 && status < 300 && id) accepted.set(id, Date.now());
  };
  const url = `http://127.0.0.1:${sendsmsPort}`;
  return {
    name: 'kannel',
    processes: () => ({ bearerbox: bearerbox.pid ?? 0, smsbox: smsbox.pid ?? 0 }),
    singles: (accepted) => ({ url, connections: CONNECTIONS, duration: SECONDS, requests: [{ setupRequest: requestFor('ks'), onResponse: onResponse(accepted) }] }),
    batch: (accepted) => ({ url, connections: CONNECTIONS, amount: MESSAGES, requests: [{ setupRequest: requestFor('kb'), onResponse: onResponse(accepted) }] }),
    stop: async () => { await stopChild(smsbox); await stopChild(bearerbox); },
  };
}

async function startProduct(smscPort: number, dlrBase: string): Promise<System> {
  const route = { name: 'bench-smsc', host: '127.0.0.1', port: smscPort, systemId: 'connector', password: 'simulatr', prefixes: [''], window: 64 };
  const stack: RunningStack = await startStack({ ...PIPELINE_STACK_ENV, CARRIER_ROUTES: JSON.stringify([route]) }, (l) => process.stderr.write(l));
  const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl, `${dlrBase}/product`);
  const natsPid = natsServerPid(stack.info.natsUrl.split(':').at(-1) ?? '');
  const temporalPid = temporalServerPid(stack.info.temporalAddress.split(':').at(-1) ?? '');
  const processes = (): Record<string, number> => {
    const out: Record<string, number> = { gateway: stack.pid ?? 0 };
    for (const pid of roleProcessPids(stack.pid ?? 0)) out[roleProcessName(pid) === 'worker' ? 'lifecycle' : roleProcessName(pid).includes('carrier') ? 'carrier' : roleProcessName(pid)] = pid;
    out['nats-server'] = natsPid ?? 0;
    out['temporal'] = temporalPid ?? 0;
    return out;
  };
  say(`product up: ${Object.entries(processes()).map(([n, p]) => `${n} ${p}`).join(', ')}`);
  const headers = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
  const one = JSON.stringify({ from: 'Bench', to: destination(0), text: TEXT });
  const bulk = JSON.stringify(Array.from({ length: BULK }, (_, i) => ({ from: 'Bench', to: destination(i), text: TEXT })));
  const onResponse = (accepted: Map<string, number>) => (status: number, body: string): void => {
    if (status < 200 || status >= 300) return;
    const at = Date.now();
    try {
      const parsed = JSON.parse(body) as { entity?: { id: string }; entities?: Array<{ id: string }> };
      if (parsed.entity) accepted.set(parsed.entity.id, at);
      for (const e of parsed.entities ?? []) accepted.set(e.id, at);
    } catch { /* counted as not accepted */ }
  };
  const url = `${stack.info.httpUrl}/transactional/v1`;
  return {
    name: 'product',
    processes,
    singles: (accepted) => ({ url: `${url}/sms`, method: 'POST', headers, body: one, connections: CONNECTIONS, duration: SECONDS, requests: [{ onResponse: onResponse(accepted) }] }),
    batch: (accepted) => ({ url: `${url}/sms/bulk`, method: 'POST', headers, body: bulk, connections: Number(values['bulk-connections']), amount: Math.ceil(MESSAGES / BULK), requests: [{ onResponse: onResponse(accepted) }] }),
    explain: async (id) => {
      const res = await fetch(`${url}/sms/${id}`, { headers: { authorization: headers.authorization } });
      const body = (await res.json()) as { entity?: { status?: string } };
      // The operator's view of it: its workflow, the carrier events in that workflow's history, its transitions.
      type Story = { workflow?: { id?: string; messagesInBatch?: number }; carrierEvents?: Array<{ kind: string; state?: string }>; transitions?: Array<{ status: string }> };
      const told = await adminAt<Story>(stack.info, 'message', 'story', '--id', id).then(
        (s) => `workflow ${s.workflow?.id ?? 'none'} (${s.workflow?.messagesInBatch ?? '?'} messages), carrier events in its history ${JSON.stringify((s.carrierEvents ?? []).map((e) => e.state ?? e.kind))}, transitions ${JSON.stringify((s.transitions ?? []).map((t) => t.status))}`,
        (err: unknown) => `admin message story failed: ${String(err).slice(-400)}`,
      );
      return `GET /sms/${id} ${res.status}, status ${body.entity?.status ?? '?'}; ${told}`;
    },
    taskTimeouts: async () => {
      const connection = await Connection.connect({ address: stack.info.temporalAddress });
      try {
        const client = new Client({ connection, namespace: stack.info.namespace });
        const runs: Array<{ workflowId: string; runId: string }> = [];
        for await (const w of client.workflow.list()) runs.push({ workflowId: w.workflowId, runId: w.runId });
        let count = 0;
        let historyEvents = 0;
        const workflows: string[] = [];
        for (let i = 0; i < runs.length; i += 32) {
          await Promise.all(runs.slice(i, i + 32).map(async (r) => {
            const history = await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory();
            historyEvents += history.events?.length ?? 0;
            const n = (history.events ?? []).filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT).length;
            if (n > 0) {
              count += n;
              // The events around each timeout (type, ms after the first event), for the report.
              const events = history.events ?? [];
              const t0 = Number(events[0]?.eventTime?.seconds ?? 0) * 1000 + Math.round((events[0]?.eventTime?.nanos ?? 0) / 1e6);
              const named = events.map((e) => `${String(e.eventId)}:${(temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? '?').replace('EVENT_TYPE_', '')}@${Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6) - t0}`);
              const at = named.findIndex((x) => x.includes('WORKFLOW_TASK_TIMED_OUT'));
              workflows.push(`${r.workflowId} (${n}) ${named.slice(Math.max(0, at - 8), at + 6).join(' ')}`);
            }
          }));
        }
        return { count, workflows, runs: runs.length, historyEvents };
      } finally {
        await connection.close();
      }
    },
    stop: () => stack.stop(),
  };
}

// ---------------------------------------------------------------------------------------------
// One phase.

interface PhaseResult {
  system: SystemName;
  phase: AnyPhase;
  shape: string;
  requests: number;
  non2xx: number;
  accepted: number;
  acceptSeconds: number;
  acceptedPerSecond: number;
  acceptP50Ms: number;
  acceptP99Ms: number;
  delivered: number;
  endToEndSeconds: number;
  endToEndPerSecond: number;
  timedOut: boolean;
  deliveredLatencyP50Ms: number;
  deliveredLatencyP99Ms: number;
  /** The slowest delivered DLR, and how many came later than 5 s after their accept (a lifecycle's stalled workflow task shows here even when it recovers within --idle). */
  deliveredLatencyMaxMs: number;
  /** Workflow task timeouts in every workflow's history at the phase's end (cumulative over phases; the product only). */
  /** Timed-out workflow tasks; with the workflow runs and their history events so far (every phase of this system until now). */
  workflowTaskTimeouts?: TaskTimeouts;
  deliveredLaterThan5s: number;
  dlrsExpected: number;
  dlrsReceived: number;
  dlrsLost: number;
  deliveredLost: number;
  dlrsDuplicated: number;
  orderViolations: number;
  orderViolationsWithRepeats: number;
  statusesSeen: Record<string, number>;
  /** Up to 5 messages without their `delivered` DLR when the wait ended, each as the system explains it. */
  missingExplained: string[];
  cpuUsPerMessage: Record<string, number>;
  systemCpuUsPerMessage: number;
  loadAverage: { start: number; afterAccept: number; end: number };
}

async function runPhase(system: System, phase: AnyPhase, smscPid: number): Promise<PhaseResult> {
  const accepted = new Map<string, number>();
  const warmup = (): autocannon.Options => {
    const { duration: _ignored, ...rest } = system.singles(accepted);
    return { ...rest, connections: 16, amount: Number(values.warmup) };
  };
  const opts = phase === 'warmup' ? warmup() : phase === 'singles' ? system.singles(accepted) : system.batch(accepted);
  const shape = phase === 'warmup' ? `${String(values.warmup)} single sends, 16 connections (not measured)` : phase === 'singles'
    ? `single sends, ${CONNECTIONS} connections, ${SECONDS} s`
    : system.name === 'product' ? `${MESSAGES} messages by POST /sms/bulk of ${BULK}, ${String(values['bulk-connections'])} connections` : `${MESSAGES} messages as single sendsms (no bulk in Kannel), ${CONNECTIONS} connections`;
  const pids = (): Record<string, number> => ({ ...system.processes(), smsc: smscPid });
  const loadStart = load1();
  say(`${system.name} ${phase}: ${shape}; load ${loadStart}`);
  const cpu0 = cpuSnapshot(pids());
  const t0 = Date.now();
  const progress = setInterval(() => say(`  ${system.name} ${phase}: ${accepted.size} accepted so far; load ${load1()}`), 2000);
  const r = await autocannon(opts);
  clearInterval(progress);
  const acceptSeconds = (Date.now() - t0) / 1000;
  const loadAfterAccept = load1();
  say(`  ${accepted.size} accepted in ${acceptSeconds.toFixed(1)} s (${(accepted.size / acceptSeconds).toFixed(0)}/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx + r.errors}); waiting for the delivered DLRs`);
  const deadline = Date.now() + Number(values.timeout) * 1000;
  const deliveredAt = (): Map<string, number> => {
    const out = new Map<string, number>();
    for (const id of accepted.keys()) {
      const d = dlrs.get(id)?.find((x) => x.status === 'delivered');
      if (d) out.set(id, d.at);
    }
    return out;
  };
  let done = deliveredAt();
  let lastCount = done.size;
  let lastChange = Date.now();
  let timedOut = false;
  while (done.size < accepted.size) {
    if (Date.now() > deadline || Date.now() - lastChange > Number(values.idle) * 1000) { timedOut = true; break; }
    await sleep(1000);
    done = deliveredAt();
    if (done.size !== lastCount) { lastCount = done.size; lastChange = Date.now(); }
    say(`  ${system.name} ${phase}: ${done.size}/${accepted.size} delivered DLRs; load ${load1()}`);
  }
  // Late DLRs of other kinds (a buffered after the delivered) still count: a short grace.
  await sleep(1000);
  const cpu1 = cpuSnapshot(pids());
  const last = done.size > 0 ? Math.max(...done.values()) : Date.now();
  const e2eSeconds = (last - t0) / 1000;
  const n = Math.max(1, accepted.size);
  const cpuUsPerMessage: Record<string, number> = {};
  for (const name of Object.keys(cpu1)) cpuUsPerMessage[name] = round((((cpu1[name] ?? 0) - (cpu0[name] ?? 0)) * 1000) / n, 0);
  const systemNames = Object.keys(system.processes());
  const systemCpu = systemNames.reduce((sum, name) => sum + (cpuUsPerMessage[name] ?? 0), 0);

  // DLR accounting per message.
  const expected = EXPECTED[system.name];
  let received = 0; let lost = 0; let duplicated = 0; let violations = 0; let violationsWithRepeats = 0;
  const seen: Record<string, number> = {};
  for (const id of accepted.keys()) {
    const list = dlrs.get(id) ?? [];
    received += list.length;
    const statuses = list.map((d) => d.status);
    for (const s of statuses) seen[s] = (seen[s] ?? 0) + 1;
    for (const s of expected) if (!statuses.includes(s)) lost++;
    duplicated += statuses.length - new Set(statuses).size;
    // Out of order: the first DLR of a status arrives after the first of a later one (buffered after
    // delivered); a repeat of an earlier status after a later one counts apart (at-least-once repeats).
    const firsts = [...new Set(statuses)];
    if (firsts.some((s, i) => firsts.slice(0, i).some((before) => (RANK[before] ?? 0) > (RANK[s] ?? 0)))) violations++;
    let max = 0;
    let lateRepeat = false;
    for (const s of statuses) {
      const rank = RANK[s] ?? 0;
      if (rank < max) lateRepeat = true;
      max = Math.max(max, rank);
    }
    if (lateRepeat) violationsWithRepeats++;
  }
  const missingExplained: string[] = [];
  const explain = system.explain;
  if (explain) {
    for (const id of [...accepted.keys()].filter((id) => !done.has(id)).slice(0, 5)) {
      const told = `${id}: ${await explain(id).catch((err: unknown) => String(err))}; DLRs received ${JSON.stringify((dlrs.get(id) ?? []).map((d) => d.status))}`;
      missingExplained.push(told);
      say(`  ${system.name} ${phase}: no delivered DLR for ${told}`);
    }
  }
  const workflowTaskTimeouts = system.taskTimeouts ? await system.taskTimeouts().catch((err: unknown): TaskTimeouts => ({ count: -1, workflows: [String(err).slice(0, 200)] })) : undefined;
  if (workflowTaskTimeouts) say(`  ${system.name} ${phase}: workflow runs so far ${workflowTaskTimeouts.runs ?? '?'} (${workflowTaskTimeouts.historyEvents ?? '?'} history events); workflow tasks timed out so far ${workflowTaskTimeouts.count} ${JSON.stringify(workflowTaskTimeouts.workflows.slice(0, 10))}`);
  const latencies = [...done.entries()].map(([id, at]) => at - (accepted.get(id) ?? at));
  const result: PhaseResult = {
    system: system.name, phase, shape,
    requests: r.requests.total, non2xx: r.non2xx + r.errors, accepted: accepted.size, acceptSeconds: round(acceptSeconds, 2),
    acceptedPerSecond: round(accepted.size / acceptSeconds, 0), acceptP50Ms: r.latency.p50, acceptP99Ms: r.latency.p99,
    delivered: done.size, endToEndSeconds: round(e2eSeconds, 2), endToEndPerSecond: round(done.size / e2eSeconds, 0), timedOut,
    deliveredLatencyP50Ms: percentile(latencies, 50), deliveredLatencyP99Ms: percentile(latencies, 99),
    deliveredLatencyMaxMs: latencies.reduce((a, b) => Math.max(a, b), 0), deliveredLaterThan5s: latencies.filter((l) => l > 5_000).length,
    dlrsExpected: accepted.size * expected.length, dlrsReceived: received, dlrsLost: lost, deliveredLost: accepted.size - done.size, dlrsDuplicated: duplicated, orderViolations: violations, orderViolationsWithRepeats: violationsWithRepeats,
    statusesSeen: seen, missingExplained, workflowTaskTimeouts, cpuUsPerMessage, systemCpuUsPerMessage: round(systemCpu, 0),
    loadAverage: { start: loadStart, afterAccept: loadAfterAccept, end: load1() },
  };
  say(`  ${system.name} ${phase}: accepted ${result.acceptedPerSecond}/s (p50 ${result.acceptP50Ms} ms, p99 ${result.acceptP99Ms} ms); end to end ${result.endToEndPerSecond} msg/s over ${result.endToEndSeconds} s${timedOut ? ' (TIMED OUT)' : ''}; DLRs lost ${lost}/${result.dlrsExpected} (delivered missing ${result.deliveredLost}), order violations ${violations} (with repeats ${violationsWithRepeats}), duplicates ${duplicated}; CPU µs/msg ${JSON.stringify(cpuUsPerMessage)} (system ${result.systemCpuUsPerMessage}); load ${loadStart} → ${result.loadAverage.end}`);
  return result;
}

// ---------------------------------------------------------------------------------------------

function leftovers(pids: number[]): string[] {
  const out: string[] = [];
  for (const name of ['bearerbox', 'smsbox']) {
    const r = spawnSync('pgrep', ['-a', '-x', name], { encoding: 'utf8' });
    if (r.stdout.trim()) out.push(...r.stdout.trim().split('\n'));
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!/\) Z /.test(stat)) out.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`);
    } catch { /* gone */ }
  }
  return out;
}

async function runSystem(name: SystemName, dlrBase: string, seenPids: number[]): Promise<PhaseResult[]> {
  const smsc = await startSmsc();
  seenPids.push(smsc.child.pid ?? 0);
  const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  let system: System | undefined;
  try {
    say(`${name}: SMSC (the product's carrier simulator) pid ${smsc.child.pid} on ${smsc.port}`);
    system = name === 'kannel' ? await startKannel(smsc.port, dlrBase, dir) : await startProduct(smsc.port, dlrBase);
    seenPids.push(...Object.values(system.processes()).filter((p) => p > 0));
    const results: PhaseResult[] = [];
    if (Number(values.warmup) > 0) warmups.push(await runPhase(system, 'warmup', smsc.child.pid ?? 0));
    for (const phase of PHASES) results.push(await runPhase(system, phase, smsc.child.pid ?? 0));
    return results;
  } finally {
    if (system) await system.stop();
    await stopChild(smsc.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

function markdown(results: PhaseResult[], meta: { at: string; commit: string }): string {
  const lines = [
    `| System | Phase | Accepted/s (p50 / p99 ms) | End to end msg/s | DLRs lost / expected (duplicates) | Messages out of order (with repeats) | CPU µs/msg by process | System CPU µs/msg | Load (start → end) |`,
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const cpu = Object.entries(r.cpuUsPerMessage).map(([n, us]) => `${n} ${us}`).join(', ');
    lines.push(`| ${r.system} | ${r.phase}: ${r.shape} | ${r.acceptedPerSecond.toLocaleString('en')} (${r.acceptP50Ms} / ${r.acceptP99Ms}) | ${r.endToEndPerSecond.toLocaleString('en')}${r.timedOut ? ' (timed out)' : ''} | ${r.dlrsLost} / ${r.dlrsExpected} (${r.dlrsDuplicated}) | ${r.orderViolations} (${r.orderViolationsWithRepeats}) | ${cpu} | ${r.systemCpuUsPerMessage} | ${r.loadAverage.start} → ${r.loadAverage.end} |`);
  }
  const by = (s: SystemName, p: PhaseName): PhaseResult | undefined => results.find((r) => r.system === s && r.phase === p);
  for (const p of PHASES) {
    const k = by('kannel', p); const pr = by('product', p);
    if (k && pr) lines.push('', `${p} (${meta.at}, ${meta.commit}): product/Kannel accepted ${round(pr.acceptedPerSecond / k.acceptedPerSecond, 2)}, end to end ${round(pr.endToEndPerSecond / k.endToEndPerSecond, 2)}, system CPU per message ${round(pr.systemCpuUsPerMessage / Math.max(1, k.systemCpuUsPerMessage), 2)}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const at = new Date().toISOString();
  const rev = benchCommit();
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean).length;
  const { server, base } = await startReceiver();
  const seenPids: number[] = [];
  const results: PhaseResult[] = [];
  try {
    say(`systems ${SYSTEMS.join(', ')}; phases ${PHASES.join(', ')}; load ${loadAverage()}; DLR receiver ${base}`);
    for (const name of SYSTEMS) results.push(...(await runSystem(name, base, seenPids)));
  } finally {
    stopping = true;
    for (const child of started) await stopChild(child, 5000);
    await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  }
  await sleep(500);
  const left = leftovers(seenPids);
  say(left.length === 0 ? 'no process left behind (pgrep bearerbox/smsbox, and every pid this run started or measured)' : `LEFT BEHIND: ${left.join('; ')}`);
  const ratios: Record<string, Record<string, number>> = {};
  for (const p of PHASES) {
    const k = results.find((r) => r.system === 'kannel' && r.phase === p);
    const pr = results.find((r) => r.system === 'product' && r.phase === p);
    if (k && pr) ratios[p] = { accepted: round(pr.acceptedPerSecond / k.acceptedPerSecond, 2), endToEnd: round(pr.endToEndPerSecond / k.endToEndPerSecond, 2), systemCpuPerMessage: round(pr.systemCpuUsPerMessage / Math.max(1, k.systemCpuUsPerMessage), 2) };
  }
  const file = values.out ?? `kannel-vs-product-${at.slice(0, 10)}-${at.slice(11, 16).replace(':', '')}-${rev}.json`;
  const written = writeResult(file, {
    at, commit: rev, uncommittedTrackedFiles: dirty,
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    conditions: {
      smsc: 'the product carrier simulator (bench/support/smsc.ts), own process, receipts ENROUTE then DELIVRD at latency 0, a fresh one per system',
      kannel: { version: SYSTEMS.includes('kannel') ? kannelVersion() : null, store: values['kannel-store'], dlrStorage: 'internal', maxPendingSubmits: 64, logLevel: 3, dlrMask: 31 },
      product: 'every role as npm start runs them (gateway process + lifecycle and carrier role processes, nats-server, Temporal dev server), LOG_LEVEL=error, CARRIER_ROUTES to the SMSC (window 64), webhook to this process on loopback',
      loadGenerator: 'autocannon in the bench process, which also receives the DLRs ("bench" CPU)',
      order: SYSTEMS, seconds: SECONDS, connections: CONNECTIONS, messages: MESSAGES, bulk: BULK, bulkConnections: Number(values['bulk-connections']),
    },
    results, ratios, warmups, leftBehind: left,
    dlrRequestsReceived: dlrRequests,
  });
  const md = markdown(results, { at, commit: rev });
  process.stdout.write(`\n${md}\n\nwritten to ${written}\n`);
  if (left.length > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  stopping = true;
  void Promise.all(started.map((c) => stopChild(c, 5000))).finally(() => process.exit(1));
});
