// Runs the embedded engines (nats-server, the Temporal dev server) as child processes of
// `npm start` and of the test stack: waits until each answers, forwards their output to the
// structured log, and stops them all (SIGTERM, then SIGKILL) on shutdown. With a restart policy
// (`npm start`: roles/engines.ts), an engine that exits on its own after it was ready is started
// again on the same ports and data directory after a doubling delay (infra/restart-policy.ts),
// and one that keeps exiting makes it give up: it stops the others and tells its owner, which
// stops the stack. A stop (stopAll) starts nothing again. Pid files in
// $DATA_DIR/run let the next start clean up children left behind by a kill -9 of the parent
// (reapStale): the engines here and the role processes (infra/role-processes.ts) record there
// what identifies them (pid, start time, command line) and the ports they hold.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join } from 'node:path';
import type { Logger } from './logger';
import { lowerPriority } from './priority';
import { INITIAL_RESTART_STATE, decideRestart, giveUpMessage, type RestartPolicy, type RestartState } from './restart-policy';

export interface ChildSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Resolves true once the child serves requests. */
  readonly ready: () => Promise<boolean>;
  readonly readyTimeoutMs?: number;
  /** Added to this process's environment for the child. */
  readonly env?: Readonly<Record<string, string>>;
  /** The ports it listens on: a next start that reaps it waits for them too, and names them. */
  readonly ports?: readonly number[];
  /** A lower CPU priority for it (nice 1-19, every thread and its session's autogroup; infra/priority.ts); 0 or unset: as this process. */
  readonly nice?: number;
  /** What to check when it keeps exiting (ends the give-up's message: "Check <hint>."). */
  readonly hint?: string;
}

export class ChildStartError extends Error {
  override readonly name = 'ChildStartError';
}

/** A child that kept exiting soon after each restart: the supervisor gave up on it (and stopped the others). */
export class ChildGaveUpError extends Error {
  override readonly name = 'ChildGaveUpError';
}

export interface SupervisorOptions {
  /**
   * A child that exits on its own after it was ready is started again (same command, ports and
   * data directory) after this policy's delay (infra/restart-policy.ts); unset: it is only logged.
   */
  readonly restart?: RestartPolicy;
  /** With `restart`: called once when the policy gives up on a child, after the other children were stopped. */
  readonly onGiveUp?: (err: ChildGaveUpError) => void;
}

/** Why a child is not running, while the supervisor starts it again (or gave up). */
interface Down {
  readonly since: number;
  /** How it last ended: `code 1`, `SIGKILL`, or why it did not come up. */
  readonly how: string;
  readonly attempt: number;
  readonly dueAt: number;
  readonly gaveUp: boolean;
}

interface Running {
  readonly spec: ChildSpec;
  child: ChildProcess;
  exited: Promise<void>;
  /** When the current child was spawned. */
  startedAt: number;
  /** Its last 20 output lines. */
  tail: string[];
  /** Set when the command could not be spawned (ENOENT, EACCES). */
  spawnError: Error | undefined;
  restart: RestartState;
  down: Down | undefined;
  timer: NodeJS.Timeout | undefined;
}

export class Supervisor {
  private readonly running: Running[] = [];
  private readonly runDir: string;
  private stopping = false;

  constructor(dataDir: string, private readonly log: Logger, private readonly options: SupervisorOptions = {}) {
    this.runDir = join(dataDir, 'run');
    mkdirSync(this.runDir, { recursive: true });
  }

  /** The pid of the running child named `name` (a benchmark reads its CPU time from /proc). */
  pid(name: string): number | undefined {
    return this.running.find((r) => r.spec.name === name)?.child.pid;
  }

