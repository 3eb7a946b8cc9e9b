// The ingest writer's filter of a scope's stored keys (core/ingest/key-filter.ts): it may answer
// "maybe" for a key never added (a lookup in the table decides), never "no" for one that was
// (spec 2 §2.2: a repeated _event_id is a duplicate, so a missed one would be stored twice).
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { KeyFilter, keyHash, loadKeyHash, MIN_SEGMENT_KEYS } from '../../core/ingest/key-filter';

describe('key filter', () => {
  test('keyHash refuses to run before the hash is loaded, naming what to call', () => {
    expect(() => keyHash('evt-1')).toThrow(/loadKeyHash/);
  });

  describe('loaded', () => {
    beforeAll(async () => {
      await loadKeyHash();
    });

    test('XXH64 of the id, split into its 32-bit halves (the values ClickHouse xxHash64 gives)', () => {
      // xxHash64('evt-1') = 4096269724203834812 = 0x38D8_6A64_0C46_DDBC, as chdb computes it (test/integration/key-filters.test.ts checks the engine).
      const h = 4096269724203834812n;
      expect(keyHash('evt-1')).toEqual({ lo: Number(h & 0xffffffffn), hi: Number(h >> 32n) });
      expect(keyHash('')).not.toEqual(keyHash(' '));
    });

    test('never rules out an id it was given (property)', () => {
      fc.assert(fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 300 }), (ids) => {
        const filter = new KeyFilter();
        for (const id of ids) filter.add(keyHash(id));
        return ids.every((id) => filter.mightHold(keyHash(id)));
      }), { numRuns: 200 });
    });

    test('grows past its capacity with every id still held, and rules out at least 99.5 % of ids never added', () => {
      const filter = new KeyFilter();
      const firstBytes = filter.bytes;
      const added = Array.from({ length: MIN_SEGMENT_KEYS * 3 }, () => randomUUID());
      let grewAt = -1;
      let grewBy = { announced: 0, taken: 0 };
      added.forEach((id, i) => {
        if (grewAt < 0 && filter.growthBytes > 0) {
          grewAt = i;
          const before = filter.bytes;
          grewBy = { announced: filter.growthBytes, taken: 0 };
          filter.add(keyHash(id));
          grewBy.taken = filter.bytes - before;
          return;
        }
        filter.add(keyHash(id));
      });
      expect(grewAt).toBeGreaterThanOrEqual(MIN_SEGMENT_KEYS);
      // What growthBytes announced (without allocating) is what the new segment took.
      expect(grewBy.announced).toBeGreaterThan(0);
      expect(grewBy.taken).toBe(grewBy.announced);
      expect(filter.bytes).toBeGreaterThan(firstBytes);
      expect(filter.count).toBe(added.length);
      expect(added.every((id) => filter.mightHold(keyHash(id)))).toBe(true);
      const others = Array.from({ length: 100_000 }, () => randomUUID());
      const falsePositives = others.filter((id) => filter.mightHold(keyHash(id))).length;
      expect(falsePositives / others.length).toBeLessThan(0.005);
    });

    test('a filter sized for its ids holds them in one segment of about 2 bytes per id', () => {
      const filter = new KeyFilter(1_000_000);
      expect(filter.growthBytes).toBe(0);
      expect(filter.bytes).toBeGreaterThanOrEqual(1_000_000 * 1.8);
      expect(filter.bytes).toBeLessThanOrEqual(1_000_000 * 2.1);
    });
  });
});
