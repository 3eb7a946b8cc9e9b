// BACKGROUND_NICE under `npm start` (docs/configuration.md "Processes of `npm start`"): a stack
// of its own (the shared one runs at BACKGROUND_NICE 0, test/support/global-setup.ts), the product
// as `npm start` runs it (the gateway process with the lifecycle and carrier role processes) on
// engines from infra/local-engines.ts, with BACKGROUND_NICE at its default. The gateway is the
// process the stack spawned, the others are found through the pid files they are recorded in
// ($DATA_DIR/run), and every thread's nice value is read from /proc/<pid>/task/<tid>/stat (field 19).
// Inside the gateway process, the embedded ClickHouse's background threads (merges, schedule
// pools: infra/chdb-background.ts) run at BACKGROUND_NICE too, and the history writer, whose
// inserts carry os_thread_priority, still writes.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../config';
import type { DemoCredentials } from '../../pipelines/demo-seed';
import { autogroupNice, isChdbBackgroundThread, threadName, threadNice, threadNices } from '../../infra/priority';
import { eventually } from '../../support/eventually';
import { startStack, type RunningStack } from '../../support/stack';
import { V1 } from '../../support/tenants';

/** Every thread of `pid`: its name and nice value. */
function threads(pid: number): Array<{ name: string; nice: number }> {
  return readdirSync(`/proc/${pid}/task`).map(Number).flatMap((tid) => {
    const name = threadName(pid, tid);
    const n = threadNice(pid, tid);
    return name === undefined || n === undefined ? [] : [{ name, nice: n }];
  });
}

function recordedPid(file: string): number {
  return (JSON.parse(readFileSync(file, 'utf8')) as { pid: number }).pid;
}

describe('CPU priority of the processes of `npm start` (BACKGROUND_NICE)', () => {
  let own: RunningStack;
  let productDataDir: string;
  let dataDir: string;
  let gateway: number;
  // The default, as a fresh `npm start` has it, unless this run's environment sets BACKGROUND_NICE.
  const nice = loadConfig({ BACKGROUND_NICE: process.env['BACKGROUND_NICE'] }).backgroundNice;
  beforeAll(async () => {
    own = await startStack({ LOG_LEVEL: 'warn' }, () => undefined);
    ({ productDataDir, dataDir } = own.info);
    gateway = own.pid as number;
  }, 120_000);
  afterAll(() => own?.stop());

  test('the default is a lowered priority, and this stack runs at it', () => {
    expect(loadConfig({}).backgroundNice).toBeGreaterThan(0);
    expect(own.info.productEnv['BACKGROUND_NICE']).toBe(process.env['BACKGROUND_NICE']);
  });

  test('the gateway process (HTTP, SMPP) keeps its priority: its main thread at nice 0, no thread lowered but the embedded ClickHouse\'s background ones', () => {
    expect(gateway).toBeGreaterThan(0);
    expect(threadNice(gateway, gateway)).toBe(0);
    // Before any message: no insert is running, whose query threads would be at BACKGROUND_NICE for its duration.
    // Embedded ClickHouse (chdb) raises its MemoryWorker thread to -20 itself.
    expect(threads(gateway).filter((t) => !isChdbBackgroundThread(t.name) && t.nice > 0)).toEqual([]);
  });

  test('the gateway process: the embedded ClickHouse\'s merges and background pools at BACKGROUND_NICE', () => {
    const background = threads(gateway).filter((t) => isChdbBackgroundThread(t.name));
    // chdb starts its merge and schedule pools when it opens.
    expect(background.map((t) => t.name)).toEqual(expect.arrayContaining(['MergeMutate', 'BgSchPool']));
    expect(new Set(background.map((t) => t.nice))).toEqual(new Set([nice]));
    expect(threadNice(gateway, gateway)).toBe(0);
  });

  test('the history writer still writes: a message sent is delivered and its transitions read back from ClickHouse (GET /sms/{id}/dlrs)', async () => {
    const demoFile = join(productDataDir, 'demo.json');
    await eventually(() => existsSync(demoFile), { what: 'the demo organization (demo.json)', timeoutMs: 30_000 });
    const demo = JSON.parse(readFileSync(demoFile, 'utf8')) as DemoCredentials;
    const headers = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/json' };
    const sent = await fetch(`${own.info.httpUrl}${V1}/sms`, { method: 'POST', headers, body: JSON.stringify({ from: 'Nice', to: '+4915112345678', text: 'history at BACKGROUND_NICE' }) });
    expect(sent.status).toBe(201);
    const { id } = ((await sent.json()) as { entity: { id: string } }).entity;
    const statuses = await eventually(async () => {
      const res = await fetch(`${own.info.httpUrl}${V1}/sms/${id}/dlrs`, { headers });
      expect(res.status).toBe(200);
      return ((await res.json()) as { entities: Array<{ status: string }> }).entities.map((e) => e.status);
    }, { what: `the delivered transition of ${id} in GET /sms/{id}/dlrs`, timeoutMs: 60_000, intervalMs: 250, until: (s) => s.includes('delivered') });
    expect(statuses).toContain('delivered');
  }, 90_000);

  test.each(['lifecycle', 'carrier'])('the %s role process: every thread at BACKGROUND_NICE', (name) => {
    const pid = recordedPid(join(productDataDir, 'run', `role-${name}.pid`));
    const nices = threadNices(pid);
    expect(nices.length).toBeGreaterThan(4);
    expect(new Set(nices)).toEqual(new Set([nice]));
  });

  test('the embedded engines: the Temporal dev server at BACKGROUND_NICE (its threads and its session), nats-server at 0', () => {
    // The test stack's engines: local binaries started by infra/local-engines.ts (testcontainers run neither here).
    const temporalFile = join(dataDir, 't', 'run', 'temporal.pid');
    const natsFile = join(dataDir, 'run', 'nats-server.pid');
    expect(existsSync(temporalFile) && existsSync(natsFile)).toBe(true);
    const temporal = recordedPid(temporalFile);
    expect(new Set(threadNices(temporal))).toEqual(new Set([nice]));
    const group = autogroupNice(temporal);
    if (group !== undefined) expect(group).toBe(nice);
    const nats = recordedPid(natsFile);
    expect(new Set(threadNices(nats))).toEqual(new Set([0]));
    if (autogroupNice(nats) !== undefined) expect(autogroupNice(nats)).toBe(0);
  });
});
