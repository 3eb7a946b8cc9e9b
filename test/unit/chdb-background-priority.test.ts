// BACKGROUND_NICE inside the process that holds the embedded ClickHouse (docs/configuration.md
// "Processes of `npm start`"): chdb's background threads (merges, schedule pools) are lowered by
// name (infra/priority.ts isChdbBackgroundThread, infra/chdb-background.ts), its query threads
// are not; the history writer's inserts carry `os_thread_priority` as statement settings on the
// in-process engine only (stores/insert-rows.ts). Real child processes whose threads name
// themselves as ClickHouse's do; each thread's nice value is read from
// /proc/<pid>/task/<tid>/stat (field 19).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClickHouse } from '../../infra/clickhouse';
import { lowerChdbBackgroundThreads } from '../../infra/chdb-background';
import { createLogger } from '../../infra/logger';
import { readFileSync } from 'node:fs';
import { PriorityError, isChdbBackgroundThread, isChdbQueryPoolThread, lowerThreads, restoreThreads, threadName, threadNice, threadNices } from '../../infra/priority';
import { Supervisor } from '../../infra/supervisor';
import { backgroundInsertSettings, insertJsonRows } from '../../stores/insert-rows';
import { eventually } from '../../support/eventually';

const log = createLogger('fatal');
const OWN = getPriority(0);

describe('which threads of chdb are background work (isChdbBackgroundThread)', () => {
  test.each([
    'MergeMutate', 'Fetch', 'Move', 'Common', 'BgSchPool', 'BgBufSchPool', 'BgMBSchPool', 'BgDistSchPool', 'BgStrmSchPool', 'PoolDelayExec', 'MergeMutate\n',
  ])('%j is lowered: no request waits for it', (name) => {
    expect(isChdbBackgroundThread(name)).toBe(true);
  });

  test.each([
    // Query threads: the user's reads run there too (the writers lower theirs per statement).
    'ThreadPool', 'QueryPipelineEx', 'QueryPullPipeEx', 'Collector',
    // ClickHouse keeps its memory accounting current from it, at -20 on purpose.
    'MemoryWorker',
    // Node's own: the event loop, libuv's pool (chdb's queries), V8's.
    'MainThread', 'node', 'libuv-worker', 'V8Worker', 'DelayedTaskSche', 'SignalInspector',
    '', 'mergemutate', 'MergeMutateX',
  ])('%j is left as it is', (name) => {
    expect(isChdbBackgroundThread(name)).toBe(false);
  });
});

/**
 * A Node process whose worker threads name themselves (a thread's comm can only be written from
 * its own process) as ClickHouse names its threads: one per argument, and one more named
 * BgStrmSchPool on SIGUSR2 (a pool ClickHouse starts later).
 */
const NAMED = ['-e', [
  "const { Worker } = require('node:worker_threads');",
  "const named = (name) => new Worker(`require('node:fs').writeFileSync('/proc/thread-self/comm', ${JSON.stringify(name)}); setInterval(() => {}, 1000);`, { eval: true });",
  'for (const name of process.argv.slice(1)) named(name);',
  "process.on('SIGUSR2', () => named('BgStrmSchPool'));",
  'setInterval(() => {}, 1000);',
].join('\n')];

/** The threads of `pid` named `name`. */
function named(pid: number, name: string): number[] {
  return readdirSync(`/proc/${pid}/task`).map(Number).filter((tid) => threadName(pid, tid) === name);
}

