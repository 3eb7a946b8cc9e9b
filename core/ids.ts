// Ids are UUIDv7: time-ordered, so ClickHouse ordering by id is ordering by creation.
import { v7, validate, version } from 'uuid';

export function newId(): string {
  return v7();
}

/** The ids of one request's items share all but their last byte (hex digits 35-36). */
const BATCH_PREFIX_LENGTH = 34;
export const MAX_IDS_PER_BATCH = 256;

/** The batch single-item requests draw from during one turn of the event loop. */
let shared: { readonly prefix: string; next: number } | undefined;

function sharedId(): string {
  if (!shared || shared.next >= MAX_IDS_PER_BATCH) {
    const opened = { prefix: v7().slice(0, BATCH_PREFIX_LENGTH), next: 0 };
    shared = opened;
    setImmediate(() => { if (shared === opened) shared = undefined; });
  }
  const id = shared.prefix + shared.next.toString(16).padStart(2, '0');
  shared.next += 1;
  return id;
}

/**
 * Ids for the `count` items of one request, in item order: one newId() whose last byte is the
 * item's index (RFC 9562 lets rand_b carry a counter), so every id of the request names its
 * batch (batchOf) and the request's message states can be one KV record (stores/state-writes.ts).
 * Single-item requests of one event-loop turn share a batch the same way (up to 256), so the
 * states of concurrent sends can be one record too. Still time-ordered: the uuid library orders
 * ids of one millisecond by a counter in the bytes before.
 */
export function newIds(count: number): string[] {
  if (count <= 1) return [sharedId()];
  if (count > MAX_IDS_PER_BATCH) throw new RangeError(`at most ${MAX_IDS_PER_BATCH} ids share a batch, asked for ${count}`);
  const prefix = v7().slice(0, BATCH_PREFIX_LENGTH);
  return Array.from({ length: count }, (_, i) => prefix + i.toString(16).padStart(2, '0'));
}

/** The batch an id of newIds would belong to (its first 34 characters). */
export function batchOf(id: string): string {
  return id.slice(0, BATCH_PREFIX_LENGTH);
}

export function isId(value: string): boolean {
  return validate(value) && version(value) === 7;
}

/** Milliseconds since the epoch encoded in a UUIDv7. */
export function idTime(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}