  /**
   * Undefined while the child named `name` runs (or is unknown); otherwise why it does not, for
   * /health: how it ended, how long ago, and its restart (or that the supervisor gave up).
   */
  whyDown(name: string): string | undefined {
    const down = this.running.find((r) => r.spec.name === name)?.down;
    if (!down) return undefined;
    const ago = `${Math.round((Date.now() - down.since) / 1000)} s ago`;
    if (down.gaveUp) return `the embedded ${name} exited (${down.how}) ${ago} and kept exiting after each restart: given up, the stack is stopping`;
    const wait = down.dueAt - Date.now();
    const limit = this.options.restart?.giveUpAfter;
    return `the embedded ${name} exited (${down.how}) ${ago}; restart ${down.attempt}${limit ? ` of ${limit}` : ''} ${wait > 0 ? `in ${(wait / 1000).toFixed(1)} s` : 'under way'}`;
  }

  async start(spec: ChildSpec): Promise<void> {
    this.stopping = false;
    const entry: Running = { spec, ...this.spawn(spec), restart: INITIAL_RESTART_STATE, down: undefined, timer: undefined };
    // Kept from its spawn on: stopAll stops a child still starting.
    this.running.push(entry);
    await this.untilReady(entry);
  }

  /** Spawns `spec`'s child, its output kept (the last 20 lines) and logged, its pid recorded. */
  private spawn(spec: ChildSpec): Pick<Running, 'child' | 'exited' | 'startedAt' | 'tail' | 'spawnError'> {
    const tail: string[] = [];
    // Own process group: a terminal's Ctrl-C reaches only us, and we stop the engines after
    // the roles that use them (reapStale covers a parent killed with -9).
    const child = spawn(spec.command, spec.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...spec.env } });
    const spawned = { child, tail, startedAt: Date.now(), exited: new Promise<void>((resolve) => child.once('exit', () => resolve())), spawnError: undefined as Error | undefined };
    const remember = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        this.log.debug({ child: spec.name }, line);
      }
    };
    child.stdout?.on('data', remember);
    child.stderr?.on('data', remember);
    child.once('error', (err) => { spawned.spawnError = err; });
    if (child.pid !== undefined) recordProcess(this.runDir, spec.name, child.pid, { group: true, ports: spec.ports ?? [] });
    if (child.pid !== undefined && spec.nice) lowerChildPriority(child.pid, spec.nice, { ownSession: true, name: spec.name }, this.log);
    return spawned;
  }

  /** Waits until the entry's child is ready; throws ChildStartError when it exits first or stays unready. */
  private async untilReady(entry: Running): Promise<void> {
    const { spec, child, tail } = entry;
    const deadline = Date.now() + (spec.readyTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      const spawnError = entry.spawnError;
      if (spawnError) throw new ChildStartError(`${spec.name} could not start (${spec.command}): ${spawnError.message}. Run \`npm run bootstrap\` to build it.`);
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new ChildStartError(`${spec.name} exited with ${child.signalCode ?? `code ${child.exitCode}`} during start-up:\n${tail.join('\n')}`);
      }
      // Ready, and not exited while the probe ran (its exit would go unseen by the handler below).
      if (await spec.ready().catch(() => false) && child.exitCode === null && child.signalCode === null) {
        this.log.info({ child: spec.name, pid: child.pid }, 'engine ready');
        child.once('exit', (code, signal) => this.exitedAfterReady(entry, child, code, signal));
        return;
      }
      await sleep(150);
    }
    throw new ChildStartError(`${spec.name} did not become ready within ${(spec.readyTimeoutMs ?? 60_000) / 1000} s:\n${tail.join('\n')}`);
  }

  private exitedAfterReady(entry: Running, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || entry.child !== child) return;
    const policy = this.options.restart;
    const ranMs = Date.now() - entry.startedAt;
    if (!policy) {
      this.log.error({ child: entry.spec.name, code, signal, lastLines: [...entry.tail] }, 'engine exited unexpectedly');
      return;
    }
    this.restartLater(entry, policy, ranMs, signal ?? `code ${code}`, { code, signal, lastLines: [...entry.tail] });
  }

  /** Decides (infra/restart-policy.ts) and logs what follows an exit: a restart after a delay, or the give-up. */
  private restartLater(entry: Running, policy: RestartPolicy, ranMs: number, how: string, details: Record<string, unknown>): void {
    const { name } = entry.spec;
    const decision = decideRestart(entry.restart, ranMs, policy);
    entry.restart = decision.state;
    const since = entry.down?.since ?? Date.now();
    if (decision.action === 'give-up') {
      entry.down = { since, how, attempt: decision.restarts, dueAt: Date.now(), gaveUp: true };
      void this.giveUp(entry, policy, decision.restarts, how, details);
      return;
    }
    entry.down = { since, how, attempt: decision.attempt, dueAt: Date.now() + decision.delayMs, gaveUp: false };
    this.log.error({ child: name, pid: entry.child.pid, ...details, ranMs, restart: { attempt: decision.attempt, of: policy.giveUpAfter, inMs: decision.delayMs } },
      'engine exited unexpectedly; starting it again');
    entry.timer = setTimeout(() => void this.relaunch(entry, policy, decision.attempt), decision.delayMs);
  }

  private async relaunch(entry: Running, policy: RestartPolicy, attempt: number): Promise<void> {
    entry.timer = undefined;
    if (this.stopping) return;
    try {
      Object.assign(entry, this.spawn(entry.spec));
      await this.untilReady(entry);
      entry.down = undefined;
      this.log.info({ child: entry.spec.name, pid: entry.child.pid, attempt }, 'engine started again');
    } catch (err) {
      if (this.stopping) return;
      // Not ready in time: still running, holding its ports.
      await this.kill(entry, 'SIGKILL');
      const reason = (err instanceof Error ? err.message.split('\n')[0] ?? err.message : String(err)).replace(/:$/, '');
      // A start that failed counts as a quick exit, however long it took to fail.
      this.restartLater(entry, policy, 0, reason, { lastLines: [...entry.tail] });
    }
  }

  private async giveUp(entry: Running, policy: RestartPolicy, restarts: number, how: string, details: Record<string, unknown>): Promise<void> {
    const { name, hint } = entry.spec;
    const err = new ChildGaveUpError(`${giveUpMessage(`the embedded ${name}`, restarts, policy, how)}${hint ? ` Check ${hint}.` : ''} Its last output lines are in the log (lastLines).`);
    this.log.fatal({ child: name, restarts, ...details }, err.message);
    await this.stopAll();
    this.options.onGiveUp?.(err);
  }

  /** Sends `signal` to the entry's child (its group) if it still runs, and waits for its exit. */
  private async kill(entry: Running, signal: NodeJS.Signals): Promise<void> {
    const { child, exited } = entry;
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
    await exited;
  }

  async stopAll(timeoutMs = 8000): Promise<void> {
    this.stopping = true;
    for (const entry of this.running) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = undefined;
    }
    // Reverse start order: Temporal before NATS, so nothing depends on a stopped engine.
    for (const entry of [...this.running].reverse()) {
      const { spec, child, exited } = entry;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        // The fallback timer is cleared on exit: left pending, it kept the stopping process alive for its full length.
        const stopped = await new Promise<boolean>((resolve) => {
          const fallback = setTimeout(() => resolve(false), timeoutMs);
          void exited.then(() => {
            clearTimeout(fallback);
            resolve(true);
          });
        });
        if (!stopped) {
          this.log.warn({ child: spec.name }, 'engine ignored SIGTERM; killing');
          child.kill('SIGKILL');
          await exited;
        }
      }
      rmSync(join(this.runDir, `${spec.name}.pid`), { force: true });
    }
    this.running.length = 0;
  }
}

