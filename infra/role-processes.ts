// Role processes: children of `npm start` that run some roles of the product in a Node
// process of their own (PROCESS_LAYOUT=split, docs/decisions.md), so that the lifecycle and the
// carrier use the machine's other core instead of sharing the gateways' event loop. Each child
// runs main.ts with its roles and an IPC channel to the parent: it says when it is ready,
// answers metrics requests (the parent's /metrics covers every process), and stops when the
// parent asks or when the channel closes (the parent exited, even by kill -9). A child that
// exits on its own is started again after a doubling delay (infra/restart-policy.ts); one that
// keeps exiting is given up on, and the parent is told (main.ts stops the stack). Each child is recorded in the parent's
// $DATA_DIR/run (role-<name>.pid): a child still stopping after its parent was killed with -9
// (it holds the simulator's port, its NATS and Temporal connections) is reaped by the next
// start before it checks its ports (infra/supervisor.ts reapStale).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from './logger';
import { roleProcessRestarts, type PeerMetrics } from './metrics';
import { DEFAULT_RESTART_POLICY, INITIAL_RESTART_STATE, decideRestart, giveUpMessage, type RestartPolicy, type RestartState } from './restart-policy';
import { forgetProcess, lowerChildPriority, recordProcess } from './supervisor';

/** The command-line option that makes main.ts a role process (its value names it). */
export const ROLE_PROCESS_OPTION = '--role-process';

export interface RoleProcessSpec {
  /** Names the process in logs and in its data directory. */
  readonly name: string;
  readonly roles: readonly string[];
  /** Added to the parent's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** A lower CPU priority for it (nice 1-19, every thread; infra/priority.ts), also after a restart; 0 or unset: as the parent. */
  readonly nice?: number;
}

type ToChild = { readonly type: 'metrics' | 'ping'; readonly id: number };
type ToParent =
  | { readonly type: 'ready' }
  | { readonly type: 'metrics'; readonly id: number; readonly metrics: PeerMetrics }
  | { readonly type: 'pong'; readonly id: number };

const READY_TIMEOUT_MS = 120_000;
/** A child asked to stop is killed after this long. */
const STOP_GRACE_MS = 5_000;
/** A metrics request or a ping not answered within this long is taken as no answer. */
const ANSWER_TIMEOUT_MS = 2_000;

/** When a child that exits on its own starts again, and when the parent gives up on it. */
export interface RestartOptions {
  /** Default DEFAULT_RESTART_POLICY (0.5 s doubling to 30 s, a minute up starts over, 8 in a row). */
  readonly restart?: RestartPolicy;
  /** Called once when a child kept exiting (`restart.giveUpAfter` restarts in a row): the caller stops the stack. */
  readonly onGiveUp?: (err: RoleProcessError) => void;
}

export class RoleProcessError extends Error {
  override readonly name = 'RoleProcessError';
}

