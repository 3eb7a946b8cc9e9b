// A balance as the ledger keeps it between its writes: the open holds in a Map, each with its
// JSON text made once. Under load an organization's balance carries every charge whose stream
// message is not yet stored (tens to hundreds of holds), and the value is rewritten with each
// coalesced batch of charges: copying a plain object of holds (dictionary-mode after its first
// delete) and serializing it whole cost 129 µs per batch at 60 holds; a Map copy and the holds'
// kept texts cost 11 (bench/balance-holds.ts, docs/acceptance.md, "2026-11-24 02:36–04:50 UTC").
import type { Balance, ChargeHold, PendingRefund } from '../core/accounts';

/** One change to an organization's balance, applied with whatever else is queued for it. */
export type BalanceOp =
  | { readonly kind: 'charge'; readonly micros: number; readonly hold: { readonly id: string; readonly held: ChargeHold } | undefined }
  | { readonly kind: 'credit'; readonly micros: number; readonly holdId: string | undefined }
  | { readonly kind: 'settle'; readonly holdId: string }
  /** The charge settler's refund: only a hold still open and taken before `heldBefore`. */
  | { readonly kind: 'refund-hold'; readonly holdId: string; readonly heldBefore: number }
  /** An absolute balance (admin); the holds stay. */
  | { readonly kind: 'set'; readonly balance: Balance }
  /** A refund under `key`, credited once: kept under its key until `forget-refund` (core/sms/refund.ts). */
  | { readonly kind: 'refund'; readonly key: string; readonly refund: PendingRefund }
  | { readonly kind: 'forget-refund'; readonly key: string };

/**
 * A charge: applied or refused; a refund-hold: the hold refunded, or null; a refund: credited now
 * (true) or found credited under its key (false); else undefined.
 */
export type BalanceOutcome = boolean | ChargeHold | null | undefined;

interface HoldEntry {
  readonly hold: ChargeHold;
  /** `"<id>":<hold as JSON>`, as it appears in the stored value. */
  readonly json: string;
}

const entry = (id: string, hold: ChargeHold): HoldEntry => ({ hold, json: `${JSON.stringify(id)}:${JSON.stringify(hold)}` });

export class HeldBalance {
  private constructor(
    readonly currency: string,
    readonly availableMicros: number,
    private readonly holds: ReadonlyMap<string, HoldEntry>,
    private readonly refunds: Readonly<Record<string, PendingRefund>> | undefined,
  ) {}

  static from(balance: Balance): HeldBalance {
    const holds = new Map<string, HoldEntry>();
    for (const [id, hold] of Object.entries(balance.holds ?? {})) holds.set(id, entry(id, hold));
    const refunds = balance.refunds && Object.keys(balance.refunds).length > 0 ? balance.refunds : undefined;
    return new HeldBalance(balance.currency, balance.availableMicros, holds, refunds);
  }

  /** The balance after `ops`, in order, and each op's outcome; this one is left as it is. */
  apply(ops: readonly BalanceOp[]): { next: HeldBalance; outcomes: BalanceOutcome[]; changed: boolean } {
    let available = this.availableMicros;
    let currency = this.currency;
    let copy: Map<string, HoldEntry> | undefined;
    const held = (): Map<string, HoldEntry> => (copy ??= new Map(this.holds));
    const current = (id: string): ChargeHold | undefined => (copy ?? this.holds).get(id)?.hold;
    // Pending refunds are few (each lives from its credit to its marker): copied whole when changed.
    let refunds = this.refunds;
    let changed = false;
    const outcomes = ops.map((op): BalanceOutcome => {
      switch (op.kind) {
        case 'charge':
          if (available - op.micros < 0) return false;
          available -= op.micros;
          if (op.hold) held().set(op.hold.id, entry(op.hold.id, op.hold.held));
          changed = true;
          return true;
        case 'credit':
          available += op.micros;
          if (op.holdId && current(op.holdId)) held().delete(op.holdId);
          changed = true;
          return undefined;
        case 'settle':
          if (current(op.holdId)) {
            held().delete(op.holdId);
            changed = true;
          }
          return undefined;
        case 'refund-hold': {
          const hold = current(op.holdId);
          if (!hold || hold.at >= op.heldBefore) return null;
          available += hold.micros;
          held().delete(op.holdId);
          changed = true;
          return hold;
        }
        case 'set':
          available = op.balance.availableMicros;
          currency = op.balance.currency;
          changed = true;
          return undefined;
        case 'refund':
          if (refunds?.[op.key]) return false;
          available += op.refund.micros;
          refunds = { ...refunds, [op.key]: op.refund };
          changed = true;
          return true;
        case 'forget-refund': {
          if (!refunds?.[op.key]) return undefined;
          const { [op.key]: _forgotten, ...rest } = refunds;
          refunds = Object.keys(rest).length > 0 ? rest : undefined;
          changed = true;
          return undefined;
        }
      }
    });
    return { next: new HeldBalance(currency, available, copy ?? this.holds, refunds), outcomes, changed };
  }

  /** The value as stored: the same JSON as `JSON.stringify(this.toBalance())`. */
  text(): string {
    const head = `{"currency":${JSON.stringify(this.currency)},"availableMicros":${JSON.stringify(this.availableMicros)}`;
    const refunds = this.refunds ? `,"refunds":${JSON.stringify(this.refunds)}` : '';
    if (this.holds.size === 0) return `${head}${refunds}}`;
    let holds = '';
    for (const e of this.holds.values()) holds += holds.length === 0 ? e.json : `,${e.json}`;
    return `${head},"holds":{${holds}}${refunds}}`;
  }

  toBalance(): Balance {
    const refunds = this.refunds ? { refunds: this.refunds } : {};
    if (this.holds.size === 0) return { currency: this.currency, availableMicros: this.availableMicros, ...refunds };
    const holds: Record<string, ChargeHold> = {};
    for (const [id, e] of this.holds) holds[id] = e.hold;
    return { currency: this.currency, availableMicros: this.availableMicros, holds, ...refunds };
  }
}
