// One datasource's stored event ids as a scalable Bloom filter (Almeida et al., "Scalable Bloom
// Filters", 2007): the ingest writer asks it first and reads event_keys only for the ids it may
// hold, so a new event's deduplication costs no statement however many ids the datasource
// stores. No false negatives; a false positive only costs a lookup in event_keys.
//
// An id enters as its XXH64 (seed 0) split into two 32-bit halves, the hash ClickHouse computes
// as xxHash64(event_id), so a filter is built from the table without the ids travelling.
import xxhash from 'xxhash-wasm';

/** An id's XXH64, as its low and high 32 bits. */
export interface IdHash {
  readonly lo: number;
  readonly hi: number;
}

let h64: ((input: string, seed?: bigint) => bigint) | undefined;

/** Loads the hash function (WebAssembly, once per process); before it, `idHash` throws. */
export async function loadIdHash(): Promise<void> {
  h64 ??= (await xxhash()).h64;
}

const LOW_32 = 0xffffffffn;

/** The id's XXH64 over its UTF-8 bytes, equal to ClickHouse's xxHash64(id). */
export function idHash(id: string): IdHash {
  if (!h64) throw new Error('idHash called before loadIdHash()');
  const h = h64(id);
  return { lo: Number(h & LOW_32), hi: Number(h >> 32n) };
}

/** The first segment's false-positive rate; each later one halves it, so the sum stays under twice this. */
const FIRST_FALSE_POSITIVE_RATE = 0.01;
/** The fewest ids a segment holds. */
export const MIN_SEGMENT_IDS = 1 << 16;
/** Bits of one segment at most (2^31: its positions stay within 32-bit arithmetic). */
const MAX_SEGMENT_BITS = 2 ** 31;

class Segment {
  readonly capacity: number;
  readonly probes: number;
  private readonly mask: number;
  private readonly words: Uint32Array;
  count = 0;

  constructor(capacity: number, falsePositiveRate: number) {
    const bitsPerId = -Math.log(falsePositiveRate) / Math.LN2 ** 2;
    const bits = Math.min(MAX_SEGMENT_BITS, 2 ** Math.ceil(Math.log2(capacity * bitsPerId)));
    this.capacity = Math.floor(bits / bitsPerId);
    this.probes = Math.max(1, Math.round(bitsPerId * Math.LN2));
    this.mask = bits - 1;
    this.words = new Uint32Array(bits / 32);
  }

  get bytes(): number {
    return this.words.byteLength;
  }

  // Double hashing (Kirsch and Mitzenmacher): probe i is lo + i·hi, hi made odd so the probes
  // of a power-of-two table never repeat a cycle early.
  add({ lo, hi }: IdHash): void {
    const step = hi | 1;
    for (let i = 0; i < this.probes; i += 1) {
      const bit = (lo + Math.imul(i, step)) & this.mask;
      this.words[bit >>> 5] = (this.words[bit >>> 5] as number) | (1 << (bit & 31));
    }
    this.count += 1;
  }

  mightHold({ lo, hi }: IdHash): boolean {
    const step = hi | 1;
    for (let i = 0; i < this.probes; i += 1) {
      const bit = (lo + Math.imul(i, step)) & this.mask;
      if (((this.words[bit >>> 5] as number) & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

export class EventIdFilter {
  private readonly segments: Segment[];

  /** A filter sized for `expectedIds` before it grows (at least MIN_SEGMENT_IDS). */
  constructor(expectedIds = 0) {
    this.segments = [new Segment(Math.max(MIN_SEGMENT_IDS, expectedIds), FIRST_FALSE_POSITIVE_RATE)];
  }

  /** Memory held by the filter's bits. */
  get bytes(): number {
    return this.segments.reduce((sum, s) => sum + s.bytes, 0);
  }

  /** Ids added (an id added twice counts twice). */
  get count(): number {
    return this.segments.reduce((sum, s) => sum + s.count, 0);
  }

  /** What the next add would cost if it opens a segment (0 if the current one has room). */
  get growthBytes(): number {
    const last = this.segments.at(-1) as Segment;
    if (last.count < last.capacity) return 0;
    return new Segment(last.capacity * 2, FIRST_FALSE_POSITIVE_RATE / 2 ** this.segments.length).bytes;
  }

  add(hash: IdHash): void {
    let last = this.segments.at(-1) as Segment;
    if (last.count >= last.capacity) {
      last = new Segment(last.capacity * 2, FIRST_FALSE_POSITIVE_RATE / 2 ** this.segments.length);
      this.segments.push(last);
    }
    last.add(hash);
  }

  /** False: the id was never added. True: it may have been. */
  mightHold(hash: IdHash): boolean {
    for (let i = this.segments.length - 1; i >= 0; i -= 1) if ((this.segments[i] as Segment).mightHold(hash)) return true;
    return false;
  }
}
