// The filter* restriction fields of spec 3 §2.3, ANDed with the tree. Sampling keeps a
// contact when CRC32(_user_id) mod 10000 < percent × 100: deterministic per contact, so a
// sample is repeatable and a larger percentage contains a smaller one.
import type { SqlContext } from './params';
import { invalid } from './problems';

export interface Restrictions {
  readonly audienceIds: readonly string[] | null;
  readonly notAudienceIds: readonly string[] | null;
  readonly contactIds: readonly string[] | null;
  readonly datasourceIds: readonly string[] | null;
  readonly universalSearch: string | null;
  readonly samplingPercent: number;
  readonly bucketMin: number;
  readonly bucketMax: number;
  readonly bucketIn: readonly number[] | null;
  readonly bucketNotIn: readonly number[] | null;
}

const list = <T>(v: unknown): T[] | null => (Array.isArray(v) ? (v as T[]) : null);

/** From a body whose shape ajv checked. */
export function parseRestrictions(body: Record<string, unknown>): Restrictions {
  const bucketMin = typeof body['filterBucketMin'] === 'number' ? body['filterBucketMin'] : 0;
  const bucketMax = typeof body['filterBucketMax'] === 'number' ? body['filterBucketMax'] : 199;
  if (bucketMin > bucketMax) throw invalid('filterBucketMin', `must not be above filterBucketMax (${bucketMax})`);
  const search = body['filterUniversalSearch'];
  return {
    audienceIds: list(body['filterAudienceIds']),
    notAudienceIds: list(body['filterNotAudienceIds']),
    contactIds: list(body['filterContactIds']),
    datasourceIds: list(body['filterDatasourceIds']),
    universalSearch: typeof search === 'string' && search.length > 0 ? search : null,
    samplingPercent: typeof body['filterSamplingPercent'] === 'number' ? body['filterSamplingPercent'] : 100,
    bucketMin,
    bucketMax,
    bucketIn: list(body['filterBucketIn']),
    bucketNotIn: list(body['filterBucketNotIn']),
  };
}

export function restrictionsSql(r: Restrictions, c: SqlContext): string[] {
  const out: string[] = [];
  const ids = (v: readonly unknown[], type: string): string => c.binder.bind(`Array(${type})`, v);
  if (r.audienceIds) out.push(`has(${ids(r.audienceIds, 'String')}, audience_id)`);
  if (r.notAudienceIds) out.push(`NOT has(${ids(r.notAudienceIds, 'String')}, audience_id)`);
  if (r.contactIds) out.push(`has(${ids(r.contactIds, 'String')}, user_id)`);
  if (r.datasourceIds) out.push(`hasAny(datasource_ids, ${ids(r.datasourceIds, 'String')})`);
  if (r.universalSearch !== null) out.push(`position(universal_search, lowerUTF8(${c.binder.bind('String', r.universalSearch)})) > 0`);
  if (r.samplingPercent < 100) out.push(`CRC32(user_id) % 10000 < ${c.binder.bind('UInt32', Math.round(r.samplingPercent * 100))}`);
  if (r.bucketMin > 0 || r.bucketMax < 199) out.push(`bucket BETWEEN ${c.binder.bind('UInt8', r.bucketMin)} AND ${c.binder.bind('UInt8', r.bucketMax)}`);
  if (r.bucketIn) out.push(`has(${ids(r.bucketIn, 'UInt8')}, bucket)`);
  if (r.bucketNotIn) out.push(`NOT has(${ids(r.bucketNotIn, 'UInt8')}, bucket)`);
  return out;
}
