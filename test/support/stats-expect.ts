// GET /sms/stats rows compared with a reference: every column equal, the median within the
// resolution docs/grammar-a.md ("Statistics") states for the rollup's histograms: exact to the
// ms below 748 ms, otherwise within 0.07 % + 1 ms of the exact median.
import type { SmsStatsRow } from '../../core/sms';
import { withinMedianResolution } from '../../support/median-resolution';

/** Expects the same rows as `truth` (in order), the medians within the histograms' resolution; `context` names the case in a failure. */
export function expectSameStats(mine: readonly SmsStatsRow[], truth: readonly SmsStatsRow[], context: Record<string, unknown>): void {
  const counts = (rows: readonly SmsStatsRow[]): unknown[] => rows.map(({ p50DeliverySeconds: _median, ...rest }) => rest);
  expect({ ...context, rows: counts(mine) }).toEqual({ ...context, rows: counts(truth) });
  const off = mine
    .map((row, i) => ({ row: i, got: row.p50DeliverySeconds, exact: truth[i]?.p50DeliverySeconds ?? null }))
    .filter(({ got, exact }) => !withinMedianResolution(got, exact));
  expect({ ...context, mediansOutsideResolution: off }).toEqual({ ...context, mediansOutsideResolution: [] });
}