class RoleProcess {
  private child: ChildProcess | undefined;
  private startedAt = 0;
  /** The current child said it is ready. */
  private ready = false;
  private restartState: RestartState = INITIAL_RESTART_STATE;
  private gaveUp = false;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: ToParent | null) => void>();
  private lastExit: { readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly at: number } | undefined;

  constructor(private readonly spec: RoleProcessSpec, private readonly entry: Entry, private readonly log: Logger, private readonly options: RestartOptions = {}) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the child and resolves once it is ready; rejects if it exits or stays silent first. */
  start(): Promise<void> {
    const child = spawn(process.execPath, [...this.entry.execArgv, this.entry.script, `--role=${this.spec.roles.join(',')}`, `${ROLE_PROCESS_OPTION}=${this.spec.name}`], {
      env: { ...process.env, ...this.spec.env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    this.startedAt = Date.now();
    this.ready = false;
    const { runDir } = this.entry;
    if (runDir && child.pid !== undefined) {
      const pid = child.pid;
      recordProcess(runDir, `role-${this.spec.name}`, pid, { group: false });
      child.once('exit', () => forgetProcess(runDir, `role-${this.spec.name}`, pid));
    }
    // Its parent's session: the threads only, never the autogroup the gateways share.
    if (child.pid !== undefined && this.spec.nice) lowerChildPriority(child.pid, this.spec.nice, { ownSession: false, name: this.spec.name }, this.log);
    child.on('message', (message: ToParent) => {
      if (message.type === 'metrics' || message.type === 'pong') {
        this.waiting.get(message.id)?.(message);
        this.waiting.delete(message.id);
      }
    });
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        fail(new RoleProcessError(`the ${this.spec.name} process (roles ${this.spec.roles.join(', ')}) was not ready within ${READY_TIMEOUT_MS / 1000} s; see its log lines above`));
      }, READY_TIMEOUT_MS);
      const onMessage = (message: ToParent): void => {
        if (message.type !== 'ready') return;
        cleanup();
        this.ready = true;
        this.log.info({ process: this.spec.name, pid: child.pid, roles: this.spec.roles }, 'role process ready');
        resolve();
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        fail(new RoleProcessError(`the ${this.spec.name} process (roles ${this.spec.roles.join(', ')}) exited during start-up (${signal ?? `code ${code}`}); see its log lines above`));
      };
      const onError = (err: Error): void => fail(new RoleProcessError(`the ${this.spec.name} process could not be started: ${err.message}`));
      const cleanup = (): void => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        child.off('error', onError);
      };
      const fail = (err: Error): void => {
        cleanup();
        child.kill('SIGKILL');
        reject(err);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.once('error', onError);
    });
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    for (const resolve of this.waiting.values()) resolve(null);
    this.waiting.clear();
    if (this.stopping || child !== this.child) return;
    this.lastExit = { code, signal, at: Date.now() };
    const policy = this.options.restart ?? DEFAULT_RESTART_POLICY;
    // A child that never said it was ready failed to come up: a quick exit, however long it took.
    const decision = decideRestart(this.restartState, this.ready ? Date.now() - this.startedAt : 0, policy);
    this.restartState = decision.state;
    if (decision.action === 'give-up') {
      this.gaveUp = true;
      const err = new RoleProcessError(`${giveUpMessage(`the ${this.spec.name} process (roles ${this.spec.roles.join(', ')})`, decision.restarts, policy, signal ?? `code ${code}`)} Its log lines above say why (an engine it cannot reach, a port taken, a configuration it refuses)`);
      this.log.fatal({ process: this.spec.name, pid: child.pid, code, signal, restarts: decision.restarts }, err.message);
      this.options.onGiveUp?.(err);
      return;
    }
    roleProcessRestarts.inc({ process: this.spec.name });
    const delay = decision.delayMs;
    this.log.error({ process: this.spec.name, pid: child.pid, code, signal, restart: { attempt: decision.attempt, of: policy.giveUpAfter, inMs: delay } }, 'role process exited; starting it again');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.start().catch((err: unknown) => this.log.error({ err, process: this.spec.name }, 'role process did not start again'));
    }, delay);
  }

  /** The child's metrics, or null when it does not answer (starting, restarting, stuck). */
  async metrics(): Promise<PeerMetrics | null> {
    const answer = await this.ask('metrics');
    return answer?.type === 'metrics' ? answer.metrics : null;
  }

  /** Round trip to the child in ms (/health); throws naming why when it does not answer. */
  async ping(): Promise<number> {
    const started = performance.now();
    if (!this.child?.connected) {
      const exit = this.lastExit;
      throw new Error(exit
        ? `the ${this.spec.name} process is not running: it exited (${exit.signal ?? `code ${exit.code}`}) ${Math.round((Date.now() - exit.at) / 1000)} s ago and ${this.gaveUp ? 'kept exiting after each restart: given up' : 'is being started again'}`
        : `the ${this.spec.name} process is not running`);
    }
    if ((await this.ask('ping'))?.type !== 'pong') throw new Error(`the ${this.spec.name} process did not answer within ${ANSWER_TIMEOUT_MS} ms`);
    return performance.now() - started;
  }

  private ask(type: ToChild['type']): Promise<ToParent | null> {
    const child = this.child;
    if (!child?.connected) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise<ToParent | null>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(null);
      }, ANSWER_TIMEOUT_MS);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      const request: ToChild = { type, id };
      child.send(request, (err) => {
        if (err) this.waiting.get(id)?.(null);
      });
    });
  }

  /** Asks the child to stop (SIGTERM) without waiting. */
  beginStop(): void {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }

  async stop(): Promise<void> {
    this.beginStop();
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const killer = setTimeout(() => {
      this.log.warn({ process: this.spec.name, pid: child.pid }, `role process still running ${STOP_GRACE_MS / 1000} s after SIGTERM; killing it`);
      child.kill('SIGKILL');
    }, STOP_GRACE_MS);
    await exited;
    clearTimeout(killer);
  }
}

