// Organization balances in the `balances` KV bucket, changed only by compare-and-set so that
// replicas never overwrite each other and a balance never goes below zero. Concurrent
// charges of one organization in this process are coalesced into one compare-and-set per
// round trip (DESIGN §3a: hot keys), each charge still accepted or refused on its own.
import type { KV } from '@nats-io/kv';
import type { BalanceReader } from '../core/accounts/ports';
import { decode } from '../core/bus/decode';
import { BUCKETS } from '../core/bus/names';
import type { Balance } from '../core/accounts/types';
import { isRevisionConflict } from '../infra/nats';
import type { PipelinedJetStream } from '../infra/pipelined-jetstream';
import { casKv, type CasKv } from './kv-cas';

interface Pending {
  readonly delta: number;
  /** A charge (negative delta) is refused rather than taking the balance below zero. */
  readonly floorAtZero: boolean;
  readonly resolve: (applied: boolean) => void;
  readonly reject: (err: unknown) => void;
}

export class BalanceNotFoundError extends Error {
  override readonly name = 'BalanceNotFoundError';
}

const MAX_CAS_ATTEMPTS = 50;

export class BalanceLedger implements BalanceReader {
  private readonly queues = new Map<string, Pending[]>();
  private readonly flushing = new Set<string>();

  private readonly cas: CasKv;

  /** `pipeline`: the process's pipelined JetStream client for the compare-and-sets (infra/nats.ts). */
  constructor(private readonly kv: KV, pipeline?: PipelinedJetStream) {
    this.cas = casKv(kv, pipeline ? { jetstream: pipeline, bucket: BUCKETS.balances } : undefined);
  }

  async get(orgId: string): Promise<Balance | null> {
    const entry = await this.kv.get(orgId);
    return entry && entry.operation === 'PUT' && entry.length > 0 ? decode('balance', entry.value) : null;
  }

  /** Sets an absolute balance (admin). */
  async set(orgId: string, balance: Balance): Promise<Balance> {
    await this.kv.put(orgId, JSON.stringify(balance));
    return balance;
  }

  /** Takes `micros` from the balance if it covers them; false when it does not. */
  charge(orgId: string, micros: number): Promise<boolean> {
    if (micros <= 0) return Promise.resolve(true);
    return this.enqueue(orgId, -micros, true);
  }

  /** Adds `micros` back (refunds, top-ups). */
  async credit(orgId: string, micros: number): Promise<void> {
    if (micros <= 0) return;
    await this.enqueue(orgId, micros, false);
  }

  private enqueue(orgId: string, delta: number, floorAtZero: boolean): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const queue = this.queues.get(orgId) ?? [];
      queue.push({ delta, floorAtZero, resolve, reject });
      this.queues.set(orgId, queue);
      if (!this.flushing.has(orgId)) void this.flush(orgId);
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
          batch.forEach((p, i) => p.resolve(outcomes[i] ?? false));
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.flushing.delete(orgId);
    }
  }

  private async applyBatch(orgId: string, batch: readonly Pending[]): Promise<boolean[]> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await this.cas.get(orgId);
      if (!entry || entry.value.length === 0) {
        if (batch.some((p) => p.delta > 0)) throw new BalanceNotFoundError(`organization ${orgId} has no balance`);
        return batch.map(() => false);
      }
      const balance = decode('balance', entry.value);
      let available = balance.availableMicros;
      const outcomes = batch.map((p) => {
        if (p.floorAtZero && available + p.delta < 0) return false;
        available += p.delta;
        return true;
      });
      if (available === balance.availableMicros) return outcomes;
      try {
        await this.cas.update(orgId, JSON.stringify({ ...balance, availableMicros: available }), entry.revision);
        return outcomes;
      } catch (err) {
        if (!isRevisionConflict(err)) throw err;
      }
    }
    throw new Error(`balance of ${orgId}: compare-and-set kept conflicting after ${MAX_CAS_ATTEMPTS} attempts`);
  }
}
