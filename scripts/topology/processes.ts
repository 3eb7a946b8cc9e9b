// Detached processes of the topology, tracked by pid files in data/topology/pids so that
// `up` is idempotent, `status` can report and `down` leaves nothing behind.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { STATE } from './plan';

const PIDS = join(STATE, 'pids');
export const LOGS = join(STATE, 'logs');

export const say = (line: string): void => void process.stderr.write(`[topology] ${line}\n`);
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function pidOf(name: string): number | undefined {
  const file = join(PIDS, `${name}.pid`);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
}

export function trackedNames(): string[] {
  return existsSync(PIDS) ? readdirSync(PIDS).filter((f) => f.endsWith('.pid')).map((f) => f.slice(0, -4)) : [];
}

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(false));
  });
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, pidName?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    if (pidName && pidOf(pidName) === undefined) throw new Error(`${what}: the process exited; see ${join(LOGS, `${pidName}.log`)}`);
    await sleep(250);
  }
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s${pidName ? `; see ${join(LOGS, `${pidName}.log`)}` : ''}`);
}

export interface Launch {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Record<string, string>;
  readonly cwd?: string;
}

/** Starts a detached process (its own process group) logging to data/topology/logs/<name>.log, unless it runs already. */
export function launch(spec: Launch): { pid: number; started: boolean } {
  const running = pidOf(spec.name);
  if (running !== undefined) return { pid: running, started: false };
  mkdirSync(PIDS, { recursive: true });
  mkdirSync(LOGS, { recursive: true });
  const log = openSync(join(LOGS, `${spec.name}.log`), 'a');
  const child = spawn(spec.command, spec.args as string[], {
    cwd: spec.cwd, env: { ...process.env, ...spec.env }, detached: true, stdio: ['ignore', log, log],
  });
  if (child.pid === undefined) throw new Error(`${spec.name}: could not start ${spec.command}`);
  child.unref();
  writeFileSync(join(PIDS, `${spec.name}.pid`), String(child.pid));
  return { pid: child.pid, started: true };
}

/** Signals a tracked process's group; SIGKILL for fault injection, SIGTERM (then SIGKILL after graceMs) to stop. */
export async function stop(name: string, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM', graceMs = 12_000): Promise<boolean> {
  const pid = pidOf(name);
  if (pid === undefined) {
    rmSync(join(PIDS, `${name}.pid`), { force: true });
    return false;
  }
  const hit = (sig: NodeJS.Signals): void => {
    try { process.kill(-pid, sig); } catch { try { process.kill(pid, sig); } catch { /* gone */ } }
  };
  hit(signal);
  const deadline = Date.now() + (signal === 'SIGKILL' ? 5_000 : graceMs);
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  if (alive(pid)) {
    hit('SIGKILL');
    while (alive(pid)) await sleep(100);
  }
  rmSync(join(PIDS, `${name}.pid`), { force: true });
  return true;
}
