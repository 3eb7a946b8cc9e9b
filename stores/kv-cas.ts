// Compare-and-set access to one KV bucket (balances, rate limits, the lifecycle's per-message
// records): read a key with its revision, replace it only at that revision, create it only if
// absent, each answering the new revision. Over the process's pipelined JetStream client when
// given (no request object, timer and Error per call), else over the client library's KV.
import type { KV } from '@nats-io/kv';
import type { PipelinedJetStream } from '../infra/pipelined-jetstream';

/** The process's pipelined client and the bucket's name. */
export interface KvPipeline {
  readonly jetstream: PipelinedJetStream;
  readonly bucket: string;
}

export interface CasEntry {
  readonly value: Uint8Array;
  readonly revision: number;
}

export interface CasKv {
  /** The key's value and revision; null when absent; an empty value for a delete marker. */
  get(key: string): Promise<CasEntry | null>;
  /** Replaces the value if the key is still at `revision`; a lost race rejects (isRevisionConflict). */
  update(key: string, value: string, revision: number): Promise<number>;
  /** Creates the key if it has no message at all; a lost race rejects (isRevisionConflict). */
  create(key: string, value: string): Promise<number>;
}

/** The stream behind a KV bucket, and a key's subject in it (for the pipelined client). */
export const kvStream = (bucket: string): string => `KV_${bucket}`;
export const kvSubject = (bucket: string, key: string): string => `$KV.${bucket}.${key}`;

export function casKv(kv: KV, pipeline?: KvPipeline): CasKv {
  if (!pipeline) {
    return {
      get: async (key) => {
        const entry = await kv.get(key);
        if (!entry) return null;
        return { value: entry.operation === 'PUT' ? entry.value : new Uint8Array(0), revision: entry.revision };
      },
      update: (key, value, revision) => kv.update(key, value, revision),
      create: (key, value) => kv.create(key, value),
    };
  }
  const { jetstream, bucket } = pipeline;
  const stream = kvStream(bucket);
  const subject = (key: string): string => kvSubject(bucket, key);
  return {
    get: async (key) => {
      const entry = await jetstream.lastEntry(stream, subject(key));
      return entry ? { value: entry.data, revision: entry.revision } : null;
    },
    update: async (key, value, revision) => (await jetstream.publishIfLast(subject(key), value, revision)).seq,
    create: async (key, value) => (await jetstream.publishIfLast(subject(key), value, 0)).seq,
  };
}

/**
 * The value and revision this process last wrote, per key: a compare-and-set at that revision
 * saves the read, and fails (then reads) when another writer came in between. Bounded: past
 * `max` keys the oldest one goes.
 */
export class LastWrites<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly revision: number }>();

  constructor(private readonly max: number) {}

  get(key: string): { readonly value: V; readonly revision: number } | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V, revision: number): void {
    if (this.entries.size >= this.max && !this.entries.has(key)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, revision });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
