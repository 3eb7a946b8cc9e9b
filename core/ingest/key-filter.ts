// The keys one scope has stored (a datasource's event ids, a project's contacts) as a scalable
// Bloom filter (Almeida et al., "Scalable Bloom Filters", 2007): the ingest writer asks it first
// and reads the table only for the keys it may hold, so a new key costs no statement however many
// the scope stores (stores/key-filters.ts). No false negatives; a false positive only costs a
// lookup in the table.
//
// A key enters as its XXH64 (seed 0) split into two 32-bit halves, the hash ClickHouse computes
// as xxHash64(key), so a filter is built from the table without the keys travelling.
import xxhash from 'xxhash-wasm';

/** A key's XXH64, as its low and high 32 bits. */
export interface KeyHash {
  readonly lo: number;
  readonly hi: number;
}

let h64: ((input: string, seed?: bigint) => bigint) | undefined;

/** Loads the hash function (WebAssembly, once per process); before it, `keyHash` throws. */
export async function loadKeyHash(): Promise<void> {
  h64 ??= (await xxhash()).h64;
}

const LOW_32 = 0xffffffffn;

/** The key's XXH64 over its UTF-8 bytes, equal to ClickHouse's xxHash64(key). */
export function keyHash(key: string): KeyHash {
  if (!h64) throw new Error('keyHash called before loadKeyHash()');
  const h = h64(key);
  return { lo: Number(h & LOW_32), hi: Number(h >> 32n) };
}

/**
 * The first segment's false-positive rate before blocking (measured blocked, full: 0.11 %; with the
 * build's quarter of room: 0.02 %); each later one halves it, so the sum stays under twice this.
 */
const FIRST_FALSE_POSITIVE_RATE = 0.001;
/** The fewest keys a segment holds. */
export const MIN_SEGMENT_KEYS = 1 << 16;
/** Bits of one segment at most (256 MiB). */
const MAX_SEGMENT_BITS = 2 ** 31;

/** Bits of one block: a cache line (64 bytes), so a key costs one memory miss, not one per probe. */
const BLOCK_BITS = 512;
const BLOCK_WORDS = BLOCK_BITS / 32;
/** Odd multipliers, one per probe: probe i is the top 9 bits of hi · SALTS[i] (multiply-shift hashing, as Parquet's split-block filter). */
const SALTS = [0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31, 0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f, 0x165667b1, 0xd3a2646d, 0xfd7046c5, 0xb55a4f09, 0x7feb352d, 0x846ca68b, 0x2c1b3c6d, 0x297a2d39];

/** The bits, keys held and probes of a segment for `capacity` keys at `falsePositiveRate`. */
function segmentShape(capacity: number, falsePositiveRate: number): { bits: number; capacity: number; probes: number } {
  // Blocking raises the rate a little over the unblocked formula's; one bit more per key covers it.
  const bitsPerKey = -Math.log(falsePositiveRate) / Math.LN2 ** 2 + 1;
  const bits = Math.min(MAX_SEGMENT_BITS, Math.max(1, Math.ceil((capacity * bitsPerKey) / BLOCK_BITS)) * BLOCK_BITS);
  return { bits, capacity: Math.floor(bits / bitsPerKey), probes: Math.min(SALTS.length, Math.max(1, Math.round((bitsPerKey - 1) * Math.LN2))) };
}

/** The rate of the segment after `segments` others: each halves the one before it. */
const rateAfter = (segments: number): number => FIRST_FALSE_POSITIVE_RATE / 2 ** segments;

/**
 * A blocked Bloom filter (Putze, Sanders, Singler, "Cache-, hash- and space-efficient Bloom
 * filters", 2007): `lo` picks the key's block, its probes fall inside it, each from `hi` by a
 * multiply-shift of its own (double hashing over `hi` measured 0.89 % where these give 0.74 %, at
 * 1 % meant). Random probes over a filter of megabytes cost a cache miss each (0.6 µs per
 * key measured at 3 M keys); in one block they cost one.
 */
class Segment {
  readonly capacity: number;
  readonly probes: number;
  private readonly blocks: number;
  private readonly words: Uint32Array;
  count = 0;

  constructor(capacity: number, falsePositiveRate: number) {
    const shape = segmentShape(capacity, falsePositiveRate);
    this.capacity = shape.capacity;
    this.probes = shape.probes;
    this.blocks = shape.bits / BLOCK_BITS;
    this.words = new Uint32Array(shape.bits / 32);
  }

  get bytes(): number {
    return this.words.byteLength;
  }

  /** The block of `lo`: its top 22 bits scaled to the block count (at most 2^22 blocks of 512 bits). */
  private blockOf(lo: number): number {
    return Math.floor(((lo >>> 10) * this.blocks) / 4_194_304);
  }

  add(lo: number, hi: number): void {
    const base = this.blockOf(lo) * BLOCK_WORDS;
    for (let i = 0; i < this.probes; i += 1) {
      const bit = Math.imul(hi, SALTS[i] as number) >>> 23;
      const w = base + (bit >>> 5);
      this.words[w] = (this.words[w] as number) | (1 << (bit & 31));
    }
    this.count += 1;
  }

  mightHold(lo: number, hi: number): boolean {
    const base = this.blockOf(lo) * BLOCK_WORDS;
    for (let i = 0; i < this.probes; i += 1) {
      const bit = Math.imul(hi, SALTS[i] as number) >>> 23;
      if (((this.words[base + (bit >>> 5)] as number) & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

export class KeyFilter {
  private readonly segments: Segment[];

  /** A filter sized for `expectedKeys` before it grows (at least MIN_SEGMENT_KEYS). */
  constructor(expectedKeys = 0) {
    this.segments = [new Segment(Math.max(MIN_SEGMENT_KEYS, expectedKeys), rateAfter(0))];
  }

  /** Memory held by the filter's bits. */
  get bytes(): number {
    return this.segments.reduce((sum, s) => sum + s.bytes, 0);
  }

  /** Keys added (a key added twice counts twice). */
  get count(): number {
    return this.segments.reduce((sum, s) => sum + s.count, 0);
  }

  /** What the next add would cost if it opens a segment (0 if the current one has room). */
  get growthBytes(): number {
    const last = this.segments.at(-1) as Segment;
    if (last.count < last.capacity) return 0;
    return segmentShape(last.capacity * 2, rateAfter(this.segments.length)).bits / 8;
  }

  add(hash: KeyHash): void {
    this.addHalves(hash.lo, hash.hi);
  }

  /** `add` of a hash given as its two halves (a build adds millions: no object each). */
  addHalves(lo: number, hi: number): void {
    let last = this.segments.at(-1) as Segment;
    if (last.count >= last.capacity) {
      last = new Segment(last.capacity * 2, rateAfter(this.segments.length));
      this.segments.push(last);
    }
    last.add(lo, hi);
  }

  /** False: the key was never added. True: it may have been. */
  mightHold({ lo, hi }: KeyHash): boolean {
    for (let i = this.segments.length - 1; i >= 0; i -= 1) if ((this.segments[i] as Segment).mightHold(lo, hi)) return true;
    return false;
  }
}
