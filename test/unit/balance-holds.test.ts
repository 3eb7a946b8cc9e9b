// Charge holds in the balance value (docs/acceptance.md "Charges held until the stream has
// them"): what each change does to the balance and its holds, and the header that names holds
// on the bus. Pure code; the NATS side is test/integration/charge-settler.test.ts.
import type { Balance, ChargeHold } from '../../core/accounts/types';
import { formatHoldRefs, parseHoldRefs } from '../../core/bus/names';
import fc from 'fast-check';
import { applyOps, type BalanceOp } from '../../stores/balance-ledger';
import { HeldBalance } from '../../stores/held-balance';

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

  test('a refund under a key is credited once while the balance holds the key, with its holds kept; forgetting the key drops it and nothing else', () => {
    const held = applyOps(start, [charge(75_000, 'h1', 1_000)]).balance;
    const refund: BalanceOp = { kind: 'refund', key: 'refund.m1', refund: { micros: 75_000, at: 7 } };
    const first = applyOps(held, [refund, refund]);
    expect(first.outcomes).toEqual([true, false]);
    expect(first.balance).toEqual({ currency: 'EUR', availableMicros: 1_000_000, holds: { h1: { micros: 75_000, at: 1_000 } }, refunds: { 'refund.m1': { micros: 75_000, at: 7 } } });
    const again = applyOps(first.balance, [refund]);
    expect(again).toMatchObject({ outcomes: [false], changed: false });
    const forgotten = applyOps(first.balance, [{ kind: 'forget-refund', key: 'refund.m1' }, { kind: 'forget-refund', key: 'refund.m1' }]);
    expect(forgotten.balance).toEqual({ currency: 'EUR', availableMicros: 1_000_000, holds: { h1: { micros: 75_000, at: 1_000 } } });
    expect(applyOps(start, [{ kind: 'forget-refund', key: 'none' }]).changed).toBe(false);
    const text = HeldBalance.from(first.balance).text();
    expect(text).toBe(JSON.stringify(first.balance));
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

describe('HeldBalance: the value the ledger writes', () => {
  // A few ids, so that later changes meet the holds earlier ones made.
  const holdId = fc.constantFrom('0190a0b0-0000-7000-8000-000000000001', '0190a0b0-0000-7000-8000-0000000000ff', 'h"1', 'é');
  const op: fc.Arbitrary<BalanceOp> = fc.oneof(
    fc.record({ kind: fc.constant('charge' as const), micros: fc.integer({ min: 1, max: 500_000 }), hold: fc.option(fc.record({ id: holdId, held: fc.record({ micros: fc.integer({ min: 1, max: 500_000 }), at: fc.integer({ min: 0, max: 20 }), ids: fc.option(fc.array(fc.uuid(), { maxLength: 3 }), { nil: undefined }) }, { requiredKeys: ['micros', 'at'] }) }), { nil: undefined }) }),
    fc.record({ kind: fc.constant('credit' as const), micros: fc.integer({ min: 0, max: 500_000 }), holdId: fc.option(holdId, { nil: undefined }) }),
    fc.record({ kind: fc.constant('settle' as const), holdId }),
    fc.record({ kind: fc.constant('refund-hold' as const), holdId, heldBefore: fc.integer({ min: 0, max: 20 }) }),
    fc.record({ kind: fc.constant('set' as const), balance: fc.record({ currency: fc.constantFrom('EUR', 'USD', 'CHF'), availableMicros: fc.integer({ min: 0, max: 10 ** 12 }) }) }),
  );

  /** The ledger's earlier implementation on a plain object of holds: the model. */
  function modelApply(balance: Balance, ops: readonly BalanceOp[]): { balance: Balance; outcomes: unknown[] } {
    let available = balance.availableMicros;
    let currency = balance.currency;
    const holds: Record<string, ChargeHold> = { ...balance.holds };
    const outcomes = ops.map((o) => {
      switch (o.kind) {
        case 'charge':
          if (available - o.micros < 0) return false;
          available -= o.micros;
          if (o.hold) holds[o.hold.id] = o.hold.held;
          return true;
        case 'credit':
          available += o.micros;
          if (o.holdId) delete holds[o.holdId];
          return undefined;
        case 'settle':
          delete holds[o.holdId];
          return undefined;
        case 'refund-hold': {
          const hold = holds[o.holdId];
          if (!hold || hold.at >= o.heldBefore) return null;
          available += hold.micros;
          delete holds[o.holdId];
          return hold;
        }
        case 'set':
          available = o.balance.availableMicros;
          currency = o.balance.currency;
          return undefined;
      }
    });
    return { balance: { currency, availableMicros: available, ...(Object.keys(holds).length > 0 ? { holds } : {}) }, outcomes };
  }

  test('after any batches of changes it is the balance a plain object of holds gives, and its text is that balance as JSON', () => {
    fc.assert(fc.property(fc.array(fc.array(op, { maxLength: 8 }), { maxLength: 8 }), (batches) => {
      let held = HeldBalance.from(start);
      let plain: Balance = start;
      for (const ops of batches) {
        const applied = held.apply(ops);
        const model = modelApply(plain, ops);
        expect(applied.outcomes).toEqual(model.outcomes);
        held = applied.next;
        plain = model.balance;
        expect(held.toBalance()).toEqual(plain);
        expect(held.text()).toBe(JSON.stringify(plain));
        expect(HeldBalance.from(JSON.parse(held.text()) as Balance).text()).toBe(held.text());
      }
    }), { numRuns: 300 });
  });

  test('applying changes leaves the balance it started from as it was (a refused compare-and-set retries from it)', () => {
    const before = HeldBalance.from(start).apply([charge(75_000, 'h1'), charge(10_000, 'h2')]).next;
    const text = before.text();
    const after = before.apply([{ kind: 'settle', holdId: 'h1' }, charge(1, 'h3'), { kind: 'refund-hold', holdId: 'h2', heldBefore: 99_999 }]);
    expect(after.changed).toBe(true);
    expect(before.text()).toBe(text);
    expect(after.next.toBalance().holds).toEqual({ h3: { micros: 1, at: 1_000 } });
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
