// Reaping what an earlier run left behind (infra/supervisor.ts reapStale): after a kill -9 of
// `npm start`, its engines (own process groups) and role processes outlive it; the next start
// kills them and waits until they are gone and their ports are free before it checks its ports.
// Real processes, orphaned as after a kill -9 of their parent (started through a shell that
// exits), recorded in a run directory of the test's own.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../infra/logger';
import { ChildStartError, reapStale, recordProcess } from '../../infra/supervisor';
import { eventually } from '../../support/eventually';

const log = createLogger('fatal');
let runDir: string;
const started: number[] = [];

/** A `sleep` whose parent already exited (as an engine after a kill -9 of `npm start`); `group`: it leads its own process group. */
function orphan(group: boolean): number {
  const script = group ? 'setsid sleep 120 >/dev/null 2>&1 & echo $!' : 'sleep 120 >/dev/null 2>&1 & echo $!';
  const out = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
  const pid = Number(out.stdout.trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid from sh: ${out.stdout} ${out.stderr}`);
  started.push(pid);
  return pid;
}

/** Running, not a zombie (a zombie holds nothing; whoever adopted it reaps it in its own time). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Until the orphan has exec'd sleep (its command line is what gets recorded). */
async function execd(pid: number): Promise<void> {
  await eventually(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep'), { what: `pid ${pid} to run sleep`, timeoutMs: 5000, intervalMs: 10 });
}

beforeEach(() => {
  runDir = mkdtempSync(join(tmpdir(), 'reap-'));
});

afterEach(() => {
  for (const pid of started.splice(0)) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  rmSync(runDir, { recursive: true, force: true });
});

describe('reapStale (infra/supervisor.ts): what a killed run left behind', () => {
  test('kills the recorded engines and role processes and returns only once they are gone; the pid files are removed', async () => {
    const engine = orphan(true);
    const role = orphan(false);
    await Promise.all([execd(engine), execd(role)]);
    recordProcess(runDir, 'nats-server', engine, { group: true, ports: [] });
    recordProcess(runDir, 'role-carrier', role, { group: false });
    await reapStale(runDir, log);
    expect({ engine: running(engine), role: running(role) }).toEqual({ engine: false, role: false });
    expect(readdirSync(runDir)).toEqual([]);
  });

  test('waits for the recorded ports to be free, and fails naming the process, its pid and the port when one stays taken', async () => {
    const pid = orphan(true);
    await execd(pid);
    // The port stays taken by someone else after the recorded process is gone.
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      recordProcess(runDir, 'nats-server', pid, { group: true, ports: [port] });
      const failure = reapStale(runDir, log, 600);
      await expect(failure).rejects.toThrow(ChildStartError);
      await expect(failure).rejects.toThrow(new RegExp(`nats-server \\(pid ${pid}\\) \\(port ${port}\\).*port ${port} is still in use`));
      expect(running(pid)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a recorded pid now used by another process (another start time, another command) is left alone', async () => {
    const other = orphan(true);
    const alsoOther = orphan(false);
    await Promise.all([execd(other), execd(alsoOther)]);
    recordProcess(runDir, 'temporal', other, { group: true });
    const record = JSON.parse(readFileSync(join(runDir, 'temporal.pid'), 'utf8')) as { startTime: string };
    // The recorded process started at another time: its pid was reused by `other`.
    writeFileSync(join(runDir, 'temporal.pid'), JSON.stringify({ ...record, startTime: String(Number(record.startTime) - 1) }));
    // Same start time, another command line.
    recordProcess(runDir, 'role-lifecycle', alsoOther, { group: false });
    const lifecycle = JSON.parse(readFileSync(join(runDir, 'role-lifecycle.pid'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(runDir, 'role-lifecycle.pid'), JSON.stringify({ ...lifecycle, cmdline: 'node --import tsx main.ts --role=worker --role-process=lifecycle ' }));
    // A bare pid (earlier releases) whose command line does not name the child.
    writeFileSync(join(runDir, 'nats-server.pid'), String(other));
    await reapStale(runDir, log);
    expect({ other: running(other), alsoOther: running(alsoOther) }).toEqual({ other: true, alsoOther: true });
    expect(readdirSync(runDir)).toEqual([]);
  });

  test('a pid file of an earlier release (the bare pid) still reaps its engine, recognised by its name in the command line', async () => {
    const child = spawn('bash', ['-c', 'exec -a nats-server sleep 120'], { detached: true, stdio: 'ignore' });
    child.unref();
    const pid = child.pid as number;
    started.push(pid);
    await eventually(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('nats-server'), { what: `pid ${pid} to run as nats-server`, timeoutMs: 5000, intervalMs: 10 });
    writeFileSync(join(runDir, 'nats-server.pid'), String(pid));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await reapStale(runDir, log);
    expect(running(pid)).toBe(false);
    await exited;
  });

  test('a second start while the run that recorded them still runs stops nothing: it fails naming that run, and leaves its processes and pid files', async () => {
    const liveRun = orphan(false);
    const engine = orphan(true);
    const role = orphan(false);
    await Promise.all([execd(liveRun), execd(engine), execd(role)]);
    recordProcess(runDir, 'nats-server', engine, { group: true, ports: [], owner: liveRun });
    recordProcess(runDir, 'role-carrier', role, { group: false, owner: liveRun });
    const failure = reapStale(runDir, log);
    await expect(failure).rejects.toThrow(ChildStartError);
    await expect(failure).rejects.toThrow(new RegExp(`another run of the product \\(pid ${liveRun}\\) is using .*kill ${liveRun}.*another DATA_DIR`));
    expect({ engine: running(engine), role: running(role) }).toEqual({ engine: true, role: true });
    expect(readdirSync(runDir).sort()).toEqual(['nats-server.pid', 'role-carrier.pid']);
    // Once that run is gone (killed with -9: its children outlive it), the next start reaps them.
    process.kill(liveRun, 'SIGKILL');
    await eventually(() => !running(liveRun), { what: `pid ${liveRun} to exit`, timeoutMs: 5000, intervalMs: 10 });
    await reapStale(runDir, log);
    expect({ engine: running(engine), role: running(role) }).toEqual({ engine: false, role: false });
    expect(readdirSync(runDir)).toEqual([]);
  });

  test('no run directory (a first start): nothing to do', async () => {
    await expect(reapStale(join(runDir, 'absent'), log)).resolves.toBeUndefined();
  });
});
