// Audience benchmark (Grammar B, spec 3 §2.3):
//  - data: --contacts (default 1 million) contacts and --events (default 10 million) events
//    generated inside a bench-owned embedded chdb (bench/audience-data.ts), in a temp dir or
//    --data DIR (kept and reused on the next run);
//  - each scenario runs through the product's path (parseSearch → AudienceSearch.search: the
//    page and the total) and beside it the same query hand-written in SQL (page and count),
//    interleaved, --runs times each; p50/p95 and the ratio product p50 / hand-written p50:
//      attribute-only filter      [target p50 ≤ 50 ms]
//      filter with an event group [target p50 ≤ 150 ms]
//      terms aggregation over all contacts [target ≤ 300 ms]
//      cursor paging through 100,000 matches, 1,000 per page [steady per-page time]
//    [target ratio ≤ 1.2]; a check that both return the same ids;
//  - parse + compile: median µs.
// Figures printed with machine and load, and written to bench/results/audience.json.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { loadAverage as load, percentile } from './support/results';
import { compileFilter, ParamBinder, parseSearch, sqlContext, type AudienceQuery } from '../core/filters/grammar-b';
import { migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { AudienceSearch, type SearchScope } from '../stores/audience-search';
import { FULL_COLUMNS } from '../stores/audience-rows';
import { BENCH_PROJECT, generateContacts, generateEvents } from './audience-data';

const { values } = benchArgs({
  options: {
    contacts: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '20' },
    data: { type: 'string' },
    out: { type: 'string', default: join(__dirname, 'results', 'audience.json') },
  },
});

const say = (line: string): void => { process.stderr.write(`[bench:audience] ${line}\n`); };
const round = (x: number): number => Math.round(x * 10) / 10;

