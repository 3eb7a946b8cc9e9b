// support/eventually.ts, the one polling helper of the suites: it returns once the probe
// passes (no throw, not false, `until` holds) and otherwise fails naming what was awaited.
import { clockPast, eventually } from '../../support/eventually';

describe('eventually (support/eventually.ts)', () => {
  test('returns the value of the first passing probe: an assertion, a boolean check, a read with until', async () => {
    let calls = 0;
    await eventually(() => { calls += 1; expect(calls).toBeGreaterThanOrEqual(3); }, { what: 'the third call', intervalMs: 1 });
    expect(calls).toBe(3);
    let n = 0;
    expect(await eventually(() => { n += 1; return n === 2; }, { what: 'the second call', intervalMs: 1 })).toBe(true);
    let m = 0;
    expect(await eventually(async () => { m += 1; return m; }, { what: 'five', until: (v) => v >= 5, intervalMs: 1 })).toBe(5);
  });

  test('fails after the timeout with what was awaited and the last failure or value', async () => {
    await expect(eventually(() => false, { what: 'a thing that never happens', timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/timed out after 30 ms waiting for a thing that never happens; last value false/);
    await expect(eventually(() => { throw new Error('still 3'); }, { what: 'four', timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/waiting for four; last failure: still 3/);
    await expect(eventually(() => ({ n: 1 }), { what: 'n of 2', until: (v) => v.n === 2, timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(/last value \{"n":1\}/);
  });

  test('clockPast returns once the clock is past the instant', async () => {
    const at = Date.now() + 20;
    await clockPast(new Date(at).toISOString());
    expect(Date.now()).toBeGreaterThan(at);
    await expect(clockPast('not a date')).rejects.toThrow(/not an instant/);
  });
});
