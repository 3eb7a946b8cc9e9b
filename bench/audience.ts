// Audience benchmark (Grammar B, spec 3 §2.3):
//  - data: --contacts (default 1 million) contacts and --events (default 10 million) events
//    generated inside a bench-owned embedded chdb (bench/audience-data.ts), in a temp dir or
//    --data DIR (kept and reused on the next run);
//  - phases (--phases, default quiet,ingesting): "quiet" on the merged tables; "ingesting"
//    while a loop writes --ingest-events (10,000) events/s and --ingest-contacts (1,000)
//    contact upserts/s the way the ingest writer does (bench/support/audience-ingest.ts),
//    after --ingest-warmup seconds (15) of it, so FINAL meets many small overlapping parts;
//  - each scenario runs through the product's path (parseSearch → AudienceSearch.search: the
//    page and the total) and beside it, interleaved, --runs times each, on the same read lane:
//    "before", the statements the product ran before migration 0017 (page and count,
//    FINAL, skip indexes off); "hand", the best exact SQL written by hand on the same storage;
//    "plain", the same statements without FINAL on a plain MergeTree copy of the audience
//    (audience_plain, the quiet state: a floor, not an exact answer under ingestion); and, in
//    the quiet phase, "pre-0020": the product's own statements on a copy of the audience with
//    the column types before migration 0020 (audience_pre0020: project_id and country_code as
//    String instead of LowCardinality), the same rows in one merged part:
//      attribute-only filter      [target p50 ≤ 25 ms quiet]
//      filter with an event group [target p50 ≤ 80 ms quiet]
//      terms aggregation over all contacts [target p50 ≤ 40 ms quiet]
//      one e-mail (selective: migration 0017's skip index)
//      cursor paging through --pages (100) × 1,000 matches [target ≤ 20 ms per page quiet]
//    ingesting: every p50 within 1.5× of quiet; answers checked against the hand-written ones
//    and against the quiet phase's (the load changes no attribute or event they look at);
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
import { startIngestLoad, type IngestCounts } from './support/audience-ingest';
import type { ClickHouseClient } from '@clickhouse/client';

const { values } = benchArgs({
  options: {
    contacts: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '20' },
    pages: { type: 'string', default: '100' },
    phases: { type: 'string', default: 'quiet,ingesting' },
    'ingest-events': { type: 'string', default: '10000' },
    'ingest-contacts': { type: 'string', default: '1000' },
    'ingest-warmup': { type: 'string', default: '15' },
    data: { type: 'string' },
    out: { type: 'string', default: join(__dirname, 'results', 'audience.json') },
  },
});

const say = (line: string): void => { process.stderr.write(`[bench:audience] ${line}\n`); };
const round = (x: number): number => Math.round(x * 10) / 10;

