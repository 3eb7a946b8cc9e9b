// Organization balances in the `balances` KV bucket, changed only by compare-and-set so that
// replicas never overwrite each other and a balance never goes below zero. Concurrent
// charges of one organization in this process are coalesced into one compare-and-set per
// round trip (DESIGN §3a: hot keys), each charge still accepted or refused on its own.
import type { KV } from '@nats-io/kv';
import type { Balance, BalanceReader, ChargeHold } from '../core/accounts';
import { decode } from '../core/bus/decode';
import { BUCKETS } from '../core/bus/names';
import type { Funds, HoldSpec } from '../core/sms';
import { isRevisionConflict } from '../infra/nats';
import type { PipelinedJetStream } from '../infra/pipelined-jetstream';
import { casKv, LastWrites, type CasKv } from './kv-cas';
import { HeldBalance, type BalanceOp, type BalanceOutcome } from './held-balance';

export type { BalanceOp } from './held-balance';

interface Pending {
  readonly op: BalanceOp;
  readonly resolve: (outcome: BalanceOutcome) => void;
  readonly reject: (err: unknown) => void;
}

export class BalanceNotFoundError extends Error {
  override readonly name = 'BalanceNotFoundError';
}

const MAX_CAS_ATTEMPTS = 50;
/** Balances whose last write by this process is remembered (one entry per organization). */
const KNOWN_BALANCES = 10_000;
/**
 * A settle waits this long for the next charge of its organization, whose write then carries it:
 * under load, settling costs no write of its own.
 */
const SETTLE_DELAY_MS = 25;

export class BalanceLedger implements BalanceReader, Funds {
  private readonly queues = new Map<string, Pending[]>();
  private readonly flushing = new Set<string>();
  private readonly known = new LastWrites<HeldBalance>(KNOWN_BALANCES);
  /** Organizations whose queued settles wait for a charge to ride with (SETTLE_DELAY_MS). */
  private readonly delayed = new Set<string>();

  private readonly cas: CasKv;

  /** `pipeline`: the process's pipelined JetStream client for the compare-and-sets (infra/nats.ts). */
  constructor(private readonly kv: KV, pipeline?: PipelinedJetStream) {
    this.cas = casKv(kv, pipeline ? { jetstream: pipeline, bucket: BUCKETS.balances } : undefined);
  }

  async get(orgId: string): Promise<Balance | null> {
    const entry = await this.kv.get(orgId);
    return entry && entry.operation === 'PUT' && entry.length > 0 ? decode('balance', entry.value) : null;
  }

  /** Sets an absolute balance (admin); charges held open stay held. */
  async set(orgId: string, balance: Balance): Promise<Balance> {
    await this.enqueue(orgId, { kind: 'set', balance: { currency: balance.currency, availableMicros: balance.availableMicros } });
    return balance;
  }

  /** Takes `micros` from the balance if it covers them (and holds them open under `hold`); false when it does not. */
  charge(orgId: string, micros: number, hold?: HoldSpec): Promise<boolean> {
    if (micros <= 0) return Promise.resolve(true);
    const held = hold ? { id: hold.id, held: { micros, at: Date.now(), ...(hold.ids && hold.ids.length > 0 ? { ids: hold.ids } : {}) } } : undefined;
    return this.enqueue(orgId, { kind: 'charge', micros, hold: held }) as Promise<boolean>;
  }

  /** Adds `micros` back (refunds, top-ups); `holdId`: the hold of the charge this reverses goes with it. */
  async credit(orgId: string, micros: number, holdId?: string): Promise<void> {
    if (micros <= 0 && !holdId) return;
    await this.enqueue(orgId, { kind: 'credit', micros: Math.max(0, micros), holdId });
  }

  /**
   * Credits `micros` under `key` unless the balance already holds a refund under it: true when
   * credited now. The key stays in the balance until forgetRefund (core/sms/refund.ts).
   */
  async refundOnce(orgId: string, key: string, micros: number): Promise<boolean> {
    return (await this.enqueue(orgId, { kind: 'refund', key, refund: { micros, at: Date.now() } })) as boolean;
  }

  /** Drops a refund's key once its done-marker is written; rides with the next change of the balance. */
  async forgetRefund(orgId: string, key: string): Promise<void> {
    await this.enqueue(orgId, { kind: 'forget-refund', key }, SETTLE_DELAY_MS);
  }

  /** The held charge is final; written with the next change of the balance (not awaited). */
  settle(orgId: string, holdId: string): void {
    this.enqueue(orgId, { kind: 'settle', holdId }, SETTLE_DELAY_MS).catch(() => {
      // The charge settler settles it from the stream message's header.
    });
  }

