// `npm run admin -- workflow replay` (cli/workflow-commands.ts; docs/operations.md, "Replaying
// workflows"): the recorded fixtures replay deterministic (exit code 0); a tampered copy is
// reported as a divergence at its event with the replayer's message and a hint (exit code 1),
// through the replay function and through the CLI itself. No engine: --file only.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { WORKFLOW_TYPES } from '../../core/bus';
import * as productWorkflows from '../../workflows';
import { bundleProductWorkflows, exitCodeOf, formatReport, loadHistoryFiles, parseSince, replayHistories, WORKFLOWS_PATH, type ReplayOutcome } from '../../cli/workflow-commands';

const FIXTURES = join(__dirname, '..', 'fixtures', 'histories');
const ROOT = join(__dirname, '..', '..');

interface JsonEvent { eventId: string; eventType: string; [attributes: string]: unknown }
interface JsonHistory { events: JsonEvent[] }

const fixture = (name: string): JsonHistory => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as JsonHistory;
const scheduled = (e: JsonEvent): { activityType: { name: string } } | undefined => e['activityTaskScheduledEventAttributes'] as { activityType: { name: string } } | undefined;

/** A copy of a fixture whose `nth` (from the end when negative) deliverDlr activity has another type: as if the code now scheduled something else there. */
function withActivityRenamed(name: string, nth: number): { history: JsonHistory; eventId: number } {
  const history = fixture(name);
  const activities = history.events.filter((e) => scheduled(e)?.activityType.name === 'deliverDlr');
  const target = activities[nth < 0 ? activities.length + nth : nth];
  if (!target) throw new Error(`${name} has no deliverDlr activity #${nth}`);
  (scheduled(target) as { activityType: { name: string } }).activityType.name = 'deliverDlrRenamed';
  return { history, eventId: Number(target.eventId) };
}

function writeHistory(dir: string, name: string, history: JsonHistory): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(history));
  return file;
}

let code: string;
beforeAll(async () => {
  code = await bundleProductWorkflows();
}, 120_000);

const byId = (results: ReplayOutcome[], id: string): ReplayOutcome => {
  const found = results.find((r) => r.workflowId === id);
  if (!found) throw new Error(`no result for ${id}`);
  return found;
};

