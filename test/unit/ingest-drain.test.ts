// bench:ingest's end of a load phase (bench/ingest-drain.ts): the sustained rate counts until
// every accepted item is applied, so the phase must not end while the writer still has a
// backlog, even when one of its writes takes longer than the quiet period.
import { drainWriter, type WriterState } from '../../bench/ingest-drain';

/** A fake clock and metrics reader: `states(t)` is what the metrics say at t ms. */
function fake(states: (t: number) => WriterState): { read: () => Promise<WriterState>; now: () => number; sleep: (ms: number) => Promise<void> } {
  let t = 0;
  return { read: async () => states(t), now: () => t, sleep: async (ms) => { t += ms; } };
}

describe('bench:ingest drain (bench/ingest-drain.ts)', () => {
  test('a write longer than the quiet period with a backlog behind it does not end the phase', async () => {
    // 10 messages applied at 0; the next write takes 3.5 s (lag > 0 meanwhile); then all applied.
    const clock = fake((t) => (t < 3500 ? { applied: 10, lag: 4 } : { applied: 11, lag: 0 }));
    const last = await drainWriter(clock.read, clock);
    expect(last).toBe(3500);
    expect(clock.now()).toBe(5500);
  });

  test('everything applied: ends after the quiet period, at the last growth', async () => {
    const clock = fake((t) => ({ applied: t < 300 ? 1 : 2, lag: 0 }));
    expect(await drainWriter(clock.read, clock)).toBe(300);
  });

  test('a writer that applies nothing while behind is reported, not waited for forever', async () => {
    const clock = fake(() => ({ applied: 3, lag: 9 }));
    await expect(drainWriter(clock.read, { ...clock, stuckMs: 10_000 })).rejects.toThrow(/applied nothing for 10000 ms/);
  });
});
