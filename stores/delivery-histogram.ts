// The median delivery time of GET /sms/stats from histograms (migration 0018): a delivery time
// of `ms` milliseconds (createdAt -> deliveredAt, 0 .. 2^32-1) falls in coarse bucket
// floor(x) and sub-bucket floor(frac(x) * 64) of x = log2(ms + 1) * 8, i.e. 8 buckets per
// octave, 512 sub-buckets per octave. A reader sums the coarse histograms to find which bucket
// holds the median's rank, then sums the sub-buckets of that bucket alone; the median is the
// middle of its sub-bucket, rounded to the ms: exact while a sub-bucket holds one whole ms (below
// 748 ms), within 0.07 % + 1 ms above (docs/grammar-a.md "Statistics").

export const COARSE_BUCKETS = 256;
export const FINE_BUCKETS = 64;
const PER_OCTAVE = 8;
/** The largest x: ms = 2^32-1 would give exactly 256, the end of the last bucket. */
const X_MAX = 255.999999;

/** SQL: x of a delivery time expression (UInt32 ms). */
const xOf = (ms: string): string => `least(log2(${ms} + 1) * ${PER_OCTAVE}, ${X_MAX})`;

/** SQL: the coarse bucket (UInt8) of a delivery time expression. */
export function coarseBucketSql(ms: string): string {
  return `toUInt8(floor(${xOf(ms)}))`;
}

/** SQL: the sub-bucket (UInt8, 0 .. 63) of a delivery time expression within its coarse bucket. */
export function fineBucketSql(ms: string): string {
  return `toUInt8(least(floor((${xOf(ms)} - floor(${xOf(ms)})) * ${FINE_BUCKETS}), ${FINE_BUCKETS - 1}))`;
}

/** SQL: a dense array of `size` counts with `count` at index `index` (a histogram of one bucket), to be summed with sumForEach. */
export function oneHotSql(index: string, count: string, size: number): string {
  return `arrayMap(i -> if(i = ${index}, ${count}, 0), range(${size}))`;
}

/** The 0-based ranks whose values' mean is the median of `n` sorted values (one rank twice when n is odd). */
export function medianRanks(n: number): readonly [number, number] {
  if (!Number.isInteger(n) || n < 1) throw new Error(`median ranks: no values (${n})`);
  return [Math.floor((n - 1) / 2), Math.ceil((n - 1) / 2)];
}

/** Where the value of 0-based `rank` lies: its bucket and its rank among the bucket's values. */
export interface RankPlace {
  readonly bucket: number;
  readonly within: number;
}

/** The bucket of a histogram (counts by bucket) holding the value of `rank`, and its rank within the bucket. */
export function locateRank(counts: readonly number[], rank: number): RankPlace {
  let before = 0;
  for (let bucket = 0; bucket < counts.length; bucket++) {
    const count = counts[bucket] ?? 0;
    if (rank < before + count) return { bucket, within: rank - before };
    before += count;
  }
  throw new Error(`histogram: rank ${rank} beyond its ${before} values`);
}

/**
 * SQL: medianPlaces of the coarse histogram `hist` (an Array(UInt32) column), as columns `prefix`n
 * (the values), and per rank k of the two: `prefix`b<k> (bucket), `prefix`w<k> (rank within it)
 * and `prefix`c<k> (the bucket's count). Each column refers to `hist` and to earlier ones by alias,
 * so that a reader gets a few numbers per group instead of the histogram.
 */
export function medianPlacesSql(hist: string, prefix: string): string[] {
  const cum = `arrayCumSum(${hist})`;
  const n = `${prefix}n`;
  const columns = [`toInt64(arraySum(${hist})) AS ${n}`];
  ['intDiv(%n - 1, 2)', 'intDiv(%n, 2)'].forEach((rankOf, k) => {
    const rank = rankOf.replace('%n', n);
    const b = `${prefix}b${k}`;
    // 0-based bucket: the first whose running count passes the rank; -1 without values.
    columns.push(`toInt32(arrayFirstIndex(c -> c > ${rank}, ${cum})) - 1 AS ${b}`);
    columns.push(`if(${b} < 0, 0, ${rank} - if(${b} = 0, 0, ${cum}[${b}])) AS ${prefix}w${k}`);
    columns.push(`if(${b} < 0, 0, ${hist}[${b} + 1]) AS ${prefix}c${k}`);
  });
  return columns;
}

/** The places of a row with medianPlacesSql's columns (`prefix` as given there), with each place's count in the coarse histogram. */
export function placesOfRow(row: Readonly<Record<string, unknown>>, prefix: string): { places: RankPlace[]; counts: number[] } {
  if (Number(row[`${prefix}n`]) === 0) return { places: [], counts: [] };
  const places = [0, 1].map((k) => ({ bucket: Number(row[`${prefix}b${k}`]), within: Number(row[`${prefix}w${k}`]) }));
  const counts: number[] = [];
  [0, 1].forEach((k) => { counts[places[k]!.bucket] = Number(row[`${prefix}c${k}`]); });
  return { places, counts };
}