describe('workflow replay CLI (docs/operations.md, Replaying workflows)', () => {
  test('replays the worker\'s bundle entry, which exports exactly the registered workflow types (the benchmark\'s benchCeiling lives in bench/)', () => {
    expect(WORKFLOWS_PATH).toBe(require.resolve('../../workflows'));
    expect(Object.keys(productWorkflows).sort()).toEqual(Object.values(WORKFLOW_TYPES).sort());
  });

  test('every recorded fixture replays deterministic: exit code 0', async () => {
    const inputs = loadHistoryFiles(FIXTURES);
    expect(inputs.length).toBeGreaterThanOrEqual(8);
    const progress: string[] = [];
    const report = await replayHistories(inputs, { bundleCode: code, onReplayed: (id, ok, done, total) => progress.push(`${done}/${total} ${id} ${ok}`) });
    expect(report.results.map((r) => [r.workflowId, r.deterministic, r.divergence])).toEqual(inputs.map((i) => [i.workflowId, true, null]));
    expect(report).toMatchObject({ replayed: inputs.length, deterministic: inputs.length, diverged: 0 });
    expect(progress).toHaveLength(inputs.length);
    expect(exitCodeOf(report)).toBe(0);
    expect(formatReport(report)).toContain(`${inputs.length} run(s) replayed against workflows/index.ts: ${inputs.length} deterministic, 0 diverged`);
  }, 120_000);

  test('a changed activity type is a divergence at its event, with the replayer\'s message and the patching hint: exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-cli-'));
    const early = withActivityRenamed('batch-stack', 0);
    const late = withActivityRenamed('batch-dead-letter', -1);
    writeHistory(dir, 'early', early.history);
    writeHistory(dir, 'late', late.history);
    writeHistory(dir, 'untouched', fixture('delivered'));
    const report = await replayHistories(loadHistoryFiles(dir), { bundleCode: code });
    expect(report).toMatchObject({ replayed: 3, deterministic: 1, diverged: 2 });
    expect(byId(report.results, 'untouched').deterministic).toBe(true);
    for (const [id, at] of [['early', early.eventId], ['late', late.eventId]] as const) {
      const divergence = byId(report.results, id).divergence;
      expect(divergence).toMatchObject({ kind: 'nondeterminism', eventId: at, eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED' });
      expect(divergence?.message).toMatch(/Nondeterminism error: .*'deliverDlrRenamed'/);
      expect(divergence?.hint).toBe(`a command differs from the history at event ${at} (EVENT_TYPE_ACTIVITY_TASK_SCHEDULED): did the workflow code change? deploy with patching (workflow.patched) or let old runs finish on the old worker`);
    }
    // The late one sits after several workflow tasks: the bisection found the right one, not the first.
    expect(late.eventId).toBeGreaterThan(early.eventId);
    expect(exitCodeOf(report)).toBe(1);
    expect(formatReport(report)).toContain(`late (run ${byId(report.results, 'late').runId}) smsBatchLifecycle, ${late.history.events.length} events: DIVERGES at event ${late.eventId} (EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) [nondeterminism]`);
  }, 120_000);

  test('reordered commands (a local activity\'s marker before the timer it followed) are a divergence at the event the replayer names', async () => {
    const history = fixture('batch-stack');
    const timer = history.events.findIndex((e, i) => e.eventType === 'EVENT_TYPE_TIMER_STARTED' && history.events[i + 1]?.eventType === 'EVENT_TYPE_MARKER_RECORDED');
    expect(timer).toBeGreaterThan(0);
    const [first, second] = [history.events[timer] as JsonEvent, history.events[timer + 1] as JsonEvent];
    history.events[timer] = { ...second, eventId: first.eventId };
    history.events[timer + 1] = { ...first, eventId: second.eventId };
    const dir = mkdtempSync(join(tmpdir(), 'replay-cli-'));
    const report = await replayHistories(loadHistoryFiles(writeHistory(dir, 'reordered', history)), { bundleCode: code });
    const divergence = report.results[0]?.divergence;
    expect(divergence?.kind).toBe('nondeterminism');
    // The core names the timer's fired event, which no longer matches a command (its id is in the message).
    expect(divergence?.eventId).toBeGreaterThan(timer);
    expect(divergence?.message).toContain(`event_id: ${divergence?.eventId}`);
    expect(exitCodeOf(report)).toBe(1);
  }, 120_000);

  test('an open run (as --id finds an in-flight message) replays up to its last completed workflow task; a divergence in it still shows', async () => {
    const full = fixture('batch-stack');
    const cut = full.events.findLastIndex((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_STARTED');
    const open = { events: full.events.slice(0, cut + 1) };
    const lastCompleted = open.events.findLastIndex((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    const tampered = withActivityRenamed('batch-stack', 0);
    const dir = mkdtempSync(join(tmpdir(), 'replay-cli-'));
    writeHistory(dir, 'open', open);
    writeHistory(dir, 'open-tampered', { events: tampered.history.events.slice(0, cut + 1) });
    writeHistory(dir, 'not-started', { events: full.events.slice(0, 3) });
    const report = await replayHistories(loadHistoryFiles(dir), { bundleCode: code });
    expect(byId(report.results, 'open')).toMatchObject({ deterministic: true, events: cut + 1 });
    expect(byId(report.results, 'open').replayedEvents).toBeGreaterThan(lastCompleted);
    expect(byId(report.results, 'open').replayedEvents).toBeLessThan(cut + 1);
    expect(byId(report.results, 'open-tampered').divergence).toMatchObject({ kind: 'nondeterminism', eventId: tampered.eventId });
    // No workflow task completed yet: nothing recorded that the code could contradict.
    expect(byId(report.results, 'not-started')).toMatchObject({ deterministic: true, replayedEvents: 0 });
    expect(formatReport(report)).toContain('(open: ');
  }, 120_000);

  test('a workflow type the bundle no longer exports (the benchmark\'s benchCeiling) is named as such, at event 1', async () => {
    const history = fixture('delivered');
    (history.events[0]?.['workflowExecutionStartedEventAttributes'] as { workflowType: { name: string } }).workflowType.name = 'benchCeiling';
    const dir = mkdtempSync(join(tmpdir(), 'replay-cli-'));
    const report = await replayHistories(loadHistoryFiles(writeHistory(dir, 'gone', history)), { bundleCode: code });
    expect(report.results[0]?.divergence).toMatchObject({ kind: 'unknown-workflow-type', eventId: 1, eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED' });
    expect(report.results[0]?.divergence?.hint).toMatch(/^workflow type benchCeiling is not exported by workflows\/index.ts/);
    expect(exitCodeOf(report)).toBe(1);
  }, 120_000);

  test('a file that is not a history is refused with how to export one; --since takes 30m, 24h, 7d', () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-cli-'));
    writeFileSync(join(dir, 'x.json'), '{"hello": 1}');
    expect(() => loadHistoryFiles(join(dir, 'x.json'))).toThrow(/is not a workflow history \(no "events"\): export one with `npm run admin -- message history/);
    expect(() => loadHistoryFiles(mkdtempSync(join(tmpdir(), 'replay-cli-empty-')))).toThrow(/holds no \*\.json history/);
    expect([parseSince('30m'), parseSince('24h'), parseSince('7d')]).toEqual([1_800_000, 86_400_000, 604_800_000]);
    expect(() => parseSince('yesterday')).toThrow(/--since must be a duration/);
  });

  test('`npm run admin -- workflow replay --file <dir> --json`: the JSON report on stdout, progress on stderr, exit code 1 on a divergence', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-cli-'));
    const tampered = withActivityRenamed('batch-stack', 0);
    writeHistory(dir, 'tampered', tampered.history);
    writeHistory(dir, 'delivered', fixture('delivered'));
    const run = promisify(execFile);
    const failed = await run('npm', ['run', '-s', 'admin', '--', 'workflow', 'replay', '--file', dir, '--json'], { cwd: ROOT }).then(() => null, (err: { code: number; stdout: string; stderr: string }) => err);
    expect(failed?.code).toBe(1);
    const report = JSON.parse(failed?.stdout ?? '') as { diverged: number; results: ReplayOutcome[] };
    expect(report.diverged).toBe(1);
    expect(byId(report.results, 'tampered').divergence).toMatchObject({ kind: 'nondeterminism', eventId: tampered.eventId });
    expect(failed?.stderr).toContain('replay: 2/2 replayed');
    const passed = await run('npm', ['run', '-s', 'admin', '--', 'workflow', 'replay', '--file', join(dir, 'delivered.json')], { cwd: ROOT });
    expect(passed.stdout).toContain('delivered (run ');
    expect(passed.stdout).toContain(': deterministic');
  }, 180_000);
});
