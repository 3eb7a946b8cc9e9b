// BACKGROUND_NICE under `npm start` (docs/configuration.md "Processes of `npm start`"): a stack
// of its own (the shared one runs at BACKGROUND_NICE 0, test/support/global-setup.ts), the product
// as `npm start` runs it (the gateway process with the lifecycle and carrier role processes) on
// engines from infra/local-engines.ts, with BACKGROUND_NICE at its default. The gateway is the
// process the stack spawned, the others are found through the pid files they are recorded in
// ($DATA_DIR/run), and every thread's nice value is read from /proc/<pid>/task/<tid>/stat (field 19).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../config';
import { autogroupNice, threadNice, threadNices } from '../../infra/priority';
import { startStack, type RunningStack } from '../../support/stack';

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

  test('the gateway process (HTTP, SMPP) keeps its priority: its main thread at nice 0, no thread lowered', () => {
    expect(gateway).toBeGreaterThan(0);
    expect(threadNice(gateway, gateway)).toBe(0);
    // Embedded ClickHouse (chdb) raises its MemoryWorker thread to -20 itself.
    expect(threadNices(gateway).filter((n) => n > 0)).toEqual([]);
  });

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
