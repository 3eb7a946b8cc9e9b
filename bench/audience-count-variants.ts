// Variants of bench:audience's attribute-only count statement (country, client tag, custom score
// ≥ 50 over 1 M contacts), each run on the search read lane, interleaved (the order turns every
// round), on bench:audience's data (--data DIR) or a copy of its audience (--table, e.g. a table
// left by bench/audience-map-buckets.ts): p50 and the bytes ClickHouse read, and each variant's
// count compared with the first's. The first variant is the product's statement (compiled by
// AudienceSearch for the request; settings as the product writes them).
// Written to bench/results/audience-count-variants.json (--out).
import type { ClickHouseClient } from '@clickhouse/client';
import { benchArgs } from './cli-args';
import { loadAverage, percentile, writeResult } from './support/results';
import { openClickHouse } from '../infra/clickhouse';
import { FINAL_SETTINGS } from '../stores/audience-search';
import { ceilingSettings } from '../stores/query-ceilings';
import { DEFAULT_CEILING } from '../stores/audience-search';
import { BENCH_PROJECT } from './audience-data';

const { values } = benchArgs({
  options: {
    data: { type: 'string', default: '/tmp/aud-data' },
    table: { type: 'string', default: 'audience' },
    rounds: { type: 'string', default: '20' },
    only: { type: 'string' },
    /** Instead of the variants: the product's statement on each of these tables. */
    tables: { type: 'string' },
    out: { type: 'string', default: 'audience-count-variants.json' },
  },
});

const PRODUCT = ` SETTINGS ${ceilingSettings(DEFAULT_CEILING)}, ${FINAL_SETTINGS}`;
const SCOPE = `project_id = {p:String} AND deleted = 0`;
const COUNTRY = `(isNotNull(country_code) AND country_code = {c:String})`;
const TAG = `has(client_tags, 'vip')`;
const SCORE = `(mapContains(attrs_number, 'score') AND toFloat64(attrs_number['score']) >= 50)`;

/** name → WHERE after the scope, and statement settings after the product's. */
const VARIANTS: ReadonlyArray<readonly [string, string, string]> = [
  ['product (country, tag, score)', `${COUNTRY} AND ${TAG} AND ${SCORE}`, ''],
  ['country only', COUNTRY, ''],
  ['country + tag', `${COUNTRY} AND ${TAG}`, ''],
  ['score without mapContains (0 never ≥ 50)', `${COUNTRY} AND ${TAG} AND toFloat64(attrs_number['score']) >= 50`, ''],
  ['tag on client_tags_distinct', `${COUNTRY} AND has(client_tags_distinct, 'vip') AND ${SCORE}`, ''],
  ['prewhere under FINAL (optimize_move_to_prewhere_if_final)', `${COUNTRY} AND ${TAG} AND ${SCORE}`, ', optimize_move_to_prewhere_if_final = 1, apply_prewhere_after_final = 1'],
  ['explicit PREWHERE country, applied after FINAL', `${TAG} AND ${SCORE}`, ', apply_prewhere_after_final = 1'],
  ['no FINAL (not exact under ingestion: a floor)', `${COUNTRY} AND ${TAG} AND ${SCORE}`, ''],
  ['short-circuit forced', `${COUNTRY} AND ${TAG} AND ${SCORE}`, ", short_circuit_function_evaluation = 'force_enable'"],
  ['distinct tags + score without mapContains', `${COUNTRY} AND has(client_tags_distinct, 'vip') AND toFloat64(attrs_number['score']) >= 50`, ''],
  ['distinct tags + score without mapContains + short-circuit forced', `${COUNTRY} AND has(client_tags_distinct, 'vip') AND toFloat64(attrs_number['score']) >= 50`, ", short_circuit_function_evaluation = 'force_enable'"],
];

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'bench_audience', embeddedPath: values.data });
  const lane: ClickHouseClient = ch.readLane?.() ?? ch.client;
  const t = ch.table(values.table);
  const only = values.only?.split(',').map(Number);
  const product = VARIANTS[0] as readonly [string, string, string];
  const variants = values.tables !== undefined ? values.tables.split(',').map((name) => [`product on ${name}`, product[1], product[2]] as const)
    : VARIANTS.filter((_, i) => only === undefined || i === 0 || only.includes(i));
  const sqlOf = (v: readonly [string, string, string]): string => {
    if (v[0].startsWith('product on ')) return `SELECT count() AS n FROM ${ch.table(v[0].slice('product on '.length))} FINAL WHERE ${SCOPE} AND ${v[1]}${PRODUCT}${v[2]}`;
    if (v[0].startsWith('explicit PREWHERE')) return `SELECT count() AS n FROM ${t} FINAL PREWHERE ${COUNTRY} WHERE ${SCOPE} AND ${v[1]}${PRODUCT}${v[2]}`;
    if (v[0].startsWith('no FINAL')) return `SELECT count() AS n FROM ${t} WHERE ${SCOPE} AND ${v[1]}${PRODUCT}${v[2]}`;
    return `SELECT count() AS n FROM ${t} FINAL WHERE ${SCOPE} AND ${v[1]}${PRODUCT}${v[2]}`;
  };
  const countries = ['DE', 'FR', 'US', 'ES', 'IT', 'GB', 'NL', 'PL'];
  const ms = variants.map(() => [] as number[]);
  const bytes = variants.map(() => 0);
  let mismatches = 0;
  const counts = variants.map(() => 0);
  for (let r = -2; r < Number(values.rounds); r += 1) {
    const k = Math.max(0, r);
    const c = countries[k % countries.length];
    const n = new Map<number, number>();
    for (let j = 0; j < variants.length; j += 1) {
      const i = (j + k) % variants.length;
      const v = variants[i] as readonly [string, string, string];
      const started = performance.now();
      const result = (await (await lane.query({ query: sqlOf(v), query_params: { p: BENCH_PROJECT, c }, format: 'JSON' })).json()) as unknown as { data: { n: string }[]; statistics?: { bytes_read?: number } };
      const took = performance.now() - started;
      if (r >= 0) ms[i]?.push(took);
      bytes[i] = Number(result.statistics?.bytes_read ?? 0);
      n.set(i, Number(result.data[0]?.n));
      counts[i] = Number(result.data[0]?.n);
    }
    // Variants that keep every condition must count what the product's statement counts.
    for (const [i, v] of variants.entries()) if (i > 0 && !['country only', 'country + tag'].includes(v[0]) && n.get(i) !== n.get(0)) mismatches += 1;
  }
  const rows = variants.map((v, i) => ({ variant: v[0], p50: Math.round(percentile(ms[i] ?? [], 50) * 10) / 10, p25: Math.round(percentile(ms[i] ?? [], 25) * 10) / 10, p75: Math.round(percentile(ms[i] ?? [], 75) * 10) / 10, mbRead: Math.round((bytes[i] ?? 0) / 1e5) / 10, lastCount: counts[i], sql: sqlOf(v) }));
  for (const r of rows) process.stderr.write(`${r.variant}: p50 ${r.p50} ms (p25 ${r.p25}, p75 ${r.p75}), ${r.mbRead} MB read, count ${r.lastCount}\n`);
  const out = { startedAt, finishedAt: new Date().toISOString(), table: values.table, rounds: Number(values.rounds), mismatches, load: loadAverage(), variants: rows };
  process.stdout.write(`mismatches ${mismatches}; load ${out.load}; written to ${writeResult(values.out, out)}\n`);
  await ch.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
