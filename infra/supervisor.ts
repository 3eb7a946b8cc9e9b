// Runs the embedded engines (nats-server, the Temporal dev server) as child processes of
// `npm start` and of the test stack: waits until each answers, forwards their output to the
// structured log, and stops them all (SIGTERM, then SIGKILL) on shutdown. Pid files in
// $DATA_DIR/run let the next start clean up children left behind by a kill -9 of the parent.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import type { Logger } from './logger';

export interface ChildSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Resolves true once the child serves requests. */
  readonly ready: () => Promise<boolean>;
  readonly readyTimeoutMs?: number;
  /** Added to this process's environment for the child. */
  readonly env?: Readonly<Record<string, string>>;
}

export class ChildStartError extends Error {
  override readonly name = 'ChildStartError';
}

interface Running {
  readonly spec: ChildSpec;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

export class Supervisor {
  private readonly running: Running[] = [];
  private readonly runDir: string;

  constructor(dataDir: string, private readonly log: Logger) {
    this.runDir = join(dataDir, 'run');
    mkdirSync(this.runDir, { recursive: true });
  }

  /** Kills children recorded by an earlier run of this data directory that are still alive. */
  reapStale(): void {
    for (const file of readdirSync(this.runDir).filter((f) => f.endsWith('.pid'))) {
      const pid = Number(readFileSync(join(this.runDir, file), 'utf8'));
      const cmdline = readCmdline(pid);
      if (cmdline && cmdline.includes(file.replace(/\.pid$/, ''))) {
        this.log.warn({ pid, child: file }, 'stopping a child left behind by an earlier run');
        try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
      }
      rmSync(join(this.runDir, file), { force: true });
    }
  }

  async start(spec: ChildSpec): Promise<void> {
    const tail: string[] = [];
    // Own process group: a terminal's Ctrl-C reaches only us, and we stop the engines after
    // the roles that use them (reapStale covers a parent killed with -9).
    const child = spawn(spec.command, spec.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...spec.env } });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const remember = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        this.log.debug({ child: spec.name }, line);
      }
    };
    child.stdout?.on('data', remember);
    child.stderr?.on('data', remember);
    let spawnError: Error | undefined;
    child.once('error', (err) => { spawnError = err; });
    if (child.pid !== undefined) writeFileSync(join(this.runDir, `${spec.name}.pid`), String(child.pid));
    const entry = { spec, child, exited };
    this.running.push(entry);

    const deadline = Date.now() + (spec.readyTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      if (spawnError) throw new ChildStartError(`${spec.name} could not start (${spec.command}): ${spawnError.message}. Run \`npm run bootstrap\` to build it.`);
      if (child.exitCode !== null) {
        throw new ChildStartError(`${spec.name} exited with code ${child.exitCode} during start-up:\n${tail.join('\n')}`);
      }
      if (await spec.ready().catch(() => false)) {
        this.log.info({ child: spec.name, pid: child.pid }, 'engine ready');
        child.once('exit', (code, signal) => {
          if (!this.stopping) this.log.error({ child: spec.name, code, signal }, 'engine exited unexpectedly');
        });
        return;
      }
      await sleep(150);
    }
    throw new ChildStartError(`${spec.name} did not become ready within ${(spec.readyTimeoutMs ?? 60_000) / 1000} s:\n${tail.join('\n')}`);
  }

  private stopping = false;

  async stopAll(timeoutMs = 8000): Promise<void> {
    this.stopping = true;
    // Reverse start order: Temporal before NATS, so nothing depends on a stopped engine.
    for (const { spec, child, exited } of [...this.running].reverse()) {
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