/**
 * Lowers the CPU priority of a child this process started (infra/priority.ts); when the system
 * refuses (EACCES, EPERM: no CAP_SYS_NICE in a container, a seccomp profile), says so and goes
 * on: the child runs at this process's priority.
 */
export function lowerChildPriority(pid: number, nice: number, options: { readonly ownSession: boolean; readonly name: string }, log: Logger): void {
  try {
    lowerPriority(pid, nice, options);
  } catch (err) {
    log.warn({ err, child: options.name, pid, nice }, 'could not lower the CPU priority of a background process; it runs at the priority of its parent');
  }
}

/** What a pid file in $DATA_DIR/run says about a process started by an earlier run. */
interface PidRecord {
  readonly pid: number;
  /** /proc/<pid>/stat's start time (clock ticks after boot): a reused pid has another. */
  readonly startTime: string;
  readonly cmdline: string;
  /** It leads its own process group (the engines: spawned detached); killed as a group. */
  readonly group: boolean;
  readonly ports: readonly number[];
  /** The run that started it (its main process): while that runs, the process is not left behind. */
  readonly owner?: { readonly pid: number; readonly startTime: string };
}

/** A reaped process still alive this long after its SIGKILL fails the start, naming it. */
export const REAP_TIMEOUT_MS = 10_000;

