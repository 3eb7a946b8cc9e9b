// The event-group filter's first page by key (stores/audience-search.ts keyPage) against the page
// and count statements it replaced, interleaved in one process on bench:audience's data (--data
// DIR), quiet or (--ingest) while bench:audience's ingest load writes 10,000 events/s and 1,000
// contact upserts/s: p50 of the search, of each of its statements, how many searches fell back to
// the usual page statement, and whether the totals agree. The replaced statements are the product's
// before the change: the page in _user_id order and the count, both reading the events subquery.
// Written to bench/results/audience-key-page.json (--out).
import type { ClickHouseClient } from '@clickhouse/client';
import { benchArgs } from './cli-args';
import { loadAverage, percentile, writeResult } from './support/results';
import { startIngestLoad } from './support/audience-ingest';
import { parseSearch } from '../core/filters/grammar-b';
import { openClickHouse } from '../infra/clickhouse';
import { AudienceSearch, DEFAULT_CEILING, FINAL_SETTINGS } from '../stores/audience-search';
import { FULL_COLUMNS } from '../stores/audience-rows';
import { ceilingSettings } from '../stores/query-ceilings';
import { BENCH_PROJECT } from './audience-data';

const { values } = benchArgs({
  options: {
    data: { type: 'string', default: '/tmp/aud-data' },
    contacts: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '12' },
    ingest: { type: 'boolean', default: false },
    out: { type: 'string', default: 'audience-key-page.json' },
  },
});

const COUNTRIES = ['DE', 'FR', 'US', 'ES', 'IT', 'GB', 'NL', 'PL'];
const body = (country: string): Record<string, unknown> => ({
  version: '0.0.1', limit: 50, root: { type: 'group', join: 'and', children: [
    { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: [country] },
    { type: 'group_event', event: 'purchase', children: [
      { type: 'event_condition', key: 'amount', operator: 'range-number', values: { lowerNumber: 400, upperNumber: null } },
      { type: 'event_condition', key: 'created-at', operator: 'range-date-relative', values: { lowerOffset: -30, upperOffset: null } },
    ] },
  ] },
});

const kind = (sql: string): string => {
  if (sql.includes('groupArraySorted')) return 'countAndIds';
  if (sql.includes('e.user_id IN {')) return 'pageByKeys';
  return sql.includes('ORDER BY') ? 'usualPage' : 'count';
};

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'bench_audience', embeddedPath: values.data });
  const lane: ClickHouseClient = ch.readLane?.() ?? ch.client;
  const seen: string[] = [];
  const statementMs: Record<string, number[]> = {};
  const recording = new Proxy(lane, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
      return async (args: { query: string }) => {
        seen.push(args.query);
        const started = performance.now();
        const result = await target.query(args as Parameters<ClickHouseClient['query']>[0]);
        (statementMs[kind(args.query)] ??= []).push(performance.now() - started);
        return result;
      };
    },
  });
  const search = new AudienceSearch({ ...ch, readLane: () => recording }, { getRoot: async () => null }, Buffer.alloc(32, 3));
  const A = ch.table('audience');
  // The statements the product ran before (stores/audience-search.ts at 669dee8), with the same settings.
  const where = `project_id = {p:String} AND deleted = 0 AND ((isNotNull(country_code) AND country_code = {c:String}) AND user_id IN (SELECT e.user_id FROM ${ch.table('events')} AS e
    WHERE e.project_id = {p:String} AND e.event_type = 'purchase' AND ((mapContains(e.params_number, 'amount') AND toFloat64(e.params_number['amount']) >= 400)
    AND (e.event_date >= addDays(toTimeZone(fromUnixTimestamp64Milli({now:Int64}, 'UTC'), 'Europe/Berlin'), -30)))))`;
  const settings = ` SETTINGS ${ceilingSettings(DEFAULT_CEILING)}, ${FINAL_SETTINGS}`;
  const before = async (country: string, now: Date): Promise<{ ids: string[]; total: number }> => {
    const params = { p: BENCH_PROJECT, c: country, now: now.getTime() };
    const [page, count] = await Promise.all([
      lane.query({ query: `SELECT ${FULL_COLUMNS}, user_id AS __sort FROM ${A} FINAL WHERE ${where} ORDER BY user_id ASC LIMIT 51${settings}`, query_params: params, format: 'JSONEachRow' }).then((r) => r.json<{ user_id: string }>()),
      lane.query({ query: `SELECT count() AS n FROM ${A} FINAL WHERE ${where}${settings}`, query_params: params, format: 'JSONEachRow' }).then((r) => r.json<{ n: string }>()),
    ]);
    return { ids: page.slice(0, 50).map((r) => r.user_id), total: Number(count[0]?.n) };
  };
  const writer = values.ingest ? await startIngestLoad(ch, BENCH_PROJECT, Number(values.contacts), { events: 10_000, contacts: 1_000 }) : null;
  if (writer !== null) await new Promise((resolve) => { setTimeout(resolve, 15_000); });
  const keyMs: number[] = [];
  const beforeMs: number[] = [];
  let fallbacks = 0;
  let mismatches = 0;
  try {
    for (let i = 0; i < Number(values.rounds); i += 1) {
      const country = COUNTRIES[i % COUNTRIES.length] as string;
      const now = new Date();
      const key = async (): Promise<{ ids: string[]; total: number }> => {
        seen.length = 0;
        const started = performance.now();
        const r = await search.search(parseSearch(body(country)), { project: BENCH_PROJECT, timezone: 'Europe/Berlin', now });
        keyMs.push(performance.now() - started);
        if (seen.some((s) => kind(s) === 'usualPage')) fallbacks += 1;
        return { ids: r.entities.map((e) => String(e['_user_id'])), total: r.total };
      };
      const old = async (): Promise<{ ids: string[]; total: number }> => {
        const started = performance.now();
        const r = await before(country, now);
        beforeMs.push(performance.now() - started);
        return r;
      };
      const [a, b] = i % 2 === 0 ? [await key(), await old()] : [await old(), await key()].reverse() as [{ ids: string[]; total: number }, { ids: string[]; total: number }];
      if (a.total !== b.total || JSON.stringify(a.ids) !== JSON.stringify(b.ids)) mismatches += 1;
    }
  } finally {
    if (writer !== null) await writer.stop();
  }
  const p50 = (xs: number[]): number => Math.round(percentile(xs, 50) * 10) / 10;
  const out = {
    startedAt, finishedAt: new Date().toISOString(), phase: values.ingest ? 'ingesting' : 'as the data is', rounds: Number(values.rounds),
    keyPage: { p50: p50(keyMs), n: keyMs.length }, before: { p50: p50(beforeMs), n: beforeMs.length },
    statements: Object.fromEntries(Object.entries(statementMs).map(([k, v]) => [k, { p50: p50(v), n: v.length }])),
    fallbacks, mismatches, load: loadAverage(),
  };
  process.stderr.write(`${JSON.stringify(out)}\n`);
  process.stdout.write(`written to ${writeResult(values.out, out)}\n`);
  await ch.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
