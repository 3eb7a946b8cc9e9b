// Failed SMPP binds throttled per system_id and per peer address (gateways/smpp/bind-throttle.ts,
// docs/smpp.md "Failed binds"; spec 1 §5 item 5 binds): lockout after the threshold within the
// window, its end by itself, password checks of a suspect key bounded, and nothing kept for
// binds that never failed. Driven by a fake clock: no sleeps.
import { BindThrottle, type BindThrottleOptions } from '../../gateways/smpp/bind-throttle';
import { FakeBindClock } from '../support/fake-bind-clock';

const OPTIONS: BindThrottleOptions = { bindFailureWindowMs: 60_000, maxBindFailuresPerSystemId: 5, maxBindFailuresPerAddress: 20, bindLockoutMs: 300_000, bindRefusalDelayMs: 1000 };
const A = { systemId: 'acme', address: '203.0.113.7' };

describe('SMPP failed-bind throttle (docs/smpp.md, spec 1 §5 item 5)', () => {
  let clock: FakeBindClock;
  let throttle: BindThrottle;
  beforeEach(() => {
    clock = new FakeBindClock(1_000_000);
    throttle = new BindThrottle(OPTIONS, clock);
  });

  it('locks a system_id out at the 5th failure within the window, from every address, and the lockout ends by itself', () => {
    for (let i = 0; i < 4; i++) expect(throttle.failed(A, true)).toEqual([]);
    expect(throttle.lockedOut(A)).toBeUndefined();
    expect(throttle.failed(A, true)).toEqual(['system_id']);
    expect(throttle.lockedOut(A)).toEqual({ scope: 'system_id', remainingMs: 300_000 });
    expect(throttle.lockedOut({ systemId: 'acme', address: '198.51.100.1' })).toMatchObject({ scope: 'system_id' });
    expect(throttle.lockedOut({ systemId: 'other', address: A.address })).toBeUndefined();
    clock.t += 299_999;
    expect(throttle.lockedOut(A)).toMatchObject({ scope: 'system_id', remainingMs: 1 });
    clock.t += 1;
    expect(throttle.lockedOut(A)).toBeUndefined();
    // The failures that caused the lockout are spent: a new window starts.
    expect(throttle.failed(A, true)).toEqual([]);
    expect(throttle.lockedOut(A)).toBeUndefined();
  });

  it('counts failures over a sliding window: 5 spread over more than the window lock nothing', () => {
    for (let i = 0; i < 10; i++) {
      expect(throttle.failed(A, true)).toEqual([]);
      clock.t += 15_001;
    }
    expect(throttle.lockedOut(A)).toBeUndefined();
  });

  it('a right password forgets the system_id failures, not the address failures', () => {
    const t = new BindThrottle({ ...OPTIONS, maxBindFailuresPerAddress: 6 }, clock);
    for (let i = 0; i < 4; i++) t.failed(A, true);
    t.succeeded(A);
    expect(t.failed(A, true)).toEqual([]);
    // 6 failures from the address (the success did not reset them), 2 of the system_id since it.
    expect(t.failed(A, true)).toEqual(['address']);
    expect(t.lockedOut({ systemId: 'other', address: A.address })).toMatchObject({ scope: 'address' });
  });

  it('locks an address out after 20 failures across system_ids (unknown ones counted per address only)', () => {
    for (let i = 0; i < 19; i++) expect(throttle.failed({ systemId: `guess${i}`, address: A.address }, false)).toEqual([]);
    expect(throttle.failed({ systemId: 'guess19', address: A.address }, false)).toEqual(['address']);
    expect(throttle.lockedOut({ systemId: 'acme', address: A.address })).toEqual({ scope: 'address', remainingMs: 300_000 });
    expect(throttle.lockedOut({ systemId: 'acme', address: '198.51.100.1' })).toBeUndefined();
    // Unknown system_ids leave no per-system_id state behind: only the address is remembered.
    expect(throttle.size).toBe(1);
  });

  it('a threshold of 0 turns that scope off', () => {
    const off = new BindThrottle({ ...OPTIONS, maxBindFailuresPerSystemId: 0, maxBindFailuresPerAddress: 0 }, clock);
    for (let i = 0; i < 50; i++) expect(off.failed(A, true)).toEqual([]);
    expect(off.lockedOut(A)).toBeUndefined();
    expect(off.size).toBe(0);
  });

  it('keeps nothing for a subject whose checks succeed', async () => {
    const admission = await throttle.admit(A);
    expect(admission.kind).toBe('admitted');
    throttle.succeeded(A);
    if (admission.kind === 'admitted') admission.release();
    expect(throttle.size).toBe(0);
  });

  it('runs at most (threshold - failures) password checks of one key at a time; waiters see a lockout started meanwhile', async () => {
    // Fresh key: 5 checks run at once, the 6th waits.
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => throttle.admit(A)));
    expect(first.every((a) => a.kind === 'admitted')).toBe(true);
    let sixth: string | undefined;
    const waiting = throttle.admit(A).then((a) => {
      sixth = a.kind;
      return a;
    });
    await Promise.resolve();
    expect(sixth).toBeUndefined();
    // All five fail: the key is locked before their slots are released, so the waiter is refused without a check.
    for (const a of first) {
      throttle.failed(A, true);
      if (a.kind === 'admitted') a.release();
    }
    expect((await waiting).kind).toBe('locked');
  });

  it('a key with failures lets fewer checks run at once, and a waiter goes on when a check succeeds', async () => {
    for (let i = 0; i < 4; i++) throttle.failed(A, true);
    const one = await throttle.admit(A);
    let next: string | undefined;
    const waiting = throttle.admit(A).then((a) => {
      next = a.kind;
      return a;
    });
    await Promise.resolve();
    expect(next).toBeUndefined();
    throttle.succeeded(A);
    if (one.kind === 'admitted') one.release();
    const second = await waiting;
    expect(second.kind).toBe('admitted');
    if (second.kind === 'admitted') second.release();
  });
});