/**
 * Records a process this one started in `runDir`/<name>.pid, so that a next start after a
 * kill -9 of this one can find it, tell it from an unrelated process that got its pid since,
 * and stop it. Written after spawn, which returns once the child has exec'd its command.
 */
export function recordProcess(runDir: string, name: string, pid: number, options: { group: boolean; ports?: readonly number[]; owner?: number }): void {
  const ownerPid = options.owner ?? process.pid;
  const record: PidRecord = {
    pid, startTime: readStartTime(pid) ?? '', cmdline: readCmdline(pid) ?? '', group: options.group, ports: options.ports ?? [],
    owner: { pid: ownerPid, startTime: readStartTime(ownerPid) ?? '' },
  };
  writeFileSync(join(runDir, `${name}.pid`), `${JSON.stringify(record)}\n`);
}

/** Removes `runDir`/<name>.pid if it still records `pid` (a restarted process may have replaced it). */
export function forgetProcess(runDir: string, name: string, pid: number): void {
  const file = join(runDir, `${name}.pid`);
  if (readRecord(file, name)?.pid === pid) rmSync(file, { force: true });
}

/**
 * Stops the processes recorded in `runDir` by an earlier run that are still alive: only a live
 * process whose start time and command line are those recorded (a pid reused by an unrelated
 * process since is left alone), SIGKILL to it (its process group for the engines), then waits,
 * bounded, until it is gone and its recorded ports are free: an engine's port is checked right
 * after. Fails naming the pid and the ports when one is still there after `timeoutMs`.
 */
export async function reapStale(runDir: string, log: Logger, timeoutMs = REAP_TIMEOUT_MS): Promise<void> {
  if (!existsSync(runDir)) return;
  const found = readdirSync(runDir).filter((f) => f.endsWith('.pid')).map((file) => {
    const name = file.replace(/\.pid$/, '');
    const record = readRecord(join(runDir, file), name);
    return { file, name, record: record && isRecorded(record) ? record : undefined };
  });
  // A run still alive owns what it recorded: a second start on the same data directory must not take its engines away.
  for (const { name, record } of found) {
    const owner = record?.owner;
    if (record && owner && owner.pid !== process.pid && processRunning(owner.pid, owner.startTime)) {
      throw new ChildStartError(`another run of the product (pid ${owner.pid}) is using ${dirname(runDir)}: its ${name} is pid ${record.pid}. Stop it first (Ctrl-C where it runs, or kill ${owner.pid}), or start this one with another DATA_DIR`);
    }
  }
  const killed: Array<{ readonly name: string; readonly record: PidRecord }> = [];
  for (const { file, name, record } of found) {
    if (record) {
      log.warn({ pid: record.pid, child: name, ports: record.ports }, 'stopping a process left behind by an earlier run');
      kill(record, 'SIGKILL');
      killed.push({ name, record });
    }
    rmSync(join(runDir, file), { force: true });
  }
  const deadline = Date.now() + timeoutMs;
  for (const { name, record } of killed) {
    for (;;) {
      // Not isRecorded: an exiting process's command line reads empty before it has exited.
      const gone = !processRunning(record.pid, record.startTime);
      const held = gone ? await firstOpen(record.ports) : undefined;
      if (gone && held === undefined) break;
      if (Date.now() > deadline) {
        const ports = record.ports.length > 0 ? ` (port ${record.ports.join(', ')})` : '';
        const what = gone ? `its port ${held} is still in use after it exited` : 'it is still running';
        throw new ChildStartError(`${name} (pid ${record.pid})${ports}, left behind by an earlier run in ${runDir}, was sent SIGKILL but ${what} ${timeoutMs / 1000} s later: stop it (kill -9 ${record.pid}) and start again`);
      }
      await sleep(50);
    }
    log.info({ pid: record.pid, child: name }, 'process left behind by an earlier run stopped');
  }
}

