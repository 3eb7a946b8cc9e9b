// Determinism guard: histories recorded from real runs (test/fixtures/histories, exported with
// `npm run admin -- message history --id <id> --out ...`) replay against the current workflow
// code. A change that makes the workflows non-deterministic fails here, in CI.
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
