// The runtime file of a running stack: `$DATA_DIR/run/stack.json`, written by the top process
// of `npm start` (or of `node main.ts --role=...`) once it is ready, with the URLs it serves and
// the engines it uses; removed when that process exits (Ctrl-C, SIGTERM, a fault). Tools that
// act on "the stack of this DATA_DIR" (the admin CLI) read it instead of assuming the default
// ports, so two stacks on one machine do not get mixed up. A file left by a process killed
// with -9 names a pid that is no longer running: readers report it as stale.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processRunning, processStartTime } from './supervisor';

export interface StackRecord {
  /** The process that wrote the file (the one to stop). */
  readonly pid: number;
  /** Its start time (/proc/<pid>/stat): a file left by a kill -9 whose pid was reused since is still stale. */
  readonly startTime?: string;
  readonly startedAt: string;
  readonly dataDir: string;
  readonly roles: readonly string[];
  /** NATS server(s), comma-separated as in NATS_URL. */
  readonly natsUrl: string;
  readonly temporalAddress: string;
  /** The embedded Temporal dev server's UI; absent with an external Temporal. */
  readonly temporalUi?: string;
  /** Base URL of the HTTP gateway; absent when this process does not run gateway-http. */
  readonly httpUrl?: string;
  /** The stack's WEBHOOK_ALLOW_PRIVATE_TARGETS: a webhook set through a tool is checked by the stack's rule, not the tool's environment. */
  readonly webhookAllowPrivateTargets?: boolean;
}

export const stackFilePath = (dataDir: string): string => join(dataDir, 'run', 'stack.json');

/** The URL a local client uses for a server bound to `host` (a wildcard address means localhost). */
export function localUrl(scheme: string, host: string, port: number): string {
  const name = host === '' || host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${name}:${port}`;
}

/**
 * Writes the runtime file of this process (atomically: readers never see half a file) and
 * removes it when the process exits, unless another process has written its own since.
 */
export function writeStackFile(record: Omit<StackRecord, 'pid' | 'startTime' | 'startedAt'>): string {
  const file = stackFilePath(record.dataDir);
  mkdirSync(join(record.dataDir, 'run'), { recursive: true });
  const startTime = processStartTime(process.pid);
  const full: StackRecord = { pid: process.pid, ...(startTime ? { startTime } : {}), startedAt: new Date().toISOString(), ...record };
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(full, null, 2)}\n`);
  renameSync(temp, file);
  process.once('exit', () => {
    if (readStackFile(record.dataDir)?.pid === process.pid) rmSync(file, { force: true });
  });
  return file;
}

/** The runtime file of `dataDir`, or undefined when there is none (or it is not a runtime file). */
export function readStackFile(dataDir: string): StackRecord | undefined {
  let text: string;
  try {
    text = readFileSync(stackFilePath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<StackRecord>;
    const valid = typeof parsed.pid === 'number' && typeof parsed.natsUrl === 'string' && typeof parsed.temporalAddress === 'string';
    return valid ? (parsed as StackRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote the runtime file still runs (the same process, not a reuse of its pid). */
export const stackRunning = (record: StackRecord): boolean => processRunning(record.pid, record.startTime);

export interface StackTarget {
  readonly natsUrl: string;
  readonly temporalAddress: string;
  readonly temporalUi: string;
  /** One line for stderr: which stack this is, and how it was found. */
  readonly description: string;
}

export interface StackTargetInput {
  /** NATS_URL and TEMPORAL_ADDRESS of the environment (they win over the runtime file). */
  readonly natsUrl: string | undefined;
  readonly temporalAddress: string | undefined;
  readonly dataDir: string;
  /** What the embedded stack of the default configuration would use (NATS_PORT, TEMPORAL_PORT, TEMPORAL_UI_PORT). */
  readonly defaults: { readonly natsUrl: string; readonly temporalAddress: string; readonly temporalUi: string };
  /** The runtime file of dataDir (readStackFile). */
  readonly record: StackRecord | undefined;
  readonly alive: (record: StackRecord) => boolean;
}

/**
 * Which stack a client of DATA_DIR talks to: NATS_URL / TEMPORAL_ADDRESS when set, else the
 * runtime file of DATA_DIR, else the default ports (said so: it may be another stack's).
 */
export function resolveStackTarget(input: StackTargetInput): StackTarget {
  const { record, defaults } = input;
  const file = stackFilePath(input.dataDir);
  const natsUrl = input.natsUrl ?? record?.natsUrl ?? defaults.natsUrl;
  const temporalAddress = input.temporalAddress ?? record?.temporalAddress ?? defaults.temporalAddress;
  const temporalUi = record?.temporalUi ?? defaults.temporalUi;
  const engines = `NATS ${natsUrl}, Temporal ${temporalAddress}`;
  const overrides = [input.natsUrl !== undefined ? 'NATS_URL' : '', input.temporalAddress !== undefined ? 'TEMPORAL_ADDRESS' : ''].filter(Boolean);
  const fromEnv = overrides.length > 0 ? ` (${overrides.join(' and ')} from the environment)` : '';
  let description: string;
  if (record) {
    const state = input.alive(record) ? `pid ${record.pid}` : `pid ${record.pid} is not running: stale runtime file`;
    description = `stack of ${record.dataDir} (${state}; ${file}): ${engines}${fromEnv}`;
  } else if (input.natsUrl !== undefined) {
    description = `${engines}${fromEnv}`;
  } else {
    description = `no running stack recorded for ${input.dataDir} (${file} is absent): trying the default ${engines}${fromEnv}`;
  }
  return { natsUrl, temporalAddress, temporalUi, description };
}

/**
 * The webhook target rule a tool applies for this stack: WEBHOOK_ALLOW_PRIVATE_TARGETS of the
 * tool's environment when it is set there, else the running stack's (its runtime file), else strict.
 */
export function webhookPolicyFor(envValue: string | undefined, envAllows: boolean, record: StackRecord | undefined): boolean {
  if (envValue !== undefined && envValue !== '') return envAllows;
  return record?.webhookAllowPrivateTargets === true;
}
