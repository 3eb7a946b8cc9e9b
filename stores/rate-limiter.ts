// Requests per minute per organization per endpoint, counted in the `ratelimits` KV bucket
// so that every replica shares one counter (fixed one-minute windows; keys expire on their
// own). Concurrent requests for one counter in this process are coalesced into one
// compare-and-set, so a hot counter does not cap throughput.
import type { KV } from '@nats-io/kv';
import { BUCKETS } from '../core/bus/names';
import { isRevisionConflict } from '../infra/nats';
import type { PipelinedJetStream } from '../infra/pipelined-jetstream';
import { casKv, LastWrites, type CasKv } from './kv-cas';

import type { RateDecision, RateLimits } from '../core/accounts';

export type { RateDecision } from '../core/accounts';

interface Waiter {
  readonly resolve: (d: RateDecision) => void;
  readonly reject: (err: unknown) => void;
}

interface Counter {
  readonly key: string;
  readonly limit: number;
  readonly reset: number;
  waiters: Waiter[];
}

const WINDOW_SECONDS = 60;
/** Counters whose last write by this process is remembered (keys carry their window: the oldest go first). */
const KNOWN_COUNTERS = 10_000;

export class RateLimiter implements RateLimits {
  private readonly pending = new Map<string, Counter>();
  private readonly flushing = new Set<string>();
  private readonly known = new LastWrites<number>(KNOWN_COUNTERS);

  private readonly kv: CasKv;
  private readonly text = new TextDecoder();

  /** `pipeline`: the process's pipelined JetStream client for the compare-and-sets (infra/nats.ts). */
  constructor(kv: KV, private readonly clock: () => number = Date.now, pipeline?: PipelinedJetStream) {
    this.kv = casKv(kv, pipeline ? { jetstream: pipeline, bucket: BUCKETS.ratelimits } : undefined);
  }

  /** Counts one request of `scope` (e.g. an organization id) on `endpoint`. */
  take(scope: string, endpoint: string, limit: number): Promise<RateDecision> {
    const nowSeconds = Math.floor(this.clock() / 1000);
    const windowStart = nowSeconds - (nowSeconds % WINDOW_SECONDS);
    const key = `${scope}.${endpoint}.${windowStart}`;
    return new Promise<RateDecision>((resolve, reject) => {
      const counter = this.pending.get(key) ?? { key, limit, reset: windowStart + WINDOW_SECONDS, waiters: [] };
      counter.waiters.push({ resolve, reject });
      this.pending.set(key, counter);
      if (!this.flushing.has(key)) void this.flush(key);
    });
  }

  private async flush(key: string): Promise<void> {
    this.flushing.add(key);
    try {
      for (;;) {
        const counter = this.pending.get(key);
        if (!counter || counter.waiters.length === 0) break;
        this.pending.delete(key);
        try {
          const before = await this.add(counter);
          counter.waiters.forEach((w, i) => {
            const count = before + i + 1;
            w.resolve({ allowed: count <= counter.limit, limit: counter.limit, remaining: Math.max(0, counter.limit - count), reset: counter.reset });
          });
        } catch (err) {
          for (const w of counter.waiters) w.reject(err);
        }
      }
    } finally {
      this.flushing.delete(key);
    }
  }

  /** Adds the admitted part of the waiters to the shared count; returns the count before. */
  private async add(counter: Counter): Promise<number> {
    for (let attempt = 0; attempt < 50; attempt++) {
      // The count this process last wrote saves the read: a window's count only grows, so a
      // stale one can only admit too much, which the compare-and-set then refuses.
      const known = this.known.get(counter.key);
      const entry = known ? null : await this.kv.get(counter.key);
      const exists = known !== undefined || (entry !== null && entry.value.length > 0);
      const before = known ? known.value : exists && entry ? Number(this.text.decode(entry.value)) : 0;
      const admitted = Math.max(0, Math.min(counter.waiters.length, counter.limit - before));
      if (admitted === 0) return before;
      try {
        // A delete marker is replaced at its revision; a key with no message is created.
        const value = String(before + admitted);
        const at = known?.revision ?? entry?.revision;
        const written = at === undefined ? await this.kv.create(counter.key, value) : await this.kv.update(counter.key, value, at);
        this.known.set(counter.key, before + admitted, written);
        return before;
      } catch (err) {
        this.known.forget(counter.key);
        if (!isRevisionConflict(err)) throw err;
      }
    }
    throw new Error(`rate-limit counter ${counter.key}: compare-and-set kept conflicting`);
  }
}