/** The record of a pid file: JSON, or the bare pid earlier releases wrote (recognised by its name in the command line). */
function readRecord(file: string, name: string): PidRecord | undefined {
  let text: string;
  try { text = readFileSync(file, 'utf8').trim(); } catch { return undefined; }
  if (/^\d+$/.test(text)) {
    const pid = Number(text);
    const cmdline = readCmdline(pid);
    const startTime = readStartTime(pid);
    // No start time was recorded: the command line naming the child is all there is to check.
    return cmdline?.includes(name) && startTime ? { pid, startTime, cmdline, group: true, ports: [] } : undefined;
  }
  try {
    const record = JSON.parse(text) as Partial<PidRecord>;
    if (typeof record.pid !== 'number' || !Number.isInteger(record.pid) || record.pid <= 0 || typeof record.startTime !== 'string' || record.startTime === '' || typeof record.cmdline !== 'string') return undefined;
    const owner = record.owner !== undefined && Number.isInteger(record.owner.pid) && record.owner.pid > 0 && typeof record.owner.startTime === 'string' && record.owner.startTime !== ''
      ? { owner: { pid: record.owner.pid, startTime: record.owner.startTime } } : {};
    return { pid: record.pid, startTime: record.startTime, cmdline: record.cmdline, group: record.group === true, ports: Array.isArray(record.ports) ? record.ports.filter((p) => Number.isInteger(p)) : [], ...owner };
  } catch {
    return undefined;
  }
}

/** The recorded process is alive and still itself: same start time and command line, not a zombie (which holds nothing). */
function isRecorded(record: PidRecord): boolean {
  const stat = readStat(record.pid);
  return stat !== undefined && stat.state !== 'Z' && stat.startTime === record.startTime && readCmdline(record.pid) === record.cmdline;
}

function kill(record: PidRecord, signal: NodeJS.Signals): void {
  // A group leader's group: what it started goes too. Checked to be the recorded process just before.
  if (record.group) {
    try {
      process.kill(-record.pid, signal);
      return;
    } catch { /* not a group leader: the process alone */ }
  }
  try { process.kill(record.pid, signal); } catch { /* already gone */ }
}

async function firstOpen(ports: readonly number[]): Promise<number | undefined> {
  for (const port of ports) if (await portOpen(port)) return port;
  return undefined;
}

/** State and start time from /proc/<pid>/stat (fields 3 and 22; the command name, field 2, may hold spaces and parentheses). */
function readStat(pid: number): { state: string; startTime: string } | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  let stat: string;
  try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return undefined; }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTime = fields[19];
  return state && startTime ? { state, startTime } : undefined;
}

function readStartTime(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/** This process's start time (/proc/<pid>/stat), to record beside its pid: a reused pid has another. */
export const processStartTime = (pid: number): string | undefined => readStartTime(pid);

/**
 * Whether `pid` runs (a zombie holds nothing, so it does not) and, when `startTime` is given, is
 * still the process that was recorded with it rather than another that got the pid since.
 */
export function processRunning(pid: number, startTime?: string): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && (startTime === undefined || stat.startTime === startTime);
}

function readCmdline(pid: number): string | undefined {
  const path = `/proc/${pid}/cmdline`;
  if (!Number.isInteger(pid) || pid <= 0 || !existsSync(path)) return undefined;
  try { return readFileSync(path, 'utf8').replace(/\0/g, ' '); } catch { return undefined; }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True when something accepts TCP connections on host:port. */
export function portOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    const done = (open: boolean): void => { socket.destroy(); resolve(open); };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
