// Ids are UUIDv7: time-ordered, so ClickHouse ordering by id is ordering by creation.
import { v7, validate, version } from 'uuid';

export function newId(): string {
  return v7();
}

/** The ids of one request's items share all but their last byte (hex digits 35-36). */
const BATCH_PREFIX_LENGTH = 34;
export const MAX_IDS_PER_BATCH = 256;

/**
 * Ids for the `count` items of one request, in item order. One item gets a plain newId(); more
 * get one newId() whose last byte is the item's index (RFC 9562 lets rand_b carry a counter),
 * so every id of the request names its batch (batchOf) and the request's message states can be
 * one KV record (stores/message-state.ts). Still time-ordered: the uuid library orders ids of
 * one millisecond by a counter in the bytes before.
 */
export function newIds(count: number): string[] {
  if (count <= 1) return [v7()];
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
