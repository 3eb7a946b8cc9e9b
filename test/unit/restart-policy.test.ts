// The restart policy of npm start's children (infra/restart-policy.ts): engines and role
// processes that exit on their own start again after a doubling, bounded delay; a child that
// keeps exiting soon after each start makes the stack give up (docs/operations.md).
import { ConfigError, loadConfig } from '../../config';
import { DEFAULT_RESTART_POLICY, INITIAL_RESTART_STATE, decideRestart, restartDelay, type RestartDecision, type RestartState } from '../../infra/restart-policy';

const policy = DEFAULT_RESTART_POLICY;

/** Feeds exits after `ranMs` each, in order, from a fresh state; returns every decision. */
function exits(...ran: number[]): RestartDecision[] {
  let state: RestartState = INITIAL_RESTART_STATE;
  return ran.map((ranMs) => {
    const decision = decideRestart(state, ranMs, policy);
    state = decision.state;
    return decision;
  });
}

test('the default: 0.5 s doubling to 30 s, a minute up resets, 8 restarts in a row', () => {
  expect(DEFAULT_RESTART_POLICY).toEqual({ initialDelayMs: 500, maxDelayMs: 30_000, stableMs: 60_000, giveUpAfter: 8 });
});

test('delays double from 0.5 s and stop at 30 s, also for very long rows', () => {
  expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => restartDelay(n, policy))).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  expect(restartDelay(5000, policy)).toBe(30_000);
  expect(restartDelay(0, policy)).toBe(500);
});

test('a child that exits soon after each start is restarted 8 times, then the stack gives up', () => {
  const decisions = exits(...Array.from({ length: 9 }, () => 1_000));
  expect(decisions.slice(0, 8).map((d) => d.action === 'restart' && [d.attempt, d.delayMs])).toEqual([
    [1, 500], [2, 1000], [3, 2000], [4, 4000], [5, 8000], [6, 16_000], [7, 30_000], [8, 30_000],
  ]);
  expect(decisions[8]).toMatchObject({ action: 'give-up', restarts: 8 });
});

test('an exit after a stable run starts a new row: first delay again, no give-up', () => {
  // Seven quick exits, then one after 60 s up, then quick again: the count starts over.
  const decisions = exits(10, 10, 10, 10, 10, 10, 10, 60_000, 10, 10);
  expect(decisions.map((d) => (d.action === 'restart' ? d.delayMs : d.action))).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 500, 1000, 2000]);
});

test('an exit just short of the stable time still counts in the row', () => {
  const decisions = exits(60_000, 59_999);
  expect(decisions.map((d) => d.action === 'restart' && d.attempt)).toEqual([1, 2]);
});

test('giveUpAfter 1: one restart, and the next quick exit gives up', () => {
  const one = { ...policy, giveUpAfter: 1 };
  const first = decideRestart(INITIAL_RESTART_STATE, 5, one);
  expect(first).toMatchObject({ action: 'restart', attempt: 1, delayMs: 500 });
  expect(decideRestart(first.state, 5, one)).toMatchObject({ action: 'give-up', restarts: 1 });
  // After a stable run the row is new, even from a state past the limit.
  expect(decideRestart({ exitsInRow: 50 }, 60_000, one)).toMatchObject({ action: 'restart', attempt: 1 });
});

test('RESTART_GIVE_UP_AFTER: default 8, at least 1, an integer (config/index.ts)', () => {
  expect(loadConfig({}).restartGiveUpAfter).toBe(8);
  expect(loadConfig({ RESTART_GIVE_UP_AFTER: '3' }).restartGiveUpAfter).toBe(3);
  expect(() => loadConfig({ RESTART_GIVE_UP_AFTER: '0' })).toThrow(new ConfigError('RESTART_GIVE_UP_AFTER must be at least 1, got 0'));
  expect(() => loadConfig({ RESTART_GIVE_UP_AFTER: 'often' })).toThrow(ConfigError);
});
