// pipelines/stats-rollup.ts: the timer around StatsRollup.pass (migration 0015): a pass at
// start, the next at once while hours are still waiting, then one per interval; a failed pass
// is logged and retried; passes never overlap; stop waits for the running pass.
import { startStatsRollup } from '../../pipelines/stats-rollup';
import type { RollupPass } from '../../stores/stats-rollup';

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

/** Runs what is due now on jest's clock, and what that schedules at once, without moving it on. */
async function atOnce(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await jest.advanceTimersByTimeAsync(0);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const done = (hours: number, waiting = 0): RollupPass => ({ hours, waiting, days: 0, deletedGenerations: false });

test('passes at start, again at once while hours wait, then waits the interval', async () => {
  const rollup = fakeRollup([done(2400, 100), done(100), done(0)]);
  jest.useFakeTimers({ doNotFake: ['setImmediate'] });
  try {
    const job = startStatsRollup({ rollup, everyMs: 60_000, log });
    // On jest's clock: the first pass at start and the second at once, with no time passing.
    await atOnce();
    expect(rollup.calls).toBe(2);
    // The third waits for the interval (60 s): still two a millisecond before it.
    await jest.advanceTimersByTimeAsync(59_999);
    expect(rollup.calls).toBe(2);
    await expect(job.runNow()).resolves.toEqual(done(0));
    expect(rollup.overlapped).toBe(false);
    await job.stop();
  } finally {
    jest.useRealTimers();
  }
});

test('a failed pass is logged and retried after the interval', async () => {
  const rollup = fakeRollup([new Error('engine away'), done(1)]);
  jest.useFakeTimers({ doNotFake: ['setImmediate'] });
  try {
    const job = startStatsRollup({ rollup, everyMs: 20, log });
    await atOnce();
    expect(rollup.calls).toBe(1);
    await jest.advanceTimersByTimeAsync(20);
    await atOnce();
    expect(rollup.calls).toBe(2);
    expect((log.warn as jest.Mock).mock.calls.some(([, message]) => String(message).includes('pass failed'))).toBe(true);
    await job.stop();
    const after = rollup.calls;
    // Stopped: three intervals later, no further pass.
    await jest.advanceTimersByTimeAsync(60);
    expect(rollup.calls).toBe(after);
  } finally {
    jest.useRealTimers();
  }
});