export interface RoleProcesses {
  /** Resolves once every child is ready; rejects (after stopping them all) when one fails to start. */
  readonly ready: Promise<void>;
  readonly pids: ReadonlyArray<number | undefined>;
  /** A /health probe per child, named `process:<name>`: IPC round trip in ms, or why it is down. */
  readonly probes: Readonly<Record<string, () => Promise<number>>>;

  /** Every child's metrics that answered. */
  metrics(): Promise<PeerMetrics[]>;
  beginStop(): void;
  stop(): Promise<void>;
}

/** What a child runs: node with `execArgv` (this process's: `--import tsx`) on `script` (main.ts). */
export interface Entry {
  readonly script: string;
  readonly execArgv: readonly string[];
  /** Where each child is recorded (role-<name>.pid) for a next start to reap (infra/supervisor.ts). */
  readonly runDir?: string;
}

/**
 * Starts one child per spec, all at once. The handle comes back at once (so a parent that fails
 * while they start can still stop them); `ready` says when every one is ready.
 */
export function startRoleProcesses(specs: readonly RoleProcessSpec[], entry: Entry, log: Logger, options: RestartOptions = {}): RoleProcesses {
  const processes = specs.map((spec) => new RoleProcess(spec, entry, log, options));
  const started = processes.map((p) => p.start());
  const stop = async (): Promise<void> => { await Promise.all(processes.map((p) => p.stop())); };
  const ready = Promise.allSettled(started).then(async (outcomes) => {
    const failed = outcomes.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await stop();
      throw failed.reason;
    }
  });
  return {
    ready,
    get pids() { return processes.map((p) => p.pid); },
    probes: Object.fromEntries(specs.map((spec, i) => [`process:${spec.name}`, () => (processes[i] as RoleProcess).ping()])),
    metrics: async () => (await Promise.all(processes.map((p) => p.metrics()))).filter((m): m is PeerMetrics => m !== null),
    beginStop: () => processes.forEach((p) => p.beginStop()),
    stop,
  };
}

/** In a child: the parent's channel. Null when this process is no role process. */
export interface ParentChannel {
  ready(): void;
}

/**
 * Connects a role process (`isRoleProcess`: started with ROLE_PROCESS_OPTION) to its parent:
 * metrics requests are answered with `metrics()`, and when the channel closes (the parent is
 * gone) `parentGone` runs. Null in any other process.
 */
export function connectToParent(isRoleProcess: boolean, metrics: () => Promise<PeerMetrics>, parentGone: () => void): ParentChannel | null {
  const send = process.send?.bind(process);
  if (!send || !isRoleProcess) return null;
  process.on('message', (message: ToChild) => {
    if (message.type === 'ping') {
      if (process.connected) send({ type: 'pong', id: message.id } satisfies ToParent);
      return;
    }
    if (message.type !== 'metrics') return;
    metrics().then(
      (m) => { if (process.connected) send({ type: 'metrics', id: message.id, metrics: m } satisfies ToParent); },
      () => { if (process.connected) send({ type: 'metrics', id: message.id, metrics: { json: [], text: '' } } satisfies ToParent); },
    );
  });
  process.once('disconnect', parentGone);
  // The parent may have gone while this process was still loading.
  if (!process.connected) queueMicrotask(parentGone);
  return { ready: () => { if (process.connected) send({ type: 'ready' } satisfies ToParent); } };
}
