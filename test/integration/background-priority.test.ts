// BACKGROUND_NICE under `npm start` (docs/configuration.md "Processes of `npm start`"): the
// stack of the integration run is the product as `npm start` runs it (the gateway process with
// the lifecycle and carrier role processes) on engines from infra/local-engines.ts. Each
// process is found through the pid files it is recorded in ($DATA_DIR/run), and every thread's
// nice value is read from /proc/<pid>/task/<tid>/stat (field 19).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../config';
import { autogroupNice, threadNice, threadNices } from '../../infra/priority';
import { readStackFile } from '../../infra/stack-file';
import { stack } from '../../support/stack';

function recordedPid(file: string): number {
  return (JSON.parse(readFileSync(file, 'utf8')) as { pid: number }).pid;
}

describe('CPU priority of the processes of `npm start` (BACKGROUND_NICE)', () => {
  const { productDataDir, dataDir, productEnv } = stack();
  const nice = loadConfig({ BACKGROUND_NICE: productEnv['BACKGROUND_NICE'] }).backgroundNice;
  const gateway = readStackFile(productDataDir)?.pid as number;

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
