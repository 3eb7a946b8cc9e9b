// BACKGROUND_NICE (docs/configuration.md "Processes of `npm start`"): the background processes
// of `npm start` (the lifecycle and carrier role processes, the embedded Temporal dev server)
// run at a lower CPU priority than the gateways, so that acceptance keeps the CPU under a burst.
// Real child processes; every thread's nice value is read from /proc/<pid>/task/<tid>/stat
// (field 19), the autogroup's from /proc/<pid>/autogroup.
import { mkdtempSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../config';
import { createLogger } from '../../infra/logger';
import { PriorityError, autogroupNice, lowerPriority, threadNices } from '../../infra/priority';
import { startRoleProcesses, type RoleProcesses } from '../../infra/role-processes';
import { Supervisor, processRunning as alive } from '../../infra/supervisor';
import { planProcesses, ROLES } from '../../roles/process-plan';
import { eventually } from '../../support/eventually';

const FIXTURE = join(__dirname, '..', 'support', 'role-process');
const CHILD = { script: join(FIXTURE, 'child.ts'), execArgv: ['--import', 'tsx'] };
const log = createLogger('fatal');
/** The nice value this (the gateways') process runs at: what a child not lowered has too. */
const OWN = getPriority(0);

/** A Node process with a worker thread besides V8's and libuv's: threads started before any parent could act. */
const THREADED = ['-e', "new (require('node:worker_threads').Worker)('setInterval(() => {}, 1000)', { eval: true }); setInterval(() => {}, 1000);"];

describe('BACKGROUND_NICE configuration (config/index.ts)', () => {
  test('default 10; 0 turns it off; any value from 0 to 19', () => {
    expect(loadConfig({}).backgroundNice).toBe(10);
    expect(loadConfig({ BACKGROUND_NICE: '0' }).backgroundNice).toBe(0);
    expect(loadConfig({ BACKGROUND_NICE: '19' }).backgroundNice).toBe(19);
  });

  test.each(['20', '-1', '-5'])('BACKGROUND_NICE=%s fails the start with an error naming the range', (value) => {
    expect(() => loadConfig({ BACKGROUND_NICE: value })).toThrow(ConfigError);
    expect(() => loadConfig({ BACKGROUND_NICE: value })).toThrow(`BACKGROUND_NICE must be a nice value from 0 (background processes at the gateways' priority) to 19 (lowest), got ${value}`);
  });

  test('a value that is no integer fails the start', () => {
    expect(() => loadConfig({ BACKGROUND_NICE: 'low' })).toThrow(/^invalid configuration: BACKGROUND_NICE must be integer$/);
  });

  test('npm start: the lifecycle and carrier role processes are background; the gateways stay in the parent', () => {
    const plan = planProcesses([...ROLES], { every: true, layout: 'split', child: false });
    expect(plan.children.map((c) => [c.name, c.background])).toEqual([['lifecycle', true], ['carrier', true]]);
    expect(plan.own).toContain('gateway-http');
    expect(plan.own).toContain('gateway-smpp');
  });
});

describe('processes a Supervisor starts (infra/supervisor.ts)', () => {
  let dir: string;
  let supervisor: Supervisor;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'priority-'));
    supervisor = new Supervisor(dir, log);
  });
  afterEach(async () => {
    await supervisor.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('an engine spawned with `nice` (the Temporal dev server)', () => {
    test('every thread of it, and the autogroup of the session it leads, run at that nice value', async () => {
      // Ready once its threads have started: those started after the lowering inherit it.
      await supervisor.start({ name: 'background-engine', command: process.execPath, args: THREADED, ready: () => Promise.resolve(threadNices(supervisor.pid('background-engine') ?? 0).length > 4), nice: 7 });
      const pid = supervisor.pid('background-engine') as number;
      const nices = threadNices(pid);
      // The main thread, V8's platform threads, libuv's, the worker: all of them.
      expect(nices.length).toBeGreaterThan(4);
      expect(new Set(nices)).toEqual(new Set([7]));
      // Without autogroup scheduling there is no file to read, and nothing else to set.
      const group = autogroupNice(pid);
      if (group !== undefined) expect(group).toBe(7);
      expect(getPriority(0)).toBe(OWN);
    });

    test('without `nice` (nats-server) it runs at this process\'s priority', async () => {
      await supervisor.start({ name: 'foreground-engine', command: process.execPath, args: THREADED, ready: () => Promise.resolve(true) });
      const pid = supervisor.pid('foreground-engine') as number;
      expect(new Set(threadNices(pid))).toEqual(new Set([OWN]));
    });
  });

  describe('lowerPriority (infra/priority.ts)', () => {
    test('lowers the threads a process already runs, not only the one whose id is the pid; never raises one', async () => {
      await supervisor.start({ name: 'running', command: process.execPath, args: THREADED, ready: () => Promise.resolve(threadNices(supervisor.pid('running') ?? 0).length > 4) });
      const pid = supervisor.pid('running') as number;
      expect(new Set(threadNices(pid))).toEqual(new Set([OWN]));
      lowerPriority(pid, 8, { ownSession: false });
      expect(new Set(threadNices(pid))).toEqual(new Set([8]));
      lowerPriority(pid, 3, { ownSession: false });
      expect(new Set(threadNices(pid))).toEqual(new Set([8]));
      expect(() => lowerPriority(pid, 0, { ownSession: false })).toThrow(PriorityError);
      expect(() => lowerPriority(pid, 20, { ownSession: false })).toThrow(PriorityError);
    });
  });
});

describe('a role process spawned with `nice` (infra/role-processes.ts: lifecycle, carrier)', () => {
  let children: RoleProcesses | undefined;
  afterEach(async () => {
    await children?.stop();
    children = undefined;
  });

  test('every thread at that nice value, also after it was killed and started again; the parent and its autogroup unchanged', async () => {
    const parentGroup = autogroupNice(process.pid);
    children = startRoleProcesses([{ name: 'background', roles: ['a'], env: {}, nice: 5 }, { name: 'foreground', roles: ['b'], env: {} }], CHILD, log);
    await children.ready;
    const [background, foreground] = children.pids as [number, number];
    expect(threadNices(background).length).toBeGreaterThan(4);
    expect(new Set(threadNices(background))).toEqual(new Set([5]));
    expect(new Set(threadNices(foreground))).toEqual(new Set([OWN]));
    // No thread of this process lowered (a jest worker that loaded chdb before also runs its MemoryWorker thread at -20).
    expect(threadNices(process.pid).filter((nice) => nice > OWN)).toEqual([]);
    // The role process shares this session's autogroup: lowering that would lower the gateways.
    expect(autogroupNice(process.pid)).toBe(parentGroup);

    process.kill(background, 'SIGKILL');
    const handle = children;
    const restarted = await eventually(() => handle.pids[0], { what: 'the background child restarted under a new pid', until: (p) => p !== undefined && p !== background && alive(p), timeoutMs: 10_000 }) as number;
    await handle.ready;
    expect(new Set(threadNices(restarted))).toEqual(new Set([5]));
  });
});
