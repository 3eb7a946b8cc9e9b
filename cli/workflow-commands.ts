// Admin CLI command `workflow replay` (docs/operations.md, "Replaying workflows"): replays
// workflow histories against the workflow code of this checkout with Temporal's replayer, the
// same bundle entry the worker registers (roles/worker.ts: workflows/index.ts), and prints per
// run `deterministic` or the first divergence (event id, what the replayer said, a hint). Exit
// code 1 on any divergence, so it can gate a deploy. Histories come from a file or a directory
// of them (`--file`: no engine needed), from the workflow that holds a message (`--id`: every
// run, as `message history` finds it), or from the recently closed batch workflows of the task
// queue (`--since 24h --limit N`). Registered on the admin program by cli/admin.ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal as proto } from '@temporalio/proto';
import type { ReplayResult } from '@temporalio/worker';
import type { Command } from 'commander';
import { WORKFLOW_TYPES } from '../core/bus';
import { connectTemporal } from '../infra/temporal';
import { holderOf, runHistories, type MessageCommandContext, type TemporalSettings } from './message-commands';

type History = proto.api.history.v1.IHistory;
type HistoryEvent = proto.api.history.v1.IHistoryEvent;
type Action = <A extends unknown[]>(fn: (ctx: MessageCommandContext, ...args: A) => Promise<void>) => (...args: A) => Promise<void>;
type Print = (human: string, data: unknown) => void;

/** The worker's bundle entry: roles/worker.ts registers `require.resolve('../workflows')` too. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

export interface ReplayInput {
  readonly workflowId: string;
  readonly runId: string | null;
  /** Where the history came from: a file path, or `temporal` (fetched from the server). */
  readonly source: string;
  readonly history: History;
}

export type DivergenceKind =
  /** The code's commands differ from the history's: the classic non-determinism. */
  | 'nondeterminism'
  /** The history's workflow type is not exported by the bundle. */
  | 'unknown-workflow-type'
  /** The workflow code threw while replaying (or the replayer gave up). */
  | 'replay-failure';

export interface Divergence {
  readonly kind: DivergenceKind;
  /** The first event that disagrees with the code (null when the history has none to blame). */
  readonly eventId: number | null;
  readonly eventType: string | null;
  /** What the replayer said (the Temporal core's message when there is one). */
  readonly message: string;
  /** The replayer's whole error text. */
  readonly error: string;
  readonly hint: string;
}

export interface ReplayOutcome {
  readonly workflowId: string;
  readonly runId: string | null;
  readonly workflowType: string | null;
  readonly source: string;
  readonly events: number;
  /** Events replayed: all of a closed run's; an open run's up to its last completed workflow task. */
  readonly replayedEvents: number;
  readonly deterministic: boolean;
  readonly divergence: Divergence | null;
}

export interface ReplayReport {
  readonly bundle: string;
  readonly replayed: number;
  readonly deterministic: number;
  readonly diverged: number;
  readonly results: ReplayOutcome[];
}

const WFT_STARTED = 'EVENT_TYPE_WORKFLOW_TASK_STARTED';
const WFT_COMPLETED = 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED';
/** Events a workflow task's commands write: what the replayer compares the code's commands with. */
const COMMAND_EVENTS = new Set([
  'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED', 'EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED', 'EVENT_TYPE_TIMER_STARTED', 'EVENT_TYPE_TIMER_CANCELED',
  'EVENT_TYPE_MARKER_RECORDED', 'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED', 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED',
  'EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED', 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', 'EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED', 'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED', 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW', 'EVENT_TYPE_NEXUS_OPERATION_SCHEDULED', 'EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED',
]);

/** An event's type as its JSON names it (`EVENT_TYPE_TIMER_STARTED`): histories hold it as the proto enum's number. */
const eventTypeName = (event: HistoryEvent): string => proto.api.enums.v1.EventType[event.eventType ?? 0] ?? 'EVENT_TYPE_UNSPECIFIED';

const eventId = (event: HistoryEvent): number => Number(event.eventId ?? 0);

function workflowTypeOf(history: History): string | null {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? null;
}

