// A message's refund credited exactly once (core/sms/refund.ts; DESIGN §4), over in-memory ports:
// the balance keeps a refund's key from its credit until its done-marker is written. Two attempts
// of one refund running at once (a local activity's attempt timed out while still running, and
// the worker started the next) must not credit twice.
import { refundOnce, type OnceKeys, type RefundLedger } from '../../core/sms';

/** A balance with pending refund keys; `gate`, when set, holds the next credit until released. */
class Ledger implements RefundLedger {
  readonly credits: number[] = [];
  readonly keys = new Set<string>();
  gate: Promise<void> | undefined;

  async refundOnce(_orgId: string, key: string, micros: number): Promise<boolean> {
    const gate = this.gate;
    this.gate = undefined;
    if (gate) await gate;
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    this.credits.push(micros);
    return true;
  }

  async forgetRefund(_orgId: string, key: string): Promise<void> {
    this.keys.delete(key);
  }
}

class Marks implements OnceKeys {
  readonly claimed = new Map<string, string>();
  async claim(key: string, value: string): Promise<boolean> {
    if (this.claimed.has(key)) return false;
    this.claimed.set(key, value);
    return true;
  }
  async has(key: string): Promise<boolean> {
    return this.claimed.has(key);
  }
}

describe('refundOnce (DESIGN §4: a refund is credited exactly once)', () => {
  test('run again after it finished: credited once, no key left in the balance', async () => {
    const ledger = new Ledger();
    const marks = new Marks();
    expect(await refundOnce(ledger, marks, 'org-1', 'refund.m1', 75_000)).toBe(true);
    expect(await refundOnce(ledger, marks, 'org-1', 'refund.m1', 75_000)).toBe(false);
    expect(ledger.credits).toEqual([75_000]);
    expect(ledger.keys.size).toBe(0);
  });

  test('a second attempt started while the first is still crediting (the first timed out): credited once, not twice', async () => {
    const ledger = new Ledger();
    const marks = new Marks();
    let open: () => void = () => undefined;
    ledger.gate = new Promise<void>((resolve) => { open = resolve; });
    const first = refundOnce(ledger, marks, 'org-1', 'refund.m1', 75_000);
    // The second attempt starts while the first waits for its credit's answer.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const second = refundOnce(ledger, marks, 'org-1', 'refund.m1', 75_000);
    await new Promise<void>((resolve) => setImmediate(resolve));
    open();
    const outcomes = await Promise.all([first, second]);
    expect(ledger.credits).toEqual([75_000]);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(marks.claimed.has('refund.m1')).toBe(true);
    expect(ledger.keys.size).toBe(0);
  });
});
