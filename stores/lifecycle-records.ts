// The lifecycle's records in NATS KV: message states written by compare-and-set (bucket
// `messages`), dead-lettered DLRs (`dead_dlrs`), once-only keys and the batch lifecycle that
// owns each message (`idempotency`). The per-message reads and writes go through the process's
// pipelined JetStream client when given (stores/kv-cas.ts: no request object, timer and Error
// per call, the client library's cost; docs/lifecycle.md), else through the client library's KV.
import type { KV } from '@nats-io/kv';
import { decode } from '../core/bus/decode';
import { KV_KEYS } from '../core/bus/names';
import type { DeadDlr, DeadLetters, LifecycleOwner, LifecycleOwners, LifecycleStates, OnceKeys, SmsMessage, VersionedMessage } from '../core/sms';
import { isRevisionConflict } from '../infra/nats';
import { casKv, type CasKv, type KvPipeline } from './kv-cas';
import { StateBatches } from './state-batches';

export type { KvPipeline } from './kv-cas';

export class KvLifecycleStates implements LifecycleStates {
  private readonly cas: CasKv;
  private readonly batches: StateBatches;

  constructor(kv: KV, pipeline?: KvPipeline) {
    const cas = casKv(kv, pipeline);
    this.cas = cas;
    this.batches = new StateBatches(async (key) => (await cas.get(key))?.value ?? null);
  }

  /**
   * The message's own state (`sms.<id>`), else its state as accepted in its request's record
   * (core/bus/state-batch.ts) at revision 0: the first replace creates its own key.
   */
  async read(messageId: string): Promise<VersionedMessage | null> {
    const entry = await this.cas.get(KV_KEYS.messageState(messageId));
    if (entry) return entry.value.length === 0 ? null : { message: decode('messageState', entry.value), revision: entry.revision };
    const accepted = await this.batches.find(messageId);
    return accepted ? { message: decode('messageState', accepted), revision: 0 } : null;
  }

  async replace(message: SmsMessage, revision: number): Promise<number | null> {
    try {
      const key = KV_KEYS.messageState(message.id);
      const value = JSON.stringify(message);
      return await (revision === 0 ? this.cas.create(key, value) : this.cas.update(key, value, revision));
    } catch (err) {
      if (isRevisionConflict(err)) return null;
      throw err;
    }
  }
}

export class KvDeadLetters implements DeadLetters {
  constructor(private readonly kv: KV) {}

  async put(dead: DeadDlr): Promise<void> {
    await this.kv.put(KV_KEYS.deadDlr(dead.tokenId, dead.messageId, dead.seq), JSON.stringify(dead));
  }
}

export class KvOnceKeys implements OnceKeys {
  private readonly cas: CasKv;

  constructor(kv: KV, pipeline?: KvPipeline) {
    this.cas = casKv(kv, pipeline);
  }

  async claim(key: string, value: string): Promise<boolean> {
    try {
      await this.cas.create(key, value);
      return true;
    } catch (err) {
      // Claimed before; any other failure is the caller's to retry (a refund must not be skipped).
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  async has(key: string): Promise<boolean> {
    return (await this.cas.get(key)) !== null;
  }
}

const utf8 = new TextDecoder();

/** Owners remembered per process: a message's owner never changes once claimed. */
const OWNER_CACHE_SIZE = 200_000;

/**
 * Message → batch lifecycle, in KV (`lifecycle.<message id>` = `<workflow id> <run id>`), with a
 * bounded in-process memory: the lifecycle bridge asks once per carrier event, and the claim
 * made by the batch in the same process answers without a round trip.
 */
export class KvLifecycleOwners implements LifecycleOwners {
  private readonly known = new Map<string, LifecycleOwner>();
  private readonly cas: CasKv;

  constructor(kv: KV, pipeline?: KvPipeline) {
    this.cas = casKv(kv, pipeline);
  }

  private remember(messageId: string, owner: LifecycleOwner): LifecycleOwner {
    if (this.known.size >= OWNER_CACHE_SIZE) {
      const oldest = this.known.keys().next();
      if (!oldest.done) this.known.delete(oldest.value);
    }
    this.known.set(messageId, owner);
    return owner;
  }

  async claim(messageId: string, owner: LifecycleOwner): Promise<LifecycleOwner> {
    try {
      await this.cas.create(KV_KEYS.lifecycleOwner(messageId), `${owner.workflowId} ${owner.runId}`);
      return this.remember(messageId, owner);
    } catch (err) {
      const existing = await this.read(messageId);
      if (!existing) throw err;
      return existing;
    }
  }

  async find(messageId: string): Promise<LifecycleOwner | null> {
    return this.known.get(messageId) ?? (await this.read(messageId));
  }

  private async read(messageId: string): Promise<LifecycleOwner | null> {
    const entry = await this.cas.get(KV_KEYS.lifecycleOwner(messageId));
    if (!entry || entry.value.length === 0) return null;
    const [workflowId = '', runId = ''] = utf8.decode(entry.value).split(' ');
    return this.remember(messageId, { workflowId, runId });
  }
}