  async isHeld(orgId: string, messageId: string): Promise<boolean> {
    const holds = await this.holds(orgId);
    if (!holds) return false;
    if (holds[messageId]) return true;
    return Object.values(holds).some((h) => h.ids?.includes(messageId) ?? false);
  }

  async openHold(orgId: string, holdId: string): Promise<ChargeHold | null> {
    return (await this.holds(orgId))?.[holdId] ?? null;
  }

  /** The open holds as stored now (a fresh read, never this process's last write). */
  private async holds(orgId: string): Promise<Balance['holds']> {
    const entry = await this.cas.get(orgId);
    if (!entry || entry.value.length === 0) return undefined;
    return decode('balance', entry.value).holds;
  }

  /** Settles several holds in one write (the charge settler, from the stream's headers). */
  async settleAll(orgId: string, holdIds: readonly string[]): Promise<void> {
    await Promise.all(holdIds.map((holdId) => this.enqueue(orgId, { kind: 'settle', holdId })));
  }

  /** Refunds a hold still open that was taken before `heldBefore` (ms); the refunded hold, or null. */
  async refundHold(orgId: string, holdId: string, heldBefore: number): Promise<ChargeHold | null> {
    return (await this.enqueue(orgId, { kind: 'refund-hold', holdId, heldBefore })) as ChargeHold | null;
  }

  /** `delayMs`: the op may wait that long for another change of the balance to be written with. */
  private enqueue(orgId: string, op: BalanceOp, delayMs = 0): Promise<BalanceOutcome> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(orgId) ?? [];
      queue.push({ op, resolve, reject });
      this.queues.set(orgId, queue);
      if (this.flushing.has(orgId)) return;
      if (delayMs === 0) void this.flush(orgId);
      else if (!this.delayed.has(orgId)) {
        this.delayed.add(orgId);
        setTimeout(() => {
          this.delayed.delete(orgId);
          if (!this.flushing.has(orgId)) void this.flush(orgId);
        }, delayMs);
      }
    });
  }

  private async flush(orgId: string): Promise<void> {
    this.flushing.add(orgId);
    try {
      for (;;) {
        const batch = this.queues.get(orgId);
        if (!batch || batch.length === 0) break;
        this.queues.delete(orgId);
        try {
          const outcomes = await this.applyBatch(orgId, batch);
          batch.forEach((p, i) => p.resolve(outcomes[i]));
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.flushing.delete(orgId);
    }
  }

  private async applyBatch(orgId: string, batch: readonly Pending[]): Promise<BalanceOutcome[]> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      // This process's own last write, when it made one: a compare-and-set against it saves the
      // read. It is trusted only for a write, which fails if another writer came in between; an
      // outcome that writes nothing (a refused charge, a hold not found) is decided on a fresh read.
      const known = this.known.get(orgId);
      const entry = known ? null : await this.cas.get(orgId);
      const exists = known !== undefined || (entry !== null && entry.value.length > 0);
      const setOp = batch.find((p) => p.op.kind === 'set');
      if (!exists && !setOp) {
        if (batch.some((p) => (p.op.kind === 'credit' && p.op.micros > 0) || p.op.kind === 'refund')) throw new BalanceNotFoundError(`organization ${orgId} has no balance`);
        return batch.map((p) => (p.op.kind === 'charge' ? false : p.op.kind === 'refund-hold' ? null : undefined));
      }
      const stored = known?.value ?? HeldBalance.from(exists && entry ? decode('balance', entry.value) : { currency: (setOp?.op as { balance: Balance }).balance.currency, availableMicros: 0 });
      const revision = known?.revision ?? entry?.revision ?? 0;
      const { next, outcomes, changed } = stored.apply(batch.map((p) => p.op));
      // A refund found credited (false) is such an outcome too: decided on a fresh read.
      if (known && (!changed || outcomes.some((o) => o === false || o === null))) {
        this.known.forget(orgId);
        continue;
      }
      if (!changed) return outcomes;
      try {
        const value = next.text();
        const written = exists ? await this.cas.update(orgId, value, revision) : await this.cas.create(orgId, value);
        this.known.set(orgId, next, written);
        return outcomes;
      } catch (err) {
        this.known.forget(orgId);
        if (!isRevisionConflict(err)) throw err;
      }
    }
    throw new Error(`balance of ${orgId}: compare-and-set kept conflicting after ${MAX_CAS_ATTEMPTS} attempts`);
  }
}

/** The balance after `ops`, in order, and each op's outcome; pure (test/unit/balance-holds.test.ts). */
export function applyOps(balance: Balance, ops: readonly BalanceOp[]): { balance: Balance; outcomes: BalanceOutcome[]; changed: boolean } {
  const { next, outcomes, changed } = HeldBalance.from(balance).apply(ops);
  return { balance: next.toBalance(), outcomes, changed };
}
