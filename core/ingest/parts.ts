// A request too large for one INGEST message goes as several (the gateway's bus: contacts in
// infra/bus/ingest-bus.ts, events in ./event-rows.ts): its items whole and in order, each part
// at most the bus's limit. One packing for both, and one refusal of an item that fits nowhere.
import { AppError } from '../errors';

/**
 * `items` in groups whose bytes, with `overhead` per group (the largest part's frame with no
 * item), stay within `limit`; `sizeOf` is an item's bytes in a part. Throws PAYLOAD_TOO_LARGE
 * naming the item (`nameOf`, e.g. `the event "e1"`) when one does not fit on its own.
 */
export function packParts<T>(items: readonly T[], overhead: number, limit: number, sizeOf: (item: T) => number, nameOf: (item: T) => string): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let bytes = overhead;
  for (const item of items) {
    const size = sizeOf(item);
    if (overhead + size > limit) {
      throw new AppError('PAYLOAD_TOO_LARGE', `${nameOf(item)} is ${size} bytes as stored, more than the ${limit} bytes the message bus carries per item (half the NATS server's max_payload, at most 512 KiB): nothing was stored; send it with fewer or shorter values`);
    }
    if (bytes + size > limit && group.length > 0) {
      groups.push(group);
      group = [];
      bytes = overhead;
    }
    group.push(item);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
