// The median of GET /sms/stats from delivery-time histograms (docs/grammar-a.md "Statistics",
// stores/delivery-histogram.ts): ranks, buckets and the value a sub-bucket stands for.
import { HistogramMismatch, locateRank, medianFromPlaces, medianPlaces, medianRanks, storedMedianMs, subBucketMs, UNKNOWN_PLACE } from '../../stores/delivery-histogram';

const medianMs = (coarse: readonly number[], fineOf: (bucket: number) => readonly number[] | undefined): number | null => medianFromPlaces(coarse, medianPlaces(coarse), fineOf);

/** The buckets of a delivery time, as the SQL of coarseBucketSql / fineBucketSql computes them. */
function place(ms: number): { bucket: number; fine: number } {
  const x = Math.min(Math.log2(ms + 1) * 8, 255.999999);
  return { bucket: Math.floor(x), fine: Math.min(Math.floor((x - Math.floor(x)) * 64), 63) };
}

/** Coarse and sub-bucket histograms of some delivery times. */
function histograms(times: readonly number[]): { coarse: number[]; fine: Map<number, number[]> } {
  const coarse = new Array<number>(256).fill(0);
  const fine = new Map<number, number[]>();
  for (const ms of times) {
    const p = place(ms);
    coarse[p.bucket]! += 1;
    const sub = fine.get(p.bucket) ?? new Array<number>(64).fill(0);
    sub[p.fine]! += 1;
    fine.set(p.bucket, sub);
  }
  return { coarse, fine };
}

function exactMedian(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
}

test('median ranks: the middle one of an odd count, the two middle ones of an even count', () => {
  expect(medianRanks(1)).toEqual([0, 0]);
  expect(medianRanks(5)).toEqual([2, 2]);
  expect(medianRanks(6)).toEqual([2, 3]);
  expect(() => medianRanks(0)).toThrow();
});

test('a rank is found in the bucket that holds it, with its rank inside the bucket', () => {
  expect(locateRank([0, 2, 0, 3], 0)).toEqual({ bucket: 1, within: 0 });
  expect(locateRank([0, 2, 0, 3], 2)).toEqual({ bucket: 3, within: 0 });
  expect(locateRank([0, 2, 0, 3], 4)).toEqual({ bucket: 3, within: 2 });
  expect(() => locateRank([1], 1)).toThrow();
});

test('a sub-bucket stands for the delivery time itself below 748 ms', () => {
  for (let ms = 0; ms < 748; ms++) expect([ms, subBucketMs(place(ms).bucket, place(ms).fine)]).toEqual([ms, ms]);
});

test('above, a sub-bucket stands for a time within 0.07 % + 1 ms of every time it holds', () => {
  let worst = 0;
  for (let ms = 748; ms < 4_294_967_296; ms = Math.floor(ms * 1.0007) + 1) {
    const p = place(ms);
    worst = Math.max(worst, (Math.abs(subBucketMs(p.bucket, p.fine) - ms) - 1) / ms);
  }
  expect(worst).toBeLessThanOrEqual(0.0007);
});

test('the median from the histograms equals the exact one for small times and is within resolution for large ones, odd and even counts', () => {
  let seed = 7;
  const random = (): number => { seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31; return seed / 2 ** 31; };
  for (let round = 0; round < 200; round++) {
    const count = 1 + Math.floor(random() * 60);
    const scale = round % 2 === 0 ? 700 : 90_000_000;
    const times = Array.from({ length: count }, () => Math.floor(random() * scale));
    const { coarse, fine } = histograms(times);
    const got = medianMs(coarse, (b) => fine.get(b));
    const exact = exactMedian(times);
    if (scale < 748) expect([times, got]).toEqual([times, exact]);
    else expect(Math.abs(got! - exact)).toBeLessThanOrEqual(exact * 0.0007 + 1);
  }
});

test('no delivered message: no median; the buckets a median needs are those of its ranks', () => {
  expect(medianMs(new Array<number>(256).fill(0), () => undefined)).toBeNull();
  expect(medianPlaces([])).toEqual([]);
  const { coarse } = histograms([10, 10_000]);
  expect(medianPlaces(coarse).map((p) => p.bucket)).toEqual([place(10).bucket, place(10_000).bucket]);
});

test('sub-buckets that do not hold the bucket\'s count (the two reads saw different rows) are refused, not used', () => {
  const { coarse, fine } = histograms([1000, 1001, 1002]);
  const short = fine.get(place(1001).bucket)!.map((c, i) => (i === place(1001).fine ? c - 1 : c));
  expect(() => medianMs(coarse, () => short)).toThrow(HistogramMismatch);
  expect(() => medianMs(coarse, () => undefined)).toThrow(HistogramMismatch);
});

test('a stored median (migration 0022: bucket * 64 + sub-bucket of each middle rank) is the median the merged histograms give; a place not known gives none', () => {
  const times = [120, 950, 4_000, 4_100, 70_000, 70_001];
  const { coarse, fine } = histograms(times);
  const [lo, hi] = medianPlaces(coarse).map((p) => p.bucket * 64 + locateRank(fine.get(p.bucket)!, p.within).bucket);
  expect(storedMedianMs(lo!, hi!)).toBe(medianMs(coarse, (b) => fine.get(b)));
  expect(storedMedianMs(UNKNOWN_PLACE, hi!)).toBeNull();
  expect(storedMedianMs(lo!, UNKNOWN_PLACE)).toBeNull();
});
