// carrier.events written in batches: the events the connector learns in one turn of the event
// loop (a socket read holds many submit_sm_resp and deliver_sm PDUs under load) go as one stream
// message `{ events: [...] }` (core/bus `carrierEvents`), in the order they were learned. One
// publish, one stored message, one delivery and one ack for the lifecycle per batch instead of
// per event. Each caller's promise settles with its batch: resolved once the stream has it,
// rejected with the publish's error (the callers retry or answer the SMSC with a temporary
// error, as they did for a single event). The batch's msgID is built from its events' own keys,
// so the same events grouped the same way are stored once within the duplicate window; a repeat
// grouped differently is stored again, and the lifecycle ignores an event it has applied.
import { createHash } from 'node:crypto';
import type { CarrierEvent } from '../../core/carrier';

/** Most events in one stream message (about 250 bytes each: well under NATS's 1 MB payload). */
export const EVENTS_PER_MESSAGE = 500;

interface Waiting {
  readonly event: CarrierEvent;
  readonly key: string;
  resolve(): void;
  reject(err: unknown): void;
}

/** Publishes one batch: its JSON and its msgID. */
export type PublishBatch = (data: string, msgID: string) => Promise<unknown>;

export function batchMsgId(keys: readonly string[]): string {
  return `events:${createHash('sha256').update(keys.join('\n')).digest('base64url').slice(0, 32)}`;
}

export class CarrierEventBatcher {
  private pending: Waiting[] = [];
  private scheduled = false;

  constructor(private readonly publishBatch: PublishBatch) {}

  /** Adds `event` (`key`: its own dedupe key) to this turn's batch; settles when the batch is written. */
  add(event: CarrierEvent, key: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ event, key, resolve, reject });
      if (this.pending.length >= EVENTS_PER_MESSAGE) this.write(this.pending.splice(0));
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          if (this.pending.length > 0) this.write(this.pending.splice(0));
        });
      }
    });
  }

  private write(batch: readonly Waiting[]): void {
    const data = JSON.stringify({ events: batch.map((w) => w.event) });
    this.publishBatch(data, batchMsgId(batch.map((w) => w.key))).then(
      () => { for (const w of batch) w.resolve(); },
      (err: unknown) => { for (const w of batch) w.reject(err); },
    );
  }
}
