// pipelines/stats-rollup.ts: the timer around StatsRollup.pass (migration 0015): a pass at
// start, the next at once while hours are still waiting, then one per interval; a failed pass
// is logged and retried; passes never overlap; stop waits for the running pass.
import { startStatsRollup } from '../../pipelines/stats-rollup';
import type { RollupPass } from '../../stores/message-stats';
import { eventually } from '../../support/eventually';

const log = { info: jest.fn(), warn: jest.fn() } as unknown as Parameters<typeof startStatsRollup>[0]['log'];

function fakeRollup(results: (RollupPass | Error)[]): { pass: () => Promise<RollupPass>; calls: number; overlapped: boolean } {
  const state = { calls: 0, overlapped: false, running: false };
  return {
    get calls() { return state.calls; },
    get overlapped() { return state.overlapped; },
    async pass() {
      if (state.running) state.overlapped = true;
      state.running = true;
      const result = results[Math.min(state.calls, results.length - 1)]!;
      state.calls += 1;
      await new Promise((resolve) => setImmediate(resolve));
      state.running = false;
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

const done = (hours: number, waiting = 0): RollupPass => ({ hours, waiting, deletedGenerations: false });

test('passes at start, again at once while hours wait, then waits the interval', async () => {
  const rollup = fakeRollup([done(2400, 100), done(100), done(0)]);
  const job = startStatsRollup({ rollup, everyMs: 60_000, log });
  await eventually(async () => rollup.calls, { what: 'two passes', until: (n: number) => n === 2, timeoutMs: 2000, intervalMs: 5 });
  // The third waits for the interval (60 s): still two after a while of event-loop turns.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(rollup.calls).toBe(2);
  await expect(job.runNow()).resolves.toEqual(done(0));
  expect(rollup.overlapped).toBe(false);
  await job.stop();
});

test('a failed pass is logged and retried after the interval', async () => {
  const rollup = fakeRollup([new Error('engine away'), done(1)]);
  const job = startStatsRollup({ rollup, everyMs: 20, log });
  await eventually(async () => rollup.calls, { what: 'the retry', until: (n: number) => n >= 2, timeoutMs: 2000, intervalMs: 5 });
  expect((log.warn as jest.Mock).mock.calls.some(([, message]) => String(message).includes('pass failed'))).toBe(true);
  await job.stop();
  const after = rollup.calls;
  await new Promise((resolve) => setTimeout(resolve, 60));
  expect(rollup.calls).toBe(after);
});