function runIdOf(history: History): string | null {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.originalExecutionRunId ?? null;
}

/** Reads one history file, or every `*.json` of a directory (sorted by name). */
export function loadHistoryFiles(path: string): ReplayInput[] {
  const files = statSync(path).isDirectory() ? readdirSync(path).filter((f) => f.endsWith('.json')).sort().map((f) => join(path, f)) : [path];
  if (files.length === 0) throw new Error(`${path} holds no *.json history`);
  return files.map((file) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file} is not JSON (${err instanceof Error ? err.message : String(err)})`);
    }
    if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as { events?: unknown }).events)) {
      throw new Error(`${file} is not a workflow history (no "events"): export one with \`npm run admin -- message history --id <message id> --out <file>\``);
    }
    const history = historyFromJSON(parsed) as History;
    return { workflowId: basename(file).replace(/\.json$/, ''), runId: runIdOf(history), source: file, history };
  });
}

const CLOSE_EVENTS = new Set([
  'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED', 'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED', 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED', 'EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT', 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
]);

/**
 * What of a history can be checked: a closed run's whole history; an open run's up to the commands
 * of its last completed workflow task (the task in flight, if any, would run new code past the
 * history, e.g. schedule a local activity the replayer cannot run); null before any task completed.
 */
export function replayable(history: History): History | null {
  const events = history.events ?? [];
  const last = events[events.length - 1];
  if (last && CLOSE_EVENTS.has(eventTypeName(last))) return history;
  let end = events.map(eventTypeName).lastIndexOf(WFT_COMPLETED);
  if (end < 0) return null;
  while (end + 1 < events.length && COMMAND_EVENTS.has(eventTypeName(events[end + 1] as HistoryEvent))) end += 1;
  return prefix(history, end + 1);
}

/** The history up to (and with) its `count`-th event: a prefix the replayer reads like an open run's. */
function prefix(history: History, count: number): History {
  return { events: (history.events ?? []).slice(0, count) };
}