/** The delivery time (ms) a sub-bucket stands for: the middle of its range of x, rounded to the ms. */
export function subBucketMs(bucket: number, fine: number): number {
  const x = bucket + (fine + 0.5) / FINE_BUCKETS;
  return Math.max(0, Math.round(2 ** (x / PER_OCTAVE) - 1));
}

/** Where the median's two ranks (the lower and the upper middle one) lie in a coarse histogram; none without values. */
export function medianPlaces(coarse: readonly number[]): RankPlace[] {
  const n = coarse.reduce((sum, c) => sum + c, 0);
  return n === 0 ? [] : medianRanks(n).map((rank) => locateRank(coarse, rank));
}

/**
 * The median (ms) of a group's delivery times from where its ranks lie in the coarse histogram
 * (`coarse`, `places`: medianPlaces) and the sub-bucket histograms of those buckets
 * (`fineOf(bucket)`), or null without delivered messages. Throws when a sub-bucket histogram does
 * not hold the bucket's count (the two reads saw different rows: the caller reads again).
 */
export function medianFromPlaces(coarse: readonly number[], places: readonly RankPlace[], fineOf: (bucket: number) => readonly number[] | undefined): number | null {
  if (places.length === 0) return null;
  const values = places.map((place) => {
    const fine = fineOf(place.bucket);
    const total = fine?.reduce((sum, c) => sum + c, 0) ?? 0;
    if (fine === undefined || total !== coarse[place.bucket]) throw new HistogramMismatch(place.bucket, coarse[place.bucket] ?? 0, total);
    return subBucketMs(place.bucket, locateRank(fine, place.within).bucket);
  });
  return (values[0]! + values[1]!) / 2;
}

/** A sub-bucket histogram whose total differs from its coarse bucket's count. */
export class HistogramMismatch extends Error {
  constructor(readonly bucket: number, readonly coarse: number, readonly fine: number) {
    super(`histogram: bucket ${bucket} counts ${coarse} values, its sub-buckets ${fine}`);
  }
}

/** A stored median place (median_lo, median_hi of the day rows, migration 0022) that is not known: the row's sub-buckets did not hold its coarse counts. */
export const UNKNOWN_PLACE = 65535;

/**
 * SQL: `rows` (a subquery of rows with the columns `keys`, `carry` and a coarse histogram
 * `delivery_hist`) with two more columns, median_lo and median_hi: where the row's lower and
 * upper middle delivery time lie, as coarse bucket * FINE_BUCKETS + sub-bucket, found in `fine`
 * (a subquery with the columns `keys`, `bucket` and `fine`: the rows' sub-bucket histograms);
 * UNKNOWN_PLACE when the row has no delivery time or `fine` does not hold the bucket's count.
 * The same places medianFromPlaces finds in the same histograms.
 */
export function withStoredMediansSql(rows: string, fine: string, keys: readonly string[], carry: readonly string[]): string {
  const on = (f: string, k: number): string => [...keys.map((key) => `${f}.${key} = p.${key}`), `${f}.bucket = p.j${k}`].join(' AND ');
  const place = (k: number): string => {
    const f = `f${k}`;
    return `if(p.m_n > 0 AND arraySum(${f}.fine) = p.m_c${k}, toUInt16(p.m_b${k} * ${FINE_BUCKETS} + arrayFirstIndex(c -> c > p.m_w${k}, arrayCumSum(${f}.fine)) - 1), ${UNKNOWN_PLACE})`;
  };
  return `SELECT ${[...keys, ...carry].map((c) => `p.${c} AS ${c}`).join(', ')}, ${place(0)} AS median_lo, ${place(1)} AS median_hi
    FROM (SELECT *, ${medianPlacesSql('delivery_hist', 'm_').join(', ')}, toUInt8(greatest(m_b0, 0)) AS j0, toUInt8(greatest(m_b1, 0)) AS j1 FROM (${rows})) AS p
    LEFT JOIN (${fine}) AS f0 ON ${on('f0', 0)}
    LEFT JOIN (${fine}) AS f1 ON ${on('f1', 1)}`;
}

/** The median (ms) of a row's stored places (withStoredMediansSql), or null when one is not known. */
export function storedMedianMs(lo: number, hi: number): number | null {
  if (lo === UNKNOWN_PLACE || hi === UNKNOWN_PLACE) return null;
  const ms = (place: number): number => subBucketMs(Math.floor(place / FINE_BUCKETS), place % FINE_BUCKETS);
  return (ms(lo) + ms(hi)) / 2;
}
