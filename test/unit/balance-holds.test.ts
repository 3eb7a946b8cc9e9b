// Charge holds in the balance value (docs/acceptance.md "Charges held until the stream has
// them"): what each change does to the balance and its holds, and the header that names holds
// on the bus. Pure code; the NATS side is test/integration/charge-settler.test.ts.
import type { Balance } from '../../core/accounts/types';
import { formatHoldRefs, parseHoldRefs } from '../../core/bus/names';
import { applyOps, type BalanceOp } from '../../stores/balance-ledger';

const start: Balance = { currency: 'EUR', availableMicros: 1_000_000 };
const charge = (micros: number, holdId?: string, at = 1_000, ids?: string[]): BalanceOp => ({ kind: 'charge', micros, hold: holdId ? { id: holdId, held: { micros, at, ...(ids ? { ids } : {}) } } : undefined });

describe('applyOps', () => {
  test('a charge with a hold takes the money and holds it in the same value; without one it only takes it', () => {
    const { balance, outcomes, changed } = applyOps(start, [charge(75_000, 'h1', 5, ['m1']), charge(25_000)]);
    expect(outcomes).toEqual([true, true]);
    expect(changed).toBe(true);
    expect(balance).toEqual({ currency: 'EUR', availableMicros: 900_000, holds: { h1: { micros: 75_000, at: 5, ids: ['m1'] } } });
  });

  test('a charge the balance does not cover is refused and holds nothing; the next one still fits', () => {
    const { balance, outcomes } = applyOps({ currency: 'EUR', availableMicros: 100_000 }, [charge(150_000, 'big'), charge(100_000, 'fits')]);
    expect(outcomes).toEqual([false, true]);
    expect(balance.availableMicros).toBe(0);
    expect(Object.keys(balance.holds ?? {})).toEqual(['fits']);
  });

  test('settling drops the hold and keeps the money taken; the last hold gone, the value has no holds field', () => {
    const held = applyOps(start, [charge(75_000, 'h1')]).balance;
    const { balance, changed } = applyOps(held, [{ kind: 'settle', holdId: 'h1' }]);
    expect(changed).toBe(true);
    expect(balance).toEqual({ currency: 'EUR', availableMicros: 925_000 });
  });

  test('settling a hold that is not there changes nothing (the settler after the gateway, or twice)', () => {
    const { balance, changed } = applyOps(start, [{ kind: 'settle', holdId: 'gone' }, { kind: 'settle', holdId: 'gone' }]);
    expect(changed).toBe(false);
    expect(balance).toEqual(start);
  });

  test('a credit reversing a held charge gives the money back and drops the hold together', () => {
    const held = applyOps(start, [charge(75_000, 'h1'), charge(10_000, 'h2')]).balance;
    const { balance } = applyOps(held, [{ kind: 'credit', micros: 75_000, holdId: 'h1' }]);
    expect(balance).toEqual({ currency: 'EUR', availableMicros: 990_000, holds: { h2: { micros: 10_000, at: 1_000 } } });
  });

  test('refund-hold refunds only a hold taken before the cut-off, once, and answers the hold', () => {
    const held = applyOps(start, [charge(75_000, 'old', 1_000, ['m1']), charge(10_000, 'young', 9_000)]).balance;
    const first = applyOps(held, [{ kind: 'refund-hold', holdId: 'old', heldBefore: 5_000 }, { kind: 'refund-hold', holdId: 'young', heldBefore: 5_000 }]);
    expect(first.outcomes).toEqual([{ micros: 75_000, at: 1_000, ids: ['m1'] }, null]);
    expect(first.balance).toEqual({ currency: 'EUR', availableMicros: 990_000, holds: { young: { micros: 10_000, at: 9_000 } } });
    const again = applyOps(first.balance, [{ kind: 'refund-hold', holdId: 'old', heldBefore: 5_000 }]);
    expect(again.outcomes).toEqual([null]);
    expect(again.changed).toBe(false);
  });

  test('a settled hold is never refunded (the stream had it)', () => {
    const held = applyOps(start, [charge(75_000, 'h1', 1_000)]).balance;
    const { balance, outcomes } = applyOps(held, [{ kind: 'settle', holdId: 'h1' }, { kind: 'refund-hold', holdId: 'h1', heldBefore: 99_000 }]);
    expect(outcomes[1]).toBeNull();
    expect(balance.availableMicros).toBe(925_000);
  });

  test('an admin set replaces the amount and the currency but keeps the holds', () => {
    const held = applyOps(start, [charge(75_000, 'h1')]).balance;
    const { balance } = applyOps(held, [{ kind: 'set', balance: { currency: 'USD', availableMicros: 5_000_000 } }]);
    expect(balance).toEqual({ currency: 'USD', availableMicros: 5_000_000, holds: { h1: { micros: 75_000, at: 1_000 } } });
  });

  test('the input balance is never mutated', () => {
    const held = applyOps(start, [charge(75_000, 'h1')]).balance;
    const copy = JSON.parse(JSON.stringify(held)) as Balance;
    applyOps(held, [{ kind: 'settle', holdId: 'h1' }, charge(1, 'h2')]);
    expect(held).toEqual(copy);
  });
});

describe('the hold header (HEADERS.chargeHolds)', () => {
  test('round-trips organization and hold ids, an organization id with a slash included', () => {
    const refs = [{ orgId: 'org-1', holdId: '0190a0b0-0000-7000-8000-000000000001' }, { orgId: 'team/eu', holdId: 'h2' }];
    expect(formatHoldRefs(refs)).toBe('org-1/0190a0b0-0000-7000-8000-000000000001 team/eu/h2');
    expect(parseHoldRefs(formatHoldRefs(refs))).toEqual(refs);
  });

  test('no header, an empty one, or a malformed part names no hold', () => {
    expect(parseHoldRefs(undefined)).toEqual([]);
    expect(parseHoldRefs('')).toEqual([]);
    expect(parseHoldRefs('noslash /lead trail/ ok/h')).toEqual([{ orgId: 'ok', holdId: 'h' }]);
  });
});
