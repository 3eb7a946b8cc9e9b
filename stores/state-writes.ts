// Writing the accepted states of new messages to the `messages` bucket (read-your-writes for
// GET /sms/{id}, and what the lifecycle reads first). A request of several messages writes one
// record (core/bus/state-batch.ts); single-message requests of one event-loop turn, whose ids
// share a batch (core/ids.ts newIds), are written together as one record too. A record is
// created once, never replaced: created with "no message on this subject yet", so a batch
// whose record exists (a late message of an earlier turn) writes a key per message instead,
// which readers take first anyway.
import { KV_KEYS, BUCKETS } from '../core/bus/names';
import { stateBatchRecord } from '../core/bus/state-batch';
import { batchOf } from '../core/ids';
import type { SmsMessage } from '../core/sms';
import { isRevisionConflict } from '../infra/nats';
import type { PipelinedJetStream } from '../infra/pipelined-jetstream';
import { kvSubject } from './kv-cas';

/** A record stays under this and half the server's max_payload (1 MiB by default), else a key per message. */
const MAX_RECORD_BYTES = 512 * 1024;
/** Batches whose record this process created or tried, so a late message does not try again. */
const REMEMBERED_BATCHES = 4096;

const messageSubject = (id: string): string => kvSubject(BUCKETS.messages, KV_KEYS.messageState(id));
const recordSubject = (batch: string): string => kvSubject(BUCKETS.messages, KV_KEYS.messageBatch(batch));

interface Waiting {
  readonly messages: SmsMessage[];
  readonly settle: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

export class StateWrites {
  private waiting = new Map<string, Waiting>();
  private flushScheduled = false;
  private readonly tried = new Set<string>();

  constructor(private readonly jetstream: PipelinedJetStream, private readonly encode: (message: SmsMessage) => Buffer) {}

  /** Resolves once every state is stored (acknowledged by the stream). */
  put(messages: readonly SmsMessage[]): Promise<void> {
    const first = messages[0];
    if (!first) return Promise.resolve();
    if (messages.length > 1) return this.write(messages);
    const batch = batchOf(first.id);
    if (this.tried.has(batch)) return this.writeEach(messages);
    let group = this.waiting.get(batch);
    if (!group) {
      group = { messages: [], settle: [] };
      this.waiting.set(batch, group);
    }
    group.messages.push(first);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
    const target = group;
    return new Promise<void>((resolve, reject) => { target.settle.push({ resolve, reject }); });
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const groups = this.waiting;
    this.waiting = new Map();
    for (const group of groups.values()) {
      this.write(group.messages).then(
        () => { for (const s of group.settle) s.resolve(); },
        (err: unknown) => { for (const s of group.settle) s.reject(err); },
      );
    }
  };

  /** Messages whose ids share one batch: one record if it can be made and does not exist yet, else a key each. */
  private async write(messages: readonly SmsMessage[]): Promise<void> {
    const batch = batchOf((messages[0] as SmsMessage).id);
    const record = messages.length > 1 && messages.every((m) => batchOf(m.id) === batch) ? stateBatchRecord(messages.map((m) => m.id), messages.map(this.encode)) : null;
    if (!record || record.length > this.jetstream.bodyLimit(MAX_RECORD_BYTES) || this.tried.has(batch)) return this.writeEach(messages);
    this.remember(batch);
    try {
      await this.jetstream.publishIfLast(recordSubject(batch), record, 0);
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
      await this.writeEach(messages);
    }
  }

  private async writeEach(messages: readonly SmsMessage[]): Promise<void> {
    await Promise.all(messages.map((m) => this.jetstream.publish(messageSubject(m.id), this.encode(m))));
  }

  private remember(batch: string): void {
    if (this.tried.size >= REMEMBERED_BATCHES) this.tried.delete(this.tried.values().next().value as string);
    this.tried.add(batch);
  }
}