/** The core's own sentence inside the SDK's error text (`Failure { message: "…", source: … }`). */
function coreMessage(error: Error): string {
  const found = /message: "((?:[^"\\]|\\.)*)", source:/.exec(error.message);
  return found?.[1] ? found[1].replace(/\\(["\\])/g, '$1') : error.message;
}

function hintFor(kind: DivergenceKind, at: string, workflowType: string | null): string {
  switch (kind) {
    case 'nondeterminism':
      return `a command differs from the history at ${at}: did the workflow code change? deploy with patching (workflow.patched) or let old runs finish on the old worker`;
    case 'unknown-workflow-type':
      return `workflow type ${workflowType ?? '(none)'} is not exported by workflows/index.ts: keep it registered until its runs have closed (or let them finish on the old worker)`;
    case 'replay-failure':
      return `the workflow code failed while replaying ${at}: on a worker this run's workflow task would fail and retry forever; fix the code (or patch it with workflow.patched) before deploying`;
  }
}

export interface ReplayOptions {
  /** Called as each run has replayed (progress), before any divergence is located. */
  readonly onReplayed?: (workflowId: string, deterministic: boolean, done: number, total: number) => void;
  /** Worker bundle code; bundled from WORKFLOWS_PATH when absent. */
  readonly bundleCode?: string;
}

interface ReplayModules {
  readonly worker: typeof import('@temporalio/worker');
  readonly DeterminismViolationError: typeof import('@temporalio/workflow').DeterminismViolationError;
}
let modules: ReplayModules | undefined;
/** The worker SDK and the workflow code, loaded when a replay runs: every other admin command starts without them (~0.5 s). */
async function replayModules(): Promise<ReplayModules> {
  modules ??= { worker: await import('@temporalio/worker'), DeterminismViolationError: (await import('@temporalio/workflow')).DeterminismViolationError };
  return modules;
}

/** Bundles the product's workflow code once (the replays of one command share it). */
export async function bundleProductWorkflows(): Promise<string> {
  const { bundleWorkflowCode, DefaultLogger } = (await replayModules()).worker;
  return (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN', (entry) => { process.stderr.write(`bundle: ${entry.message}\n`); }) })).code;
}

async function replayOne(code: string, history: History): Promise<ReplayResult['error']> {
  const { Worker } = (await replayModules()).worker;
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, [{ workflowId: 'replay-cli-bisect', history }])) return result.error;
  return undefined;
}

/**
 * Where a failing history first diverges. The replayer reports the failure but not (always) the
 * event: replay the prefixes that end at each workflow task's start (as a worker receives an open
 * run) and bisect for the first that fails; the commands of the task before it are the culprits.
 */
async function locate(code: string, history: History, error: Error, kind: DivergenceKind): Promise<{ eventId: number | null; eventType: string | null }> {
  const { DeterminismViolationError } = await replayModules();
  const events = history.events ?? [];
  const byId = (id: number): { eventId: number; eventType: string } | null => {
    const found = events.find((e) => eventId(e) === id);
    return found ? { eventId: id, eventType: eventTypeName(found) } : null;
  };
  // The core names the event itself in some of its messages (`HistoryEvent { event_id: 19, ...`).
  const named = /event_id: (\d+)/.exec(coreMessage(error));
  if (named?.[1] && byId(Number(named[1]))) return byId(Number(named[1])) as { eventId: number; eventType: string };
  const cuts = events.flatMap((e, i) => (eventTypeName(e) === WFT_STARTED ? [i + 1] : []));
  if (cuts[cuts.length - 1] !== events.length) cuts.push(events.length);
  // Invariant: the prefix at cuts[hi] fails (the whole history does), the one at cuts[lo] passes (or lo = -1).
  let lo = -1;
  let hi = cuts.length - 1;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const failure = await replayOne(code, prefix(history, cuts[mid] as number));
    // Only the same failure counts: a prefix's last task may fail for its own reason (a new local activity the replayer cannot run).
    if (failure && failure instanceof DeterminismViolationError === error instanceof DeterminismViolationError && (kind === 'nondeterminism' || coreMessage(failure) === coreMessage(error))) hi = mid;
    else lo = mid;
  }
  const failingCut = cuts[hi] as number;
  if (kind !== 'nondeterminism') {
    const last = events[failingCut - 1];
    return last ? { eventId: eventId(last), eventType: eventTypeName(last) } : { eventId: null, eventType: null };
  }
  // The commands written after the last passing task's start, up to the failing cut.
  const window = events.slice(lo < 0 ? 0 : (cuts[lo] as number), failingCut);
  const commands = window.filter((e) => COMMAND_EVENTS.has(eventTypeName(e)));
  // The core's message quotes the name it disagrees about ('deliverDlrX'): the command event that carries it.
  const quoted = [...coreMessage(error).matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
  const culprit = commands.find((e) => quoted.some((q) => JSON.stringify(e).includes(JSON.stringify(q)))) ?? commands[0] ?? window.find((e) => eventTypeName(e) === WFT_COMPLETED);
  return culprit ? { eventId: eventId(culprit), eventType: eventTypeName(culprit) } : { eventId: null, eventType: null };
}

async function outcomeOf(code: string, input: ReplayInput, checked: History | null, error: ReplayResult['error']): Promise<ReplayOutcome> {
  const workflowType = workflowTypeOf(input.history);
  const base = { workflowId: input.workflowId, runId: input.runId, workflowType, source: input.source, events: input.history.events?.length ?? 0, replayedEvents: checked?.events?.length ?? 0 };
  if (!error || !checked) return { ...base, deterministic: true, divergence: null };
  const { DeterminismViolationError } = await replayModules();
  // The bundle exports exactly WORKFLOW_TYPES (test/unit/workflow-replay-cli.test.ts checks it).
  const productWorkflows: Readonly<Record<string, string>> = WORKFLOW_TYPES;
  const kind: DivergenceKind = error instanceof DeterminismViolationError ? 'nondeterminism'
    : workflowType !== null && !(workflowType in productWorkflows) ? 'unknown-workflow-type' : 'replay-failure';
  const at = kind === 'unknown-workflow-type' ? { eventId: 1, eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' } : await locate(code, checked, error, kind);
  const where = at.eventId === null ? 'the end of the history' : `event ${at.eventId} (${at.eventType})`;
  return { ...base, deterministic: false, divergence: { kind, ...at, message: coreMessage(error), error: error.message, hint: hintFor(kind, where, workflowType) } };
}

/** Replays every history against the product's workflow code; the first divergence of each. */
export async function replayHistories(inputs: readonly ReplayInput[], options: ReplayOptions = {}): Promise<ReplayReport> {
  const code = options.bundleCode ?? await bundleProductWorkflows();
  const results: ReplayOutcome[] = [];
  // Replay ids are positions: two files may name the same workflow.
  const checked = inputs.map((input) => replayable(input.history));
  const toReplay = checked.flatMap((history, i) => (history ? [{ workflowId: String(i), history }] : []));
  const errors = new Map<number, ReplayResult['error']>();
  let done = inputs.length - toReplay.length;
  if (toReplay.length > 0) {
    const { Worker } = (await replayModules()).worker;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, toReplay)) {
      errors.set(Number(result.workflowId), result.error);
      done += 1;
      options.onReplayed?.(inputs[Number(result.workflowId)]?.workflowId ?? result.workflowId, !result.error, done, inputs.length);
    }
  }
  for (const [i, input] of inputs.entries()) results.push(await outcomeOf(code, input, checked[i] ?? null, errors.get(i)));
  const deterministic = results.filter((r) => r.deterministic).length;
  return { bundle: 'workflows/index.ts', replayed: results.length, deterministic, diverged: results.length - deterministic, results };
}

