// Role processes (infra/role-processes.ts, PROCESS_LAYOUT=split): real child processes over the
// real IPC channel, with a fixture child that speaks the protocol (test/support/role-process).
// What `npm start` relies on: children ready before the gateways open, their metrics in the
// parent's /metrics, a crashed child started again, no child outliving its parent.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { AggregatorRegistry } from 'prom-client';
import { createLogger } from '../../infra/logger';
import { roleProcessRestarts } from '../../infra/metrics';
import { RoleProcessError, startRoleProcesses, type RoleProcesses } from '../../infra/role-processes';
import { processRunning as alive } from '../../infra/supervisor';
import { planProcesses, ROLES } from '../../roles/process-plan';
import { eventually } from '../../support/eventually';

const FIXTURE = join(__dirname, '..', 'support', 'role-process');
const TSX = ['--import', 'tsx'];
const CHILD = { script: join(FIXTURE, 'child.ts'), execArgv: TSX };
const log = createLogger('fatal');

describe('which roles run where (roles/process-plan.ts)', () => {
  test('npm start (every role, split): the worker and the carrier with the simulator each get a process; the gateways stay', () => {
    const plan = planProcesses([...ROLES], { every: true, layout: 'split', child: false });
    expect(plan.own).toEqual(['gateway-http', 'gateway-smpp', 'ingest-writer']);
    expect(plan.children).toEqual([{ name: 'lifecycle', roles: ['worker'], background: true }, { name: 'carrier', roles: ['carrier', 'simulator'], background: true }]);
    expect([...plan.own, ...plan.children.flatMap((c) => c.roles)].sort()).toEqual([...ROLES].sort());
  });

  test('PROCESS_LAYOUT=single, a --role selection, or a role process itself: no children', () => {
    expect(planProcesses([...ROLES], { every: true, layout: 'single', child: false })).toEqual({ own: ROLES, children: [] });
    expect(planProcesses(['worker', 'carrier'], { every: false, layout: 'split', child: false })).toEqual({ own: ['worker', 'carrier'], children: [] });
    expect(planProcesses([...ROLES], { every: true, layout: 'split', child: true }).children).toEqual([]);
  });
});

describe('role processes (infra/role-processes.ts)', () => {
  let children: RoleProcesses | undefined;
  afterEach(async () => {
    await children?.stop();
    children = undefined;
  });

  test('children start, answer metrics (their JSON aggregates into one exposition), and stop', async () => {
    children = startRoleProcesses([
      { name: 'one', roles: ['a'], env: {} },
      { name: 'two', roles: ['b'], env: {} },
    ], CHILD, log);
    await children.ready;
    const pids = children.pids.filter((p): p is number => p !== undefined);
    expect(new Set(pids).size).toBe(2);
    const peers = await children.metrics();
    expect(peers.map((p) => p.text).sort()).toEqual(['# fixture exporter of a\n', '# fixture exporter of b\n']);
    const text = await AggregatorRegistry.aggregate(peers.map((p) => p.json)).metrics();
    expect(text).toContain('fixture_events_total{role="a"} 2');
    expect(text).toContain('fixture_events_total{role="b"} 2');
    await children.stop();
    await eventually(() => pids.every((p) => !alive(p)), { what: 'every child process gone', timeoutMs: 5000 });
  });

  test('a child killed with -9 is started again and answers', async () => {
    children = startRoleProcesses([{ name: 'crashy', roles: ['a'], env: {} }], CHILD, log);
    await children.ready;
    const first = children.pids[0] as number;
    const probe = children.probes['process:crashy'] as () => Promise<number>;
    expect(await probe()).toBeGreaterThanOrEqual(0);
    const restartsBefore = (await roleProcessRestarts.get()).values.find((v) => v.labels['process'] === 'crashy')?.value ?? 0;
    process.kill(first, 'SIGKILL');
    const handle = children;
    // Between the kill and the restart (0.5 s later) /health names the exit.
    const why = await eventually(() => probe().then(() => '', (err: unknown) => (err instanceof Error ? err.message : String(err))), {
      what: 'the probe to name the exit', until: (message) => message.includes('not running'), timeoutMs: 900, intervalMs: 20,
    });
    expect(why).toMatch(/^the crashy process is not running: it exited \(SIGKILL\) \d+ s ago and is being started again$/);
    await eventually(() => handle.pids[0] !== undefined && handle.pids[0] !== first && alive(handle.pids[0]), { what: 'the child restarted under a new pid', timeoutMs: 10_000 });
    const answered = await eventually(async () => (await handle.metrics()).length, { what: 'the restarted child to answer for its metrics', until: (n) => n > 0, timeoutMs: 10_000, intervalMs: 100 });
    expect(answered).toBe(1);
    expect(await probe()).toBeGreaterThanOrEqual(0);
    expect((await roleProcessRestarts.get()).values.find((v) => v.labels['process'] === 'crashy')?.value).toBe(restartsBefore + 1);
  });

  test('a child that keeps exiting right after it is ready is restarted giveUpAfter times, then given up on, naming it', async () => {
    const gaveUp: Error[] = [];
    const restart = { initialDelayMs: 50, maxDelayMs: 100, stableMs: 60_000, giveUpAfter: 2 };
    const restartsBefore = (await roleProcessRestarts.get()).values.find((v) => v.labels['process'] === 'crashing')?.value ?? 0;
    children = startRoleProcesses([{ name: 'crashing', roles: ['crash'], env: {} }], CHILD, log, { restart, onGiveUp: (err) => gaveUp.push(err) });
    await children.ready;
    await eventually(() => gaveUp.length, { what: 'the give-up', until: (n) => n > 0, timeoutMs: 20_000, intervalMs: 20 });
    expect(gaveUp.map((e) => [e.name, e.message])).toEqual([['RoleProcessError',
      'the crashing process (roles crash) keeps exiting: it was started again 2 times in a row and exited each time within 60 s (last: code 4); not starting it again, stopping. Its log lines above say why (an engine it cannot reach, a port taken, a configuration it refuses)']]);
    expect((await roleProcessRestarts.get()).values.find((v) => v.labels['process'] === 'crashing')?.value).toBe(restartsBefore + 2);
    const probe = children.probes['process:crashing'] as () => Promise<number>;
    await expect(probe()).rejects.toThrow(/^the crashing process is not running: it exited \(code 4\) \d+ s ago and kept exiting after each restart: given up$/);
    // Not started again: no child appears after the give-up (the restarted ones were waited for above).
    const pid = children.pids[0] as number;
    expect(alive(pid)).toBe(false);
  });

  test('a child that exits during start-up fails the start with an error naming it', async () => {
    await expect(startRoleProcesses([{ name: 'broken', roles: ['fail'], env: {} }], CHILD, log).ready)
      .rejects.toThrow(new RoleProcessError('the broken process (roles fail) exited during start-up (code 3); see its log lines above'));
  });

  test('a child does not outlive a parent killed with -9', async () => {
    const parent = spawn(process.execPath, [...TSX, join(FIXTURE, 'parent.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
      });
      parent.once('exit', () => reject(new Error(`the fixture parent exited early: ${out}`)));
    });
    const child = (JSON.parse(line) as { child: number }).child;
    expect(alive(child)).toBe(true);
    parent.kill('SIGKILL');
    await eventually(() => !alive(child), { what: 'the child process gone', timeoutMs: 5000 });
  });
});
