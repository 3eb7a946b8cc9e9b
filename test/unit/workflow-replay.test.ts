// Determinism guard: histories recorded from real runs (test/fixtures/histories, exported with
// `npm run admin -- message history --id <id> --out ...` or test/fixtures/record-histories.ts)
// replay against the current workflow code: the per-message smsLifecycle (kept registered for
// in-flight histories), the batch smsBatchLifecycle and the scheduled smsScheduled (DESIGN §4
// Scheduling: its timer, its cancelScheduled update). A change that makes the workflows
// non-deterministic fails here, in CI.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';

const DIR = join(__dirname, '..', 'fixtures', 'histories');

function fixtures(): Array<{ workflowId: string; history: temporal.api.history.v1.IHistory }> {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: historyFromJSON(JSON.parse(readFileSync(join(DIR, f), 'utf8'))) as temporal.api.history.v1.IHistory }));
}

describe('workflow replay (determinism)', () => {
  test('recorded lifecycle histories cover every kind of ending', () => {
    const names = fixtures().map((f) => f.workflowId);
    expect(names.length).toBeGreaterThanOrEqual(3);
  });

  test('recorded batch histories include a retried DLR and a dead-lettered one (issue 13)', () => {
    const batches = fixtures().filter((f) => f.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === 'smsBatchLifecycle');
    expect(batches.length).toBeGreaterThanOrEqual(2);
    const events = batches.flatMap((f) => f.history.events ?? []);
    const retries = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverDlr');
    const completed = events.filter((e) => e.activityTaskCompletedEventAttributes);
    const closedWindows = events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes);
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(completed.length).toBeGreaterThanOrEqual(1);
    expect(closedWindows.length).toBeGreaterThanOrEqual(1);
  });

  test('recorded smsScheduled histories: sent after its timer (a cancel after it), canceled by the update before it, rejected for an opt-out', () => {
    const scheduled = fixtures().filter((f) => f.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === 'smsScheduled');
    const kinds = (f: (typeof scheduled)[number]): string[] => (f.history.events ?? []).flatMap((e) => [
      ...(e.timerFiredEventAttributes ? ['timer fired'] : []),
      ...(e.timerCanceledEventAttributes ? ['timer canceled'] : []),
      ...(e.workflowExecutionUpdateAcceptedEventAttributes ? ['update accepted'] : []),
    ]);
    expect(scheduled.map((f) => [f.workflowId, kinds(f)]).sort()).toEqual([
      ['scheduled-canceled', ['update accepted', 'timer canceled']],
      ['scheduled-opted-out', ['timer fired']],
      ['scheduled-sent', ['timer fired', 'update accepted']],
    ]);
  });

  test('every recorded history replays against the current workflow code', async () => {
    const results = Worker.runReplayHistories({ workflowsPath: require.resolve('../../workflows') }, fixtures());
    const failures: string[] = [];
    let count = 0;
    for await (const result of results) {
      count += 1;
      if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
    }
    expect(count).toBe(fixtures().length);
    expect(failures).toEqual([]);
  }, 60_000);
});
