// The product as `npm start` runs it (main.ts: every role, its own nats-server and Temporal dev
// server, the lifecycle and carrier role processes) in a data directory of its own, on free
// ports: started, asked over HTTP, and stopped with whatever it recorded. Used by the suites that
// kill its processes (crash-restart, engine-restart).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../infra/local-engines';
import { processRunning } from '../../infra/supervisor';

const ROOT = join(__dirname, '..', '..');

export interface NpmStart {
  readonly child: ChildProcess;
  /** Its stdout and stderr, the last `keep` chunks. */
  readonly output: string[];
  /** The JSON log lines about engines and role processes (a `child` or `process` field). */
  readonly events: Array<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
  readonly dataDir: string;
}

/** The environment of `npm start` in `dataDir`, every port free and no external engine; its HTTP URL. */
export async function npmStartEnv(dataDir: string, extra: Record<string, string> = {}): Promise<{ env: NodeJS.ProcessEnv; httpUrl: string }> {
  const port = async (): Promise<string> => String(await freePort());
  const httpPort = await port();
  const { NATS_URL: _n, TEMPORAL_ADDRESS: _t, CLICKHOUSE_URL: _c, ...inherited } = process.env;
  return {
    httpUrl: `http://127.0.0.1:${httpPort}`,
    env: {
      ...inherited,
      DATA_DIR: dataDir,
      HTTP_PORT: httpPort,
      HTTP_HOST: '127.0.0.1',
      SMPP_PORT: await port(),
      SIMULATOR_PORT: await port(),
      NATS_PORT: await port(),
      TEMPORAL_PORT: await port(),
      TEMPORAL_UI_PORT: await port(),
      PROCESS_LAYOUT: 'split',
      ...extra,
    },
  };
}

/** Starts main.ts with `env` (npmStartEnv), keeping its output and its engine and role process events. */
export function startNpmStart(env: NodeJS.ProcessEnv, keep = 3000): NpmStart {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const events: Array<Record<string, unknown>> = [];
  let partial = '';
  const remember = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output.push(text);
    if (output.length > keep) output.shift();
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry['child'] !== undefined || entry['process'] !== undefined) events.push(entry);
      } catch { /* not a log line */ }
    }
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, events, exited, dataDir: env['DATA_DIR'] as string };
}

/** The pid in a run's record: a number, or `{ pid }` (the supervisor's record of a child). */
function pidIn(file: string): number {
  const record = JSON.parse(readFileSync(file, 'utf8')) as number | { pid: number };
  return typeof record === 'number' ? record : record.pid;
}

/** The pids a run recorded for the next start to reap (`dataDir`/run/<name>.pid), by file name. */
export function recordedPids(dataDir: string): Record<string, number> {
  const runDir = join(dataDir, 'run');
  return Object.fromEntries(readdirSync(runDir).filter((f) => f.endsWith('.pid')).map((f) => [f, pidIn(join(runDir, f))]));
}

/** The pid recorded for `name` (nats-server, temporal, role-lifecycle, …), or undefined (none, or being rewritten). */
export function recordedPid(dataDir: string, name: string): number | undefined {
  try {
    return pidIn(join(dataDir, 'run', `${name}.pid`));
  } catch {
    return undefined;
  }
}

/** Stops a run still going: SIGTERM, SIGKILL after 15 s. */
export async function stopNpmStart(run: NpmStart): Promise<void> {
  if (run.child.exitCode === null && run.child.signalCode === null) {
    run.child.kill('SIGTERM');
    const timer = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
    await run.exited;
    clearTimeout(timer);
  }
}

/**
 * Kills what runs in `dataDir` recorded and is still the process it recorded (the same start
 * time: a pid reused by another process since is left alone), once every run there has stopped.
 */
export function killRecorded(dataDir: string): void {
  const runDir = join(dataDir, 'run');
  let files: string[];
  try { files = readdirSync(runDir).filter((f) => f.endsWith('.pid')); } catch { return; }
  for (const file of files) {
    try {
      const record = JSON.parse(readFileSync(join(runDir, file), 'utf8')) as { pid?: number; startTime?: string };
      if (typeof record.pid === 'number' && typeof record.startTime === 'string' && processRunning(record.pid, record.startTime)) process.kill(record.pid, 'SIGKILL');
    } catch { /* gone or being rewritten */ }
  }
}

/** A request with a bearer token to the run's HTTP API (JSON body when given). */
export async function apiRequest(httpUrl: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${httpUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
