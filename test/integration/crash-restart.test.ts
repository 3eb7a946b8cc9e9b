// Crash recovery of `npm start` (DESIGN §4: nothing accepted is lost): the product as `npm start`
// runs it (main.ts, every role, its own embedded nats-server and Temporal dev server, the
// lifecycle and carrier role processes), in a data directory of its own on free ports. Messages
// are accepted through the v1 and the legacy API (spec 1 §1), the main process is killed with -9
// while they are in flight, and the product is started again at once: the engines and role
// processes the killed run left behind are reaped (infra/supervisor.ts reapStale), so the start
// comes up on the first try, and every accepted message still reaches its final status.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../infra/logger';
import { Supervisor, portOpen, processRunning, reapStale } from '../../infra/supervisor';
import type { DemoCredentials } from '../../pipelines/demo-seed';
import { freePort, natsServerSpec } from '../../infra/local-engines';
import { eventually } from '../../support/eventually';
import { waitForHealth } from '../../support/stack';
import { apiRequest, killRecorded, npmStartEnv, recordedPids, startNpmStart, stopNpmStart, type NpmStart } from '../support/npm-start';

const V1 = '/transactional/v1';
const START_TIMEOUT_MS = 150_000;

let dir: string;
let env: NodeJS.ProcessEnv;
let httpUrl: string;
const products: NpmStart[] = [];

function start(): NpmStart {
  const product = startNpmStart(env);
  products.push(product);
  return product;
}

/** Healthy (GET /health 200) before it exits: the start came up on this try. */
async function healthy(product: NpmStart): Promise<void> {
  await waitForHealth(httpUrl, product.child, product.output, START_TIMEOUT_MS);
}

function request(path: string, token: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return apiRequest(httpUrl, path, token, body);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-crash-restart-'));
  ({ env, httpUrl } = await npmStartEnv(dir, {
    LOG_LEVEL: 'warn',
    // Receipts a few seconds after the submit: the kill -9 finds the messages in flight.
    SIMULATOR_LATENCY_MS: '1500',
  }));
});

afterAll(async () => {
  for (const product of products) await stopNpmStart(product);
  // Whatever a failed run left recorded (an engine, a role process) goes with the directory.
  killRecorded(dir);
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
  const left = recordedPids(dir);
  first.child.kill('SIGKILL');
  await first.exited;
  expect(Object.values(left).filter((pid) => processRunning(pid))).not.toEqual([]);

  const second = start();
  await healthy(second);
  expect(second.child.exitCode).toBeNull();
  expect(Object.keys(left).sort()).toEqual(['nats-server.pid', 'role-carrier.pid', 'role-lifecycle.pid', 'temporal.pid']);
  // None of the killed run's processes is still there; the new run recorded its own.
  expect(Object.entries(left).filter(([, pid]) => processRunning(pid))).toEqual([]);
  const now = recordedPids(dir);
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