async function rows<T>(client: ClickHouseClient, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  return (await client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}

async function ensureData(ch: ClickHouse, dir: string, contacts: number, events: number): Promise<{ generateSeconds: number; reused: boolean }> {
  const meta = join(dir, 'bench-audience-meta.json');
  // FINAL: an earlier run's ingesting phase left newer versions of some contacts.
  const have = Number((await rows<{ n: string }>(ch.client, `SELECT count() AS n FROM ${ch.table('audience')} FINAL`))[0]?.n ?? 0);
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

/** The quiet state: the audience merged (an earlier ingesting phase leaves small parts), migration 0017's indexes built, the plain copy made. */
async function settle(ch: ClickHouse): Promise<void> {
  const db = { db: ch.database };
  const parts = Number((await rows<{ n: string }>(ch.client, `SELECT count() AS n FROM system.parts WHERE database = {db:String} AND table = 'audience' AND active`, db))[0]?.n ?? 0);
  if (parts > 2) {
    say(`merging the audience's ${parts} parts…`);
    await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table('audience')} FINAL` });
  }
  for (;;) {
    const pending = Number((await rows<{ n: string }>(ch.client, `SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done`, db))[0]?.n ?? 0);
    if (pending === 0) break;
    say(`waiting for ${pending} mutations (skip indexes of migration 0017)…`);
    await new Promise((resolve) => { setTimeout(resolve, 2000); });
  }
  await ch.client.command({ query: `CREATE TABLE IF NOT EXISTS ${ch.table('audience_plain')} ENGINE = MergeTree ORDER BY (project_id, user_id) AS SELECT * FROM ${ch.table('audience')} FINAL` });
  await preLowCardinality(ch);
}

/** Migration 0020's columns with their earlier types (0005_audience.sql). */
const PRE_0020_TYPES: Readonly<Record<string, string>> = { project_id: 'String', country_code: 'Nullable(String)' };

/** audience_pre0020: the audience's current rows with the column types before migration 0020 (same engine, key and skip indexes), merged into one part. */
async function preLowCardinality(ch: ClickHouse): Promise<void> {
  const pre = ch.table('audience_pre0020');
  // A copy made before a later migration added a column (0021: client_tags_distinct) is made again.
  const missing = await rows(ch.client, `SELECT name FROM system.columns WHERE database = {db:String} AND table = 'audience'
    AND name NOT IN (SELECT name FROM system.columns WHERE database = {db:String} AND table = 'audience_pre0020')`, { db: ch.database });
  const exists = (await rows(ch.client, `SELECT 1 FROM system.tables WHERE database = {db:String} AND name = 'audience_pre0020'`, { db: ch.database })).length > 0;
  if (exists && missing.length === 0) return;
  if (exists) await ch.client.command({ query: `DROP TABLE ${pre}` });
  say('copying the audience with the column types before migration 0020…');
  await ch.client.command({ query: `CREATE TABLE ${pre} AS ${ch.table('audience')}` });
  await ch.client.command({ query: `ALTER TABLE ${pre} ${Object.entries(PRE_0020_TYPES).map(([c, t]) => `MODIFY COLUMN ${c} ${t}`).join(', ')}` });
  await ch.client.command({ query: `INSERT INTO ${pre} SELECT * FROM ${ch.table('audience')} FINAL` });
  await ch.client.command({ query: `OPTIMIZE TABLE ${pre} FINAL` });
}

interface Hand { readonly page: string; readonly count: string; readonly params: Record<string, unknown> }

interface Scenario {
  readonly name: string;
  readonly target: string;
  /** Its answer cannot change while the ingest load runs (a relative time window can). */
  readonly stable: boolean;
  readonly body: (i: number) => Record<string, unknown>;
  /** The statements the product ran before (page and count, FINAL), written by hand. */
  readonly before: (i: number) => Hand;
  /** The best exact statements written by hand on the same storage (default: before's). */
  readonly hand?: (i: number) => Hand;
}

const COUNTRIES = ['DE', 'FR', 'US', 'ES', 'IT', 'GB', 'NL', 'PL'];
const country = (i: number): string => COUNTRIES[i % COUNTRIES.length] as string;
/** Statement settings of the "before" column: what reading FINAL did before migration 0017. */
const BEFORE = ' SETTINGS use_skip_indexes = 0';

function scenarios(ch: ClickHouse, contacts: number, emails: readonly string[]): Scenario[] {
  const A = ch.table('audience');
  const E = ch.table('events');
  const scope = `project_id = {p:String} AND deleted = 0`;
  const email = (i: number): string => emails[i % emails.length] ?? 'nobody@example.com';
  return [
    {
      name: 'attribute-only filter (country, tag, custom score range; 50 per page + total)', target: 'p50 ≤ 25 ms quiet', stable: true,
      body: (i) => ({
        version: '0.0.1', limit: 50, root: { type: 'group', join: 'and', children: [
          { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: [country(i)] },
          { type: 'attribute_condition', key: '_client_tags', operator: 'matches-string', values: ['vip'] },
          { type: 'attribute_condition', key: 'score', operator: 'range-number', values: { lowerNumber: 50, upperNumber: null } },
        ] },
      }),
      before: (i) => {
        const where = `${scope} AND country_code = {c:String} AND has(client_tags, 'vip') AND mapContains(attrs_number, 'score') AND attrs_number['score'] >= 50`;
        return { page: `SELECT ${FULL_COLUMNS} FROM ${A} FINAL WHERE ${where} ORDER BY user_id LIMIT 51`, count: `SELECT count() FROM ${A} FINAL WHERE ${where}`, params: { p: BENCH_PROJECT, c: country(i) } };
      },
    },
    {
      name: 'filter with an event group (country + a purchase ≥ 400 in the last 30 days)', target: 'p50 ≤ 80 ms quiet', stable: false,
      body: (i) => ({
        version: '0.0.1', limit: 50, root: { type: 'group', join: 'and', children: [
          { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: [country(i)] },
          { type: 'group_event', event: 'purchase', children: [
            { type: 'event_condition', key: 'amount', operator: 'range-number', values: { lowerNumber: 400, upperNumber: null } },
            { type: 'event_condition', key: 'created-at', operator: 'range-date-relative', values: { lowerOffset: -30, upperOffset: null } },
          ] },
        ] },
      }),
      before: (i) => {
        // "30 days" on the project's calendar (Europe/Berlin), as the filter means it.
        const where = `${scope} AND country_code = {c:String} AND user_id IN (SELECT user_id FROM ${E} WHERE project_id = {p:String} AND event_type = 'purchase'
          AND mapContains(params_number, 'amount') AND params_number['amount'] >= 400 AND event_date >= addDays(now64(3, 'Europe/Berlin'), -30))`;
        return { page: `SELECT ${FULL_COLUMNS} FROM ${A} FINAL WHERE ${where} ORDER BY user_id LIMIT 51`, count: `SELECT count() FROM ${A} FINAL WHERE ${where}`, params: { p: BENCH_PROJECT, c: country(i) } };
      },
    },
    {
      name: 'terms aggregation on @_client_tags over all contacts (limit 0, + total)', target: 'p50 ≤ 40 ms quiet', stable: true,
      body: () => ({ version: '0.0.1', limit: 0, aggregations: { tags: { type: 'terms', params: { field: '@_client_tags', size: 10, other_bucket: true } } } }),
      before: () => ({
        page: `SELECT tag, count() AS n FROM ${A} FINAL ARRAY JOIN client_tags AS tag WHERE ${scope} GROUP BY tag ORDER BY n DESC, tag LIMIT 10`,
        count: `SELECT count() FROM ${A} FINAL WHERE ${scope}`, params: { p: BENCH_PROJECT },
      }),
    },
    {
      name: 'one e-mail (matches-string on _email; skip index)', target: 'selective', stable: true,
      body: (i) => ({ version: '0.0.1', limit: 50, root: { type: 'attribute_condition', key: '_email', operator: 'matches-string', values: [email(i)] } }),
      before: (i) => {
        const where = `${scope} AND isNotNull(email) AND email = {e:String}`;
        return { page: `SELECT ${FULL_COLUMNS} FROM ${A} FINAL WHERE ${where} ORDER BY user_id LIMIT 51`, count: `SELECT count() FROM ${A} FINAL WHERE ${where}`, params: { p: BENCH_PROJECT, e: email(i) } };
      },
    },
  ];
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

const stats = (xs: number[]): { p50: number; p95: number; n: number } => ({ p50: round(percentile(xs, 50)), p95: round(percentile(xs, 95)), n: xs.length });
const ratio = (a: number[], b: number[]): number => Math.round((percentile(a, 50) / percentile(b, 50)) * 100) / 100;

interface Context {
  readonly ch: ClickHouse;
  readonly search: AudienceSearch;
  /** The same code on audience_pre0020 (the column types before migration 0020). */
  readonly searchPre: AudienceSearch;
  /**
   * The session of the hand-written and plain statements: the product's read lane, one statement
   * at a time, so the columns differ only by their SQL (a session of their own measured 2-6x
   * slower than the lane while the ingest load wrote on the main session, plain reads included).
   */
  readonly other: ClickHouseClient;
  readonly contacts: number;
  readonly runs: number;
  readonly pages: number;
  /** Stored e-mails the e-mail scenario looks up, spread over the key range. */
  readonly emails: readonly string[];
}

const scope = (): SearchScope => ({ project: BENCH_PROJECT, timezone: 'Europe/Berlin', now: new Date() });
const plainOf = (ch: ClickHouse, sql: string): string => sql.replaceAll(`${ch.table('audience')} FINAL`, ch.table('audience_plain'));

/** Runs a page and a count (the hand-written and plain columns) on one session, one after the other, as the product's lane does. */
async function pageAndCount(client: ClickHouseClient, h: Hand, settings: string): Promise<[Record<string, unknown>[], Record<string, string>[]]> {
  const page = await rows<Record<string, unknown>>(client, `${h.page}${settings}`, h.params);
  const count = await rows<Record<string, string>>(client, `${h.count}${settings}`, h.params);
  return [page, count];
}

async function runScenarios(x: Context, phase: string, quietTotals: Map<string, number>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const s of scenarios(x.ch, x.contacts, x.emails)) {
    const product: number[] = [];
    const before: number[] = [];
    const hand: number[] = [];
    const plain: number[] = [];
    const pre: number[] = [];
    let mismatches = 0;
    let changedFromQuiet = 0;
    let matches = 0;
    for (let i = -2; i < x.runs; i += 1) {
      const k = Math.max(0, i);
      const p = await timed(() => x.search.search(parseSearch(s.body(k)), scope()));
      const q = phase === 'quiet' ? await timed(() => x.searchPre.search(parseSearch(s.body(k)), scope())) : null;
      const b = await timed(() => pageAndCount(x.other, s.before(k), BEFORE));
      const h = await timed(() => pageAndCount(x.other, (s.hand ?? s.before)(k), ''));
      const bh = s.before(k);
      const f = await timed(() => pageAndCount(x.other, { ...bh, page: plainOf(x.ch, bh.page), count: plainOf(x.ch, bh.count) }, ''));
      if (i < 0) continue; // warm-up
      product.push(p.ms);
      before.push(b.ms);
      hand.push(h.ms);
      plain.push(f.ms);
      if (q !== null) {
        pre.push(q.ms);
        if (q.value.total !== p.value.total || JSON.stringify(q.value.entities) !== JSON.stringify(p.value.entities)) mismatches += 1;
      }
      const [handRows, handCount] = h.value;
      matches = p.value.total;
      if (Number(Object.values(handCount[0] ?? {})[0]) !== p.value.total) mismatches += 1;
      if (Number(Object.values(b.value[1][0] ?? {})[0]) !== p.value.total) mismatches += 1;
      if (p.value.entities.length > 0 && JSON.stringify(p.value.entities.map((e) => e['_user_id'])) !== JSON.stringify(handRows.slice(0, 50).map((r) => r['user_id']))) mismatches += 1;
      const key = `${s.name}#${k}`;
      if (phase === 'quiet') quietTotals.set(key, p.value.total);
      else if (s.stable && quietTotals.has(key) && quietTotals.get(key) !== p.value.total) changedFromQuiet += 1;
    }
    const row = {
      phase, name: s.name, target: s.target, matches, product: stats(product), before: stats(before), handWritten: stats(hand), plainMergeTree: stats(plain),
      ...(pre.length > 0 ? { pre0020: stats(pre), ratioToPre0020: ratio(product, pre) } : {}),
      ratioToHand: ratio(product, hand), ratioToBefore: ratio(product, before), ratioToPlain: ratio(product, plain), mismatches, changedFromQuiet, load: load(),
    };
    say(`[${phase}] ${s.name}: product p50 ${row.product.p50} ms (p95 ${row.product.p95}); before ${row.before.p50}; hand-written ${row.handWritten.p50}; plain MergeTree ${row.plainMergeTree.p50}; pre-0020 ${row.pre0020?.p50 ?? '-'}; ×hand ${row.ratioToHand}, ×before ${row.ratioToBefore}; ${matches} matches; mismatches ${mismatches}, changed from quiet ${changedFromQuiet}; load ${row.load}`);
    out.push(row);
  }
  return out;
}

