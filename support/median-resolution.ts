// The resolution docs/grammar-a.md ("Statistics") states for the median delivery time of
// GET /sms/stats read from the rollup's histograms: exact to the ms below 748 ms, otherwise
// within 0.07 % + 1 ms of the exact median. Shared by the stats tests and bench/stats.ts.
const RELATIVE = 0.0007;
const ABSOLUTE_SECONDS = 0.001;

/** Whether a median (seconds) read from the histograms is within the stated resolution of the exact one. */
export function withinMedianResolution(got: number | null, exact: number | null): boolean {
  if (got === null || exact === null) return got === exact;
  return Math.abs(got - exact) <= Math.abs(exact) * RELATIVE + ABSOLUTE_SECONDS + 1e-9;
}

/** Rows of GET /sms/stats that are the same but for medians within the resolution. */
export function sameStats(mine: readonly { p50DeliverySeconds: number | null }[], truth: readonly { p50DeliverySeconds: number | null }[]): boolean {
  const counts = (rows: readonly { p50DeliverySeconds: number | null }[]): string => JSON.stringify(rows.map(({ p50DeliverySeconds: _median, ...rest }) => rest));
  return counts(mine) === counts(truth) && mine.every((row, i) => withinMedianResolution(row.p50DeliverySeconds, truth[i]?.p50DeliverySeconds ?? null));
}
