// Crash recovery of `npm start` (DESIGN §4: nothing accepted is lost): the product as `npm start`
// runs it (main.ts, every role, its own embedded nats-server and Temporal dev server, the
// lifecycle and carrier role processes), in a data directory of its own on free ports. Messages
// are accepted through the v1 and the legacy API (spec 1 §1), the main process is killed with -9
// while they are in flight, and the product is started again at once: the engines and role
// processes the killed run left behind are reaped (infra/supervisor.ts reapStale), so the start
// comes up on the first try, and every accepted message still reaches its final status.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../infra/logger';
import { Supervisor, portOpen, processRunning, reapStale } from '../../infra/supervisor';
import type { DemoCredentials } from '../../pipelines/demo-seed';
import { freePort, natsServerSpec } from '../../infra/local-engines';
import { eventually } from '../../support/eventually';
import { waitForHealth } from '../../support/stack';

const ROOT = join(__dirname, '..', '..');
const V1 = '/transactional/v1';
const START_TIMEOUT_MS = 150_000;

interface Product {
  readonly child: ChildProcess;
  readonly output: string[];
  readonly exited: Promise<number | null>;
}

let dir: string;
let env: NodeJS.ProcessEnv;
let httpUrl: string;
const products: Product[] = [];

function start(): Product {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const remember = (chunk: Buffer): void => {
    output.push(chunk.toString('utf8'));
    if (output.length > 300) output.shift();
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const product = { child, output, exited };
  products.push(product);
  return product;
}

/** Healthy (GET /health 200) before it exits: the start came up on this try. */
async function healthy(product: Product): Promise<void> {
  await waitForHealth(httpUrl, product.child, product.output, START_TIMEOUT_MS);
}

async function request(path: string, token: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${httpUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The pids of the processes a run recorded for the next start to reap ($DATA_DIR/run/*.pid). */
function recordedPids(): Record<string, number> {
  const runDir = join(dir, 'run');
  const pidOf = (text: string): number => {
    const record = JSON.parse(text) as number | { pid: number };
    return typeof record === 'number' ? record : record.pid;
  };
  return Object.fromEntries(readdirSync(runDir).filter((f) => f.endsWith('.pid')).map((f) => [f, pidOf(readFileSync(join(runDir, f), 'utf8'))]));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-crash-restart-'));
  const port = async (): Promise<string> => String(await freePort());
  const httpPort = await port();
  httpUrl = `http://127.0.0.1:${httpPort}`;
  const { NATS_URL: _n, TEMPORAL_ADDRESS: _t, CLICKHOUSE_URL: _c, ...inherited } = process.env;
  env = {
    ...inherited,
    DATA_DIR: dir,
    HTTP_PORT: httpPort,
    HTTP_HOST: '127.0.0.1',
    SMPP_PORT: await port(),
    SIMULATOR_PORT: await port(),
    NATS_PORT: await port(),
    TEMPORAL_PORT: await port(),
    TEMPORAL_UI_PORT: await port(),
    LOG_LEVEL: 'warn',
    PROCESS_LAYOUT: 'split',
    // Receipts a few seconds after the submit: the kill -9 finds the messages in flight.
    SIMULATOR_LATENCY_MS: '1500',
  };
});

afterAll(async () => {
  for (const product of products) {
    if (product.child.exitCode === null && product.child.signalCode === null) {
      product.child.kill('SIGTERM');
      const timer = setTimeout(() => product.child.kill('SIGKILL'), 15_000);
      await product.exited;
      clearTimeout(timer);
    }
  }
  // Whatever a failed run left recorded (an engine, a role process) goes with the directory.
  try {
    for (const pid of Object.values(recordedPids())) if (processRunning(pid)) process.kill(pid, 'SIGKILL');
  } catch { /* no run directory */ }
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

test('DESIGN §4: after a kill -9 of the main process, the next start comes up on the first try and every accepted message reaches its final status', async () => {
  const first = start();
  await healthy(first);
  // The demo organization is seeded once the gateways answer (pipelines/demo-seed.ts).
  await eventually(() => existsSync(join(dir, 'demo.json')), { what: 'the demo organization to be seeded (demo.json)', timeoutMs: 30_000, intervalMs: 100 });
  const demo = JSON.parse(readFileSync(join(dir, 'demo.json'), 'utf8')) as DemoCredentials;

  const accepted: Array<{ id: string; path: string; token: string }> = [];
  for (let i = 0; i < 5; i++) {
    const res = await request(`${V1}/sms`, demo.token, { from: 'Crash', to: `+49151123456${String(10 + i)}`, text: `v1 message ${i}` });
    expect(res.status).toBe(201);
    accepted.push({ id: (res.body['entity'] as { id: string }).id, path: V1, token: demo.token });
  }
  for (let i = 0; i < 3; i++) {
    const res = await request('/sms', demo.legacyToken, { from: 'Crash', to: `+33612345${String(600 + i)}`, text: `legacy message ${i}` });
    expect(res.status).toBe(201);
    accepted.push({ id: (res.body['entity'] as { id: string }).id, path: '', token: demo.legacyToken });
  }

  // What the killed run leaves behind: its engines and its two role processes.
  const left = recordedPids();
  first.child.kill('SIGKILL');
  await first.exited;
  expect(Object.values(left).filter((pid) => processRunning(pid))).not.toEqual([]);

  const second = start();
  await healthy(second);
  expect(second.child.exitCode).toBeNull();
  expect(Object.keys(left).sort()).toEqual(['nats-server.pid', 'role-carrier.pid', 'role-lifecycle.pid', 'temporal.pid']);
  // None of the killed run's processes is still there; the new run recorded its own.
  expect(Object.entries(left).filter(([, pid]) => processRunning(pid))).toEqual([]);
  const now = recordedPids();
  expect(Object.keys(now).sort()).toEqual(Object.keys(left).sort());
  for (const [file, pid] of Object.entries(now)) expect({ file, pid: pid === left[file] }).toEqual({ file, pid: false });

  await eventually(async () => {
    const statuses: unknown[] = [];
    for (const message of accepted) {
      const res = await request(`${message.path}/sms/${message.id}`, message.token);
      statuses.push(res.status === 200 ? (res.body['entity'] as { status: string }).status : res.status);
    }
    expect(statuses).toEqual(accepted.map(() => 'delivered'));
  }, { what: 'every accepted message to reach delivered', timeoutMs: 90_000, intervalMs: 250 });
}, 420_000);

test('reapStale returns once the engine it killed is gone: its port is free at once, every time', async () => {
  // SIGKILL returns before the process dies, and its listening socket keeps accepting meanwhile:
  // checking the port right after the kill found it taken nearly every time.
  const log = createLogger('fatal');
  const dataDir = join(dir, 'reap');
  for (let round = 0; round < 5; round++) {
    const port = await freePort();
    const running = new Supervisor(dataDir, log);
    await running.start(natsServerSpec({ storeDir: join(dataDir, `nats-${round}`), port }));
    // The supervisor is left running, as by a parent killed with -9; the next start reaps its run directory.
    await reapStale(join(dataDir, 'run'), log);
    expect({ round, taken: await portOpen(port) }).toEqual({ round, taken: false });
  }
}, 60_000);