async function runPaging(x: Context, phase: string): Promise<Record<string, unknown>> {
  const { ch } = x;
  const pageBody = { version: '0.0.1', limit: 1000, root: { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['DE'] } };
  const pageMs: number[] = [];
  const handMs: number[] = [];
  const plainMs: number[] = [];
  const preMs: number[] = [];
  let cursor: string | null = null;
  let preCursor: string | null = null;
  let last = '';
  let seen = 0;
  let mismatches = 0;
  while (seen < x.pages * 1000) {
    const body: Record<string, unknown> = cursor === null ? pageBody : { cursor };
    const p = await timed(() => x.search.search(parseSearch(body), scope()));
    if (phase === 'quiet') {
      const q = await timed(() => x.searchPre.search(parseSearch(preCursor === null ? pageBody : { cursor: preCursor }), scope()));
      preMs.push(q.ms);
      preCursor = q.value.cursor;
      if (JSON.stringify(q.value.entities) !== JSON.stringify(p.value.entities)) mismatches += 1;
    }
    const where = `project_id = {p:String} AND deleted = 0 AND country_code = 'DE' AND user_id > {after:String}`;
    // The first page counts the total on both sides; later pages only read the next page.
    const page = `SELECT ${FULL_COLUMNS} FROM ${ch.table('audience')} FINAL WHERE ${where} ORDER BY user_id LIMIT 1001`;
    const count = `SELECT count() FROM ${ch.table('audience')} FINAL WHERE project_id = {p:String} AND deleted = 0 AND country_code = 'DE'`;
    const h = await timed(async () => Promise.all([
      rows<{ user_id: string }>(x.other, page, { p: BENCH_PROJECT, after: last }),
      cursor === null ? rows(x.other, count, { p: BENCH_PROJECT }) : Promise.resolve([]),
    ]));
    const f = await timed(async () => Promise.all([
      rows<{ user_id: string }>(x.other, plainOf(ch, page), { p: BENCH_PROJECT, after: last }),
      cursor === null ? rows(x.other, plainOf(ch, count), { p: BENCH_PROJECT }) : Promise.resolve([]),
    ]));
    pageMs.push(p.ms);
    handMs.push(h.ms);
    plainMs.push(f.ms);
    if (JSON.stringify(p.value.entities.map((e) => e['_user_id'])) !== JSON.stringify(h.value[0].slice(0, 1000).map((r) => r.user_id))) mismatches += 1;
    seen += p.value.entities.length;
    last = String(p.value.entities[p.value.entities.length - 1]?.['_user_id'] ?? last);
    cursor = p.value.cursor;
    if (cursor === null) break;
  }
  const tenth = Math.max(1, Math.floor(pageMs.length / 10));
  const paging = {
    phase, name: `cursor paging through ${(x.pages * 1000).toLocaleString('en')} matches (1,000 per page)`, target: 'p50 ≤ 20 ms per page quiet, steady', pages: pageMs.length, contacts: seen,
    product: stats(pageMs), handWritten: stats(handMs), plainMergeTree: stats(plainMs),
    ...(preMs.length > 0 ? { pre0020: stats(preMs), ratioToPre0020: ratio(pageMs, preMs) } : {}), ratioToHand: ratio(pageMs, handMs), ratioToPlain: ratio(pageMs, plainMs),
    firstTenthP50: round(percentile(pageMs.slice(0, tenth), 50)), lastTenthP50: round(percentile(pageMs.slice(-tenth), 50)), mismatches, load: load(),
  };
  say(`[${phase}] ${paging.name}: ${paging.pages} pages, p50 ${paging.product.p50} ms p95 ${paging.product.p95} ms (first tenth ${paging.firstTenthP50}, last tenth ${paging.lastTenthP50}); hand-written p50 ${paging.handWritten.p50}; plain ${paging.plainMergeTree.p50}; pre-0020 ${paging.pre0020?.p50 ?? '-'}; ×hand ${paging.ratioToHand}; mismatches ${mismatches}; load ${paging.load}`);
  return paging;
}