/** Exit code of a replay: 0 when every run replayed, 1 on any divergence (a deploy gate). */
export const exitCodeOf = (report: ReplayReport): number => (report.diverged > 0 ? 1 : 0);

/** The human report: a line per run, the divergence's message and hint under it, a summary. */
export function formatReport(report: ReplayReport): string {
  const lines = report.results.flatMap((r) => {
    const open = r.replayedEvents < r.events ? ` (open: ${r.replayedEvents} replayed, up to its last completed workflow task)` : '';
    const name = `${r.workflowId}${r.runId ? ` (run ${r.runId})` : ''} ${r.workflowType ?? '?'}, ${r.events} events${open}`;
    if (!r.divergence) return [`${name}: deterministic`];
    const d = r.divergence;
    return [
      `${name}: DIVERGES at ${d.eventId === null ? 'the end of the history' : `event ${d.eventId} (${d.eventType})`} [${d.kind}]`,
      `  ${d.message}`,
      `  hint: ${d.hint}`,
    ];
  });
  lines.push(`${report.replayed} run(s) replayed against ${report.bundle}: ${report.deterministic} deterministic, ${report.diverged} diverged`);
  return lines.join('\n');
}

/** `24h`, `90m`, `2d`, `30s` → milliseconds. */
export function parseSince(text: string): number {
  const found = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!found) throw new Error(`--since must be a duration like 30m, 24h or 7d, got "${text}"`);
  return Number(found[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[found[2] as 's' | 'm' | 'h' | 'd'];
}

/** A value inside a visibility query's single quotes. */
function quoted(value: string): string {
  if (!/^[\w.:-]+$/.test(value)) throw new Error(`"${value}" is not a plain name (letters, digits, _ . : -)`);
  return `'${value}'`;
}

/** The most recently closed runs of a workflow type on the task queue, with their histories. */
export async function recentlyClosed(client: Client, taskQueue: string, workflowType: string, sinceMs: number, limit: number, now = Date.now()): Promise<ReplayInput[]> {
  const query = `TaskQueue = ${quoted(taskQueue)} AND WorkflowType = ${quoted(workflowType)} AND ExecutionStatus != 'Running' AND CloseTime >= '${new Date(now - sinceMs).toISOString()}'`;
  const found: ReplayInput[] = [];
  for await (const info of client.workflow.list({ query })) {
    if (found.length >= limit) break;
    const history = await client.workflow.getHandle(info.workflowId, info.runId).fetchHistory();
    found.push({ workflowId: info.workflowId, runId: info.runId, source: 'temporal', history });
  }
  return found;
}

/** Every run of the workflow that holds a message (continue-as-new followed), as `message history` finds it. */
export async function messageRuns(ctx: MessageCommandContext, client: Client, messageId: string): Promise<ReplayInput[]> {
  const holder = await holderOf(ctx.nats, messageId);
  return (await runHistories(client, holder)).map((r) => ({ workflowId: holder.workflowId, runId: r.runId, source: 'temporal', history: r.history }));
}

let runtimeInstalled = false;
/** The SDK's own logs (worker state changes, failed activations) go to stderr, and only with --verbose: stdout stays the report. */
async function installQuietRuntime(verbose: boolean): Promise<void> {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const { Runtime, DefaultLogger } = (await replayModules()).worker;
  const write = (entry: { level: string; message: string }): void => { if (verbose) process.stderr.write(`temporal ${entry.level}: ${entry.message}\n`); };
  Runtime.install({ logger: new DefaultLogger(verbose ? 'INFO' : 'ERROR', write), telemetryOptions: { logging: { filter: { core: verbose ? 'WARN' : 'ERROR', other: 'ERROR' }, forward: {} } } });
}

interface ReplayCommandOptions {
  readonly id?: string;
  readonly file?: string;
  readonly since?: string;
  readonly limit: string;
  readonly type: string;
  readonly verbose?: boolean;
}

/** Progress on stderr when there are several runs: about twenty lines, and every divergence. */
function progress(workflowId: string, deterministic: boolean, done: number, total: number): void {
  if (total < 2) return;
  if (!deterministic) process.stderr.write(`replay: ${workflowId} diverges (locating the event after the others)\n`);
  if (done % Math.max(1, Math.floor(total / 20)) === 0 || done === total) process.stderr.write(`replay: ${done}/${total} replayed\n`);
}

export function registerWorkflowCommands(program: Command, action: Action, print: Print, temporal: TemporalSettings & { readonly taskQueue: string }): void {
  const workflow = program.commands.find((c) => c.name() === 'workflow') ?? program.command('workflow').description('Temporal workflows');
  workflow.command('replay').description('replay histories against this checkout\'s workflow code; exit code 1 on any divergence (a deploy gate)')
    .option('--id <message id>', 'every run of the workflow that holds a message')
    .option('--file <path>', 'a history JSON file (`message history --out`), or a directory of them')
    .option('--since <duration>', 'the batch workflows of the task queue closed within, e.g. 24h')
    .option('--limit <n>', 'with --since: how many runs at most (the most recent first)', '50')
    .option('--type <workflow type>', 'with --since: the workflow type', WORKFLOW_TYPES.smsBatchLifecycle)
    .option('--verbose', 'the Temporal SDK\'s own logs on stderr')
    .action(async (o: ReplayCommandOptions) => {
      if ([o.id, o.file, o.since].filter((x) => x !== undefined).length !== 1) throw new Error('give exactly one of --id <message id>, --file <path> or --since <duration>');
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new Error(`--limit must be a positive integer, got "${o.limit}"`);
      await installQuietRuntime(Boolean(o.verbose));
      const fromTemporal = async (fetch: (client: Client) => Promise<ReplayInput[]>): Promise<ReplayInput[]> => {
        const t = await connectTemporal({ address: temporal.address, namespace: temporal.namespace });
        try {
          return await fetch(t.client);
        } finally {
          await t.close();
        }
      };
      let inputs: ReplayInput[] = [];
      if (o.file !== undefined) inputs = loadHistoryFiles(o.file);
      else if (o.since !== undefined) {
        const sinceMs = parseSince(o.since);
        inputs = await fromTemporal((client) => recentlyClosed(client, temporal.taskQueue, o.type, sinceMs, limit));
      } else {
        const id = o.id as string;
        await action(async (ctx) => { inputs = await fromTemporal((client) => messageRuns(ctx, client, id)); })();
      }
      if (inputs.length > 1) process.stderr.write(`replay: ${inputs.length} run(s) against ${WORKFLOWS_PATH}\n`);
      const report = await replayHistories(inputs, { onReplayed: progress });
      print(formatReport(report), report);
      process.exitCode = exitCodeOf(report);
    });
}