async function rows<T>(ch: ClickHouse, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  return (await ch.client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}

async function ensureData(ch: ClickHouse, dir: string, contacts: number, events: number): Promise<{ generateSeconds: number; reused: boolean }> {
  const meta = join(dir, 'bench-audience-meta.json');
  const have = Number((await rows<{ n: string }>(ch, `SELECT count() AS n FROM ${ch.table('audience')}`))[0]?.n ?? 0);
  if (have === contacts && existsSync(meta)) {
    say(`reusing ${have} contacts in ${dir}`);
    return { ...(JSON.parse(readFileSync(meta, 'utf8')) as { generateSeconds: number }), reused: true };
  }
  const started = performance.now();
  say(`generating ${contacts} contacts…`);
  await generateContacts(ch, contacts);
  say(`generating ${events} events…`);
  await generateEvents(ch, events, contacts, (done) => say(`  events ${done.toLocaleString('en')} / ${events.toLocaleString('en')}`));
  const generateSeconds = (performance.now() - started) / 1000;
  writeFileSync(meta, JSON.stringify({ generateSeconds }));
  return { generateSeconds, reused: false };
}

interface Scenario {
  readonly name: string;
  readonly target: string;
  readonly body: (i: number) => Record<string, unknown>;
  /** The same query written by hand: the page (or the aggregation) and the count. */
  readonly hand: (i: number) => { page: string; count: string; params: Record<string, unknown> };
}

const COUNTRIES = ['DE', 'FR', 'US', 'ES', 'IT', 'GB', 'NL', 'PL'];
const country = (i: number): string => COUNTRIES[i % COUNTRIES.length] as string;

function scenarios(ch: ClickHouse): Scenario[] {
  const A = ch.table('audience');
  const E = ch.table('events');
  const scope = `project_id = {p:String} AND deleted = 0`;
  return [
    {
      name: 'attribute-only filter (country, tag, custom score range; 50 per page + total)', target: 'p50 ≤ 50 ms',
      body: (i) => ({
        version: '0.0.1', limit: 50, root: { type: 'group', join: 'and', children: [
          { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: [country(i)] },
          { type: 'attribute_condition', key: '_client_tags', operator: 'matches-string', values: ['vip'] },
          { type: 'attribute_condition', key: 'score', operator: 'range-number', values: { lowerNumber: 50, upperNumber: null } },
        ] },
      }),
      hand: (i) => {
        const where = `${scope} AND country_code = {c:String} AND has(client_tags, 'vip') AND mapContains(attrs_number, 'score') AND attrs_number['score'] >= 50`;
        return { page: `SELECT ${FULL_COLUMNS} FROM ${A} FINAL WHERE ${where} ORDER BY user_id LIMIT 51`, count: `SELECT count() FROM ${A} FINAL WHERE ${where}`, params: { p: BENCH_PROJECT, c: country(i) } };
      },
    },
    {
      name: 'filter with an event group (country + a purchase ≥ 400 in the last 30 days)', target: 'p50 ≤ 150 ms',
      body: (i) => ({
        version: '0.0.1', limit: 50, root: { type: 'group', join: 'and', children: [
          { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: [country(i)] },
          { type: 'group_event', event: 'purchase', children: [
            { type: 'event_condition', key: 'amount', operator: 'range-number', values: { lowerNumber: 400, upperNumber: null } },
            { type: 'event_condition', key: 'created-at', operator: 'range-date-relative', values: { lowerOffset: -30, upperOffset: null } },
          ] },
        ] },
      }),
      hand: (i) => {
        // "30 days" on the project's calendar (Europe/Berlin), as the filter means it.
        const where = `${scope} AND country_code = {c:String} AND user_id IN (SELECT user_id FROM ${E} WHERE project_id = {p:String} AND event_type = 'purchase'
          AND mapContains(params_number, 'amount') AND params_number['amount'] >= 400 AND event_date >= addDays(now64(3, 'Europe/Berlin'), -30))`;
        return { page: `SELECT ${FULL_COLUMNS} FROM ${A} FINAL WHERE ${where} ORDER BY user_id LIMIT 51`, count: `SELECT count() FROM ${A} FINAL WHERE ${where}`, params: { p: BENCH_PROJECT, c: country(i) } };
      },
    },
    {
      name: 'terms aggregation on @_client_tags over all contacts (limit 0, + total)', target: '≤ 300 ms',
      body: () => ({ version: '0.0.1', limit: 0, aggregations: { tags: { type: 'terms', params: { field: '@_client_tags', size: 10, other_bucket: true } } } }),
      hand: () => ({
        page: `SELECT tag, count() AS n FROM ${A} FINAL ARRAY JOIN client_tags AS tag WHERE ${scope} GROUP BY tag ORDER BY n DESC, tag LIMIT 10`,
        count: `SELECT count() FROM ${A} FINAL WHERE ${scope}`, params: { p: BENCH_PROJECT },
      }),
    },
  ];
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

const stats = (xs: number[]): { p50: number; p95: number; n: number } => ({ p50: round(percentile(xs, 50)), p95: round(percentile(xs, 95)), n: xs.length });

async function main(): Promise<void> {
  const contacts = Number(values.contacts);
  const events = Number(values.events);
  const runs = Number(values.runs);
  const dir = values.data ?? mkdtempSync(join(tmpdir(), 'bench-audience-'));
  mkdirSync(dir, { recursive: true });
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'bench_audience', embeddedPath: dir });
  const results: Record<string, unknown> = { startedAt: new Date().toISOString(), loadAtStart: load() };
  try {
    await migrate(ch, createLogger('warn'));
    const data = await ensureData(ch, dir, contacts, events);
    const parts = await rows<{ table: string; parts: string; mib: number }>(ch, `SELECT table, count() AS parts, round(sum(bytes_on_disk) / 1048576) AS mib FROM system.parts
      WHERE database = 'bench_audience' AND active AND table IN ('audience', 'events') GROUP BY table`);
    results['data'] = { contacts, events, ...data, parts };
    const search = new AudienceSearch(ch, { getRoot: async () => null }, Buffer.alloc(32, 3));
    const scope = (): SearchScope => ({ project: BENCH_PROJECT, timezone: 'Europe/Berlin', now: new Date() });

    const out: Record<string, unknown>[] = [];
    for (const s of scenarios(ch)) {
      const product: number[] = [];
      const hand: number[] = [];
      let mismatches = 0;
      let matches = 0;
      for (let i = -2; i < runs; i += 1) {
        const k = Math.max(0, i);
        const p = await timed(() => search.search(parseSearch(s.body(k)), scope()));
        const h = s.hand(k);
        const q = await timed(async () => Promise.all([rows<Record<string, unknown>>(ch, h.page, h.params), rows<Record<string, string>>(ch, h.count, h.params)]));
        if (i < 0) continue; // warm-up
        product.push(p.ms);
        hand.push(q.ms);
        const [handRows, handCount] = q.value;
        matches = p.value.total;
        if (Number(Object.values(handCount[0] ?? {})[0]) !== p.value.total) mismatches += 1;
        if (p.value.entities.length > 0 && JSON.stringify(p.value.entities.map((e) => e['_user_id'])) !== JSON.stringify(handRows.slice(0, 50).map((r) => r['user_id']))) mismatches += 1;
      }
      const row = { name: s.name, target: s.target, matches, product: stats(product), handWritten: stats(hand), ratio: Math.round((percentile(product, 50) / percentile(hand, 50)) * 100) / 100, mismatches };
      say(`${s.name}: product p50 ${row.product.p50} ms p95 ${row.product.p95} ms; hand-written p50 ${row.handWritten.p50} ms; ratio ${row.ratio}; ${matches} matches; mismatches ${mismatches}`);
      out.push(row);
    }

    // Cursor paging through 100,000 matches, 1,000 per page.
    const pageBody = { version: '0.0.1', limit: 1000, root: { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['DE'] } };
    const pageMs: number[] = [];
    const handMs: number[] = [];
    let cursor: string | null = null;
    let last = '';
    let seen = 0;
    while (seen < 100_000) {
      const body: Record<string, unknown> = cursor === null ? pageBody : { cursor };
      const p = await timed(() => search.search(parseSearch(body), scope()));
      const where = `project_id = {p:String} AND deleted = 0 AND country_code = 'DE' AND user_id > {after:String}`;
      // The first page counts the total on both sides; later pages only read the next page.
      const h = await timed(() => Promise.all([
        rows<{ user_id: string }>(ch, `SELECT ${FULL_COLUMNS} FROM ${ch.table('audience')} FINAL WHERE ${where} ORDER BY user_id LIMIT 1001`, { p: BENCH_PROJECT, after: last }),
        cursor === null ? rows(ch, `SELECT count() FROM ${ch.table('audience')} FINAL WHERE project_id = {p:String} AND deleted = 0 AND country_code = 'DE'`, { p: BENCH_PROJECT }) : Promise.resolve([]),
      ]));
      pageMs.push(p.ms);
      handMs.push(h.ms);
      seen += p.value.entities.length;
      last = String(p.value.entities[p.value.entities.length - 1]?.['_user_id'] ?? last);
      cursor = p.value.cursor;
      if (cursor === null) break;
    }
    const tenth = Math.max(1, Math.floor(pageMs.length / 10));
    const paging = {
      name: 'cursor paging through 100,000 matches (1,000 per page)', target: 'steady per-page time', pages: pageMs.length, contacts: seen,
      product: stats(pageMs), handWritten: stats(handMs), ratio: Math.round((percentile(pageMs, 50) / percentile(handMs, 50)) * 100) / 100,
      firstTenthP50: round(percentile(pageMs.slice(0, tenth), 50)), lastTenthP50: round(percentile(pageMs.slice(-tenth), 50)),
    };
    say(`${paging.name}: ${paging.pages} pages, p50 ${paging.product.p50} ms p95 ${paging.product.p95} ms (first tenth ${paging.firstTenthP50}, last tenth ${paging.lastTenthP50}); hand-written p50 ${paging.handWritten.p50}; ratio ${paging.ratio}`);
    out.push(paging);

    // Parse + compile (no I/O).
    const body = scenarios(ch)[1]?.body(0) ?? {};
    const iterations = 20_000;
    const started = performance.now();
    for (let i = 0; i < iterations; i += 1) {
      const request = parseSearch(body) as { kind: 'query'; query: AudienceQuery };
      compileFilter(request.query.root, sqlContext(new ParamBinder(), { audience: 'a', events: 'e' }, BENCH_PROJECT, 'Europe/Berlin', new Date()));
    }
    const parseCompileMicros = round(((performance.now() - started) * 1000) / iterations);

    results['scenarios'] = out;
    results['parseCompileMicros'] = parseCompileMicros;
    results['loadAtEnd'] = load();
    results['machine'] = { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
    mkdirSync(join(values.out, '..'), { recursive: true });
    writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`parse + compile: ${parseCompileMicros} µs; load ${String(results['loadAtStart'])} → ${String(results['loadAtEnd'])}; written to ${values.out}\n`);
  } finally {
    await ch.close();
    if (!values.data) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
