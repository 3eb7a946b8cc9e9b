// Reading a message's accepted state from its request's record (`smsb.<batch>` in the `messages`
// bucket, core/bus/state-batch.ts). A record is written once and never changed, so a process
// remembers the last few it read, and concurrent reads of one request's messages (a lifecycle
// handing over a batch, a client polling a bulk) share one fetch instead of each pulling the
// whole record.
import { KV_KEYS } from '../core/bus/names';
import { findInStateBatch } from '../core/bus/state-batch';
import { batchOf } from '../core/ids';

const REMEMBERED_RECORDS = 32;

export class StateBatches {
  private readonly records = new Map<string, Promise<Uint8Array | null>>();

  /** `fetch`: the value of a key of the `messages` bucket, or null when it has none. */
  constructor(private readonly fetch: (key: string) => Promise<Uint8Array | null>) {}

  /** The JSON of message `id` as accepted, or null when no record holds it. */
  async find(id: string): Promise<Uint8Array | null> {
    const record = await this.record(batchOf(id));
    return record ? findInStateBatch(record, id) : null;
  }

  private record(batch: string): Promise<Uint8Array | null> {
    const known = this.records.get(batch);
    if (known) return known;
    // A copy: the client's message bytes may be a view into a buffer it reuses.
    const fetched = this.fetch(KV_KEYS.messageBatch(batch)).then((value) => (value && value.length > 0 ? Uint8Array.from(value) : null));
    if (this.records.size >= REMEMBERED_RECORDS) this.records.delete(this.records.keys().next().value as string);
    this.records.set(batch, fetched);
    // Only a record that exists is remembered.
    const forget = (): void => { if (this.records.get(batch) === fetched) this.records.delete(batch); };
    fetched.then((record) => { if (!record) forget(); }, forget);
    return fetched;
  }
}