describe('lowering threads by name (lowerThreads, lowerChdbBackgroundThreads)', () => {
  let dir: string;
  let supervisor: Supervisor;
  let pid: number;
  const NAMES = ['MergeMutate', 'BgSchPool', 'ThreadPool', 'Move'];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chdb-priority-'));
    supervisor = new Supervisor(dir, log);
    const ready = (): Promise<boolean> => Promise.resolve(NAMES.every((name) => named(supervisor.pid('named') ?? 0, name).length === 1));
    await supervisor.start({ name: 'named', command: process.execPath, args: [...NAMED, ...NAMES], ready });
    pid = supervisor.pid('named') as number;
  });
  afterEach(async () => {
    await supervisor.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });
  const one = (name: string): number => named(pid, name)[0] as number;

  test('only the threads named as background are set; the others, the main thread among them, keep their priority; none raised', () => {
    setPriority(one('Move'), 15);
    expect(lowerThreads(pid, 10, isChdbBackgroundThread)).toBe(2);
    expect(threadNice(pid, one('MergeMutate'))).toBe(10);
    expect(threadNice(pid, one('BgSchPool'))).toBe(10);
    expect(threadNice(pid, one('Move'))).toBe(15);
    expect(threadNice(pid, one('ThreadPool'))).toBe(OWN);
    expect(threadNice(pid, pid)).toBe(OWN);
    expect(threadNices(pid).filter((n) => n === 10)).toHaveLength(2);
    // Nothing left to do the second time.
    expect(lowerThreads(pid, 10, isChdbBackgroundThread)).toBe(0);
    expect(() => lowerThreads(pid, 0, isChdbBackgroundThread)).toThrow(PriorityError);
    expect(() => lowerThreads(pid, 20, isChdbBackgroundThread)).toThrow(PriorityError);
  });

  test('an idle query-pool thread found lowered (started from a lowered thread) is set back to the process priority, where raising is permitted', () => {
    setPriority(one('ThreadPool'), 10);
    // Raising a priority needs CAP_SYS_NICE (bit 23 of CapEff).
    const capEff = /CapEff:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
    const permitted = (BigInt(`0x${capEff}`) & (1n << 23n)) !== 0n;
    const running = lowerChdbBackgroundThreads({ nice: 10, log, pid, everyMs: 60_000 });
    void running.stop();
    expect(threadNice(pid, one('ThreadPool'))).toBe(permitted ? OWN : 10);
    expect(threadNice(pid, one('MergeMutate'))).toBe(10);
    expect(restoreThreads(pid, OWN, isChdbQueryPoolThread)).toBe(permitted ? 0 : 'not permitted');
    // Only that name: a lowered background thread stays lowered.
    expect(threadNice(pid, one('BgSchPool'))).toBe(10);
    expect([isChdbQueryPoolThread('ThreadPool'), isChdbQueryPoolThread('QueryPipelineEx'), isChdbQueryPoolThread('MergeMutate')]).toEqual([true, false, false]);
  });

  test('a background thread started later is lowered on a later look; stop ends the looking', async () => {
    const running = lowerChdbBackgroundThreads({ nice: 9, log, pid, everyMs: 50 });
    try {
      // At once, before the first interval.
      expect(threadNice(pid, one('MergeMutate'))).toBe(9);
      expect(threadNice(pid, one('ThreadPool'))).toBe(OWN);
      process.kill(pid, 'SIGUSR2');
      await eventually(() => expect(named(pid, 'BgStrmSchPool').map((tid) => threadNice(pid, tid))).toEqual([9]), { what: 'the pool started later at nice 9', timeoutMs: 5_000 });
      expect(threadNice(pid, pid)).toBe(OWN);
    } finally {
      await running.stop();
    }
    expect(running.scan()).toBe(0);
  });
});

describe('the history writer\'s inserts (stores/insert-rows.ts)', () => {
  const rows = [{ id: 'a', n: 1 }, { id: 'b', n: 2 }];
  function fakeClickHouse(inProcess: boolean): { ch: ClickHouse; raw: unknown[][]; client: unknown[] } {
    const raw: unknown[][] = [];
    const client: unknown[] = [];
    const ch = {
      client: { insert: (params: unknown) => { client.push(params); return Promise.resolve(); } },
      table: (name: string) => `\`db\`.\`${name}\``,
      ...(inProcess ? { insertRaw: (...args: unknown[]) => { raw.push(args); return Promise.resolve(); } } : {}),
    } as unknown as ClickHouse;
    return { ch, raw, client };
  }

  test('BACKGROUND_NICE → os_thread_priority; 0 → no settings', () => {
    expect(backgroundInsertSettings(10)).toEqual({ os_thread_priority: 10 });
    expect(backgroundInsertSettings(0)).toBeUndefined();
  });

  test('on the in-process engine the settings are the statement\'s own (insertRaw, JSONEachRow)', async () => {
    const { ch, raw, client } = fakeClickHouse(true);
    await insertJsonRows(ch, 'sms_transitions', rows, { os_thread_priority: 10 });
    expect(client).toEqual([]);
    expect(raw).toHaveLength(1);
    const [name, body, format, settings] = raw[0] as [string, Buffer, string, unknown];
    expect([name, format, settings]).toEqual(['sms_transitions', 'JSONEachRow', { os_thread_priority: 10 }]);
    expect(body.toString('utf8').split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(rows);
  });

  test('without settings, or on a server or another process\'s engine: through the client, no settings (never a session SET)', async () => {
    const inProcess = fakeClickHouse(true);
    await insertJsonRows(inProcess.ch, 'lookups', rows);
    expect(inProcess.raw).toEqual([]);
    expect(inProcess.client).toEqual([{ table: '`db`.`lookups`', values: rows, format: 'JSONEachRow' }]);
    const elsewhere = fakeClickHouse(false);
    await insertJsonRows(elsewhere.ch, 'lookups', rows, { os_thread_priority: 10 });
    expect(elsewhere.client).toEqual([{ table: '`db`.`lookups`', values: rows, format: 'JSONEachRow' }]);
  });

  test('no rows, no statement', async () => {
    const { ch, raw, client } = fakeClickHouse(true);
    await insertJsonRows(ch, 'lookups', [], { os_thread_priority: 10 });
    expect([raw, client]).toEqual([[], []]);
  });
});