async function partsOf(ch: ClickHouse): Promise<unknown> {
  return rows(ch.client, `SELECT table, count() AS parts, sum(rows) AS rows FROM system.parts WHERE database = {db:String} AND active AND table IN ('audience', 'events') GROUP BY table ORDER BY table`, { db: ch.database });
}

async function main(): Promise<void> {
  const contacts = Number(values.contacts);
  const events = Number(values.events);
  const dir = values.data ?? mkdtempSync(join(tmpdir(), 'bench-audience-'));
  mkdirSync(dir, { recursive: true });
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'bench_audience', embeddedPath: dir });
  const results: Record<string, unknown> = { startedAt: new Date().toISOString(), loadAtStart: load() };
  try {
    await migrate(ch, createLogger('warn'));
    const data = await ensureData(ch, dir, contacts, events);
    await settle(ch);
    const parts = await rows<{ table: string; parts: string; mib: number }>(ch.client, `SELECT table, count() AS parts, round(sum(bytes_on_disk) / 1048576) AS mib FROM system.parts
      WHERE database = 'bench_audience' AND active AND table IN ('audience', 'events') GROUP BY table`);
    results['data'] = { contacts, events, ...data, parts };
    const x: Context = {
      ch, search: new AudienceSearch(ch, { getRoot: async () => null }, Buffer.alloc(32, 3)),
      searchPre: new AudienceSearch({ ...ch, table: (name) => ch.table(name === 'audience' ? 'audience_pre0020' : name) }, { getRoot: async () => null }, Buffer.alloc(32, 3)), other: ch.readLane?.() ?? ch.client,
      contacts, runs: Number(values.runs), pages: Number(values.pages),
      emails: (await rows<{ email: string }>(ch.client, `SELECT email FROM ${ch.table('audience_plain')} WHERE isNotNull(email) AND cityHash64(user_id) % 20000 = 7 ORDER BY email LIMIT 40`)).map((r) => r.email),
    };
    const quietTotals = new Map<string, number>();
    const out: Record<string, unknown>[] = [];
    const phases: Record<string, unknown>[] = [];
    for (const phase of values.phases.split(',')) {
      if (phase === 'quiet') {
        const partsAtStart = await partsOf(ch);
        out.push(...await runScenarios(x, phase, quietTotals), await runPaging(x, phase));
        phases.push({ phase, partsAtStart, partsAtEnd: await partsOf(ch) });
      } else if (phase === 'ingesting') {
        const rates = { events: Number(values['ingest-events']), contacts: Number(values['ingest-contacts']) };
        const writer = await startIngestLoad(ch, BENCH_PROJECT, contacts, rates);
        say(`ingesting ${rates.events} events/s and ${rates.contacts} contact upserts/s; measuring after ${values['ingest-warmup']} s…`);
        await new Promise((resolve) => { setTimeout(resolve, Number(values['ingest-warmup']) * 1000); });
        const partsAtStart = await partsOf(ch);
        let counts: IngestCounts;
        try {
          out.push(...await runScenarios(x, phase, quietTotals), await runPaging(x, phase));
        } finally {
          counts = await writer.stop();
        }
        const achieved = { eventsPerSecond: Math.round(counts.events / counts.seconds), contactsPerSecond: Math.round(counts.contacts / counts.seconds) };
        say(`ingest load: ${JSON.stringify({ ...counts, ...achieved })}`);
        phases.push({ phase, rates, ...counts, ...achieved, partsAtStart, partsAtEnd: await partsOf(ch) });
      } else {
        throw new Error(`unknown phase ${phase} (quiet, ingesting)`);
      }
    }
    // Each ingesting figure over its quiet one (target ≤ 1.5).
    const quietP50 = new Map(out.filter((r) => r['phase'] === 'quiet').map((r) => [r['name'], (r['product'] as { p50: number }).p50]));
    for (const r of out.filter((o) => o['phase'] === 'ingesting')) {
      const q = quietP50.get(r['name']);
      if (q !== undefined) r['ratioToQuiet'] = Math.round(((r['product'] as { p50: number }).p50 / q) * 100) / 100;
    }

    // Parse + compile (no I/O).
    const body = scenarios(ch, contacts, [])[1]?.body(0) ?? {};
    const iterations = 20_000;
    const started = performance.now();
    for (let i = 0; i < iterations; i += 1) {
      const request = parseSearch(body) as { kind: 'query'; query: AudienceQuery };
      compileFilter(request.query.root, sqlContext(new ParamBinder(), { audience: 'a', events: 'e' }, BENCH_PROJECT, 'Europe/Berlin', new Date()));
    }
    const parseCompileMicros = round(((performance.now() - started) * 1000) / iterations);

    results['phases'] = phases;
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
