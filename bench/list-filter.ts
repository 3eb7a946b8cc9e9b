// List-filter benchmark (Grammar A, GET /sms):
//  - data: --messages generated messages (default 10 million, support/message-rows.ts) in
//    an embedded chdb in a temp dir (or --data DIR, kept and reused on the next run), inserted
//    through MessageHistory.insert in batches of --batch (default 100k) with progress;
//  - queries: the GET /sms path for the big organization: parseUrl → compile(SMS_FIELDS) →
//    MessageHistory.list (stores/scoped-query.ts listRows), with three filters, a sort and a
//    page, filter values varying; p50/p90/p99 over --queries (default 240);
//  - reference (always): the same query hand-written in plain SQL without FINAL
//    (SELECT … WHERE … ORDER BY … LIMIT … OFFSET), the limit to approach, interleaved, with the
//    ratio product / reference at p50 (it can show an older version of a record: its
//    differences from the truth are counted, not asserted);
//  - --baseline (default on): the truth, the list query as first shipped (SELECT … FINAL WHERE
//    … ORDER BY … LIMIT), interleaved, with its own figures, and a check that the product
//    returns the same ids and statuses in the same order on every query;
//  - --insert-only N: only the insert rate of N generated messages through MessageHistory.insert
//    (the history writer's insert) into a fresh data dir, rows/s, then exit;
//  - parse + compile: median µs over --iterations (default 100k).
// Targets (not assertions): p50 ≤ 30 ms, p90 ≤ 80 ms, p99 ≤ 150 ms, ratio ≤ 1.2 at p50, parse+compile ≤ 50 µs.
// Figures printed with machine and load, and written to bench/results/list-filter.json.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { loadAverage as load, percentile } from './support/results';
import { compile, parseUrl, SMS_FIELDS, type CompiledQuery } from '../core/filters/grammar-a';
import type { SmsMessage } from '../core/sms';
import { migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { fromRow, MESSAGE_COLUMNS, MessageHistory } from '../stores/message-history';
import { generateMessageBatches, GENERATED_COUNTRIES, seededRandom } from '../support/message-rows';

const { values } = benchArgs({
  options: {
    messages: { type: 'string', default: '10000000' },
    batch: { type: 'string', default: '100000' },
    days: { type: 'string', default: '90' },
    queries: { type: 'string', default: '240' },
    iterations: { type: 'string', default: '100000' },
    data: { type: 'string' },
    baseline: { type: 'boolean', default: true },
    'no-baseline': { type: 'boolean', default: false },
    'insert-only': { type: 'string' },
    out: { type: 'string', default: join(__dirname, 'results', 'list-filter.json') },
  },
});

const DATABASE = 'bench';
const ORG = 'org-big';
const say = (line: string): void => { process.stderr.write(`[bench:list] ${line}\n`); };

interface DataMeta { messages: number; from: number; to: number; seed: number; generatedAt: string; insertSeconds: number }

async function scalar<T>(ch: ClickHouse, query: string): Promise<T> {
  const rows = await (await ch.client.query({ query, format: 'JSONEachRow' })).json<Record<string, T>>();
  return Object.values(rows[0] ?? {})[0] as T;
}

async function ensureData(ch: ClickHouse, dir: string): Promise<DataMeta> {
  const metaFile = join(dir, 'bench-meta.json');
  const rows = Number(await scalar<string>(ch, `SELECT count() FROM ${ch.table('sms_messages')}`));
  if (rows > 0 && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as DataMeta;
    say(`reusing ${rows} rows (${meta.messages} messages generated ${meta.generatedAt}) in ${dir}`);
    return meta;
  }
  const messages = Number(values.messages);
  const to = Date.now();
  const from = to - Number(values.days) * 86_400_000;
  const history = new MessageHistory(ch);
  const started = performance.now();
  let done = 0;
  let written = 0;
  say(`generating ${messages} messages over ${values.days} days, batches of ${values.batch}, into ${dir}`);
  for (const batch of generateMessageBatches({ messages, batchSize: Number(values.batch), from, to, seed: 7 })) {
    await history.insert(batch.rows);
    done += batch.messages;
    written += batch.rows.length;
    const elapsed = (performance.now() - started) / 1000;
    const eta = done > 0 ? (elapsed / done) * (messages - done) : 0;
    say(`${done}/${messages} messages, ${written} rows, ${(written / elapsed).toFixed(0)} rows/s, ${elapsed.toFixed(0)} s elapsed, ETA ${eta.toFixed(0)} s, load ${load()}`);
  }
  const meta: DataMeta = { messages, from, to, seed: 7, generatedAt: new Date(to).toISOString(), insertSeconds: (performance.now() - started) / 1000 };
  writeFileSync(metaFile, JSON.stringify(meta));
  return meta;
}

/** The list query as first shipped (stores/scoped-query.ts before the optimization). */
async function baselineList(ch: ClickHouse, compiled: CompiledQuery): Promise<SmsMessage[]> {
  const result = await ch.client.query({
    query: `SELECT ${MESSAGE_COLUMNS} FROM ${ch.table('sms_messages')} FINAL WHERE org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)}) AND (${compiled.where})
            ORDER BY ${compiled.orderBy} LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`,
    query_params: { ...compiled.params, __org: ORG, __project: null, __limit: compiled.limit, __offset: compiled.offset },
    format: 'JSONEachRow',
  });
  return (await result.json<Parameters<typeof fromRow>[0]>()).map(fromRow);
}

/** The same query hand-written without FINAL: the limit to approach (may show an older version). */
async function referenceList(ch: ClickHouse, compiled: CompiledQuery): Promise<SmsMessage[]> {
  const result = await ch.client.query({
    query: `SELECT ${MESSAGE_COLUMNS} FROM ${ch.table('sms_messages')} WHERE org_id = {__org:String} AND (${compiled.where})
            ORDER BY ${compiled.orderBy} LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`,
    query_params: { ...compiled.params, __org: ORG, __limit: compiled.limit, __offset: compiled.offset },
    format: 'JSONEachRow',
  });
  return (await result.json<Parameters<typeof fromRow>[0]>()).map(fromRow);
}

/** Insert rate of the history writer's insert (MessageHistory.insert) into a fresh data dir. */
async function insertOnly(messages: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-list-insert-'));
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: DATABASE, embeddedPath: dir });
  try {
    await migrate(ch, createLogger('warn'));
    const history = new MessageHistory(ch);
    const to = Date.now();
    const batches = [...generateMessageBatches({ messages, batchSize: 2000, from: to - 86_400_000, to, seed: 7 })];
    let rows = 0;
    const started = performance.now();
    for (const batch of batches) { await history.insert(batch.rows); rows += batch.rows.length; }
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`${JSON.stringify({ insert: { messages, rows, batchMessages: 2000, seconds, rowsPerSecond: Math.round(rows / seconds), load: load() } })}\n`);
  } finally {
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const STATUS_SETS = ['delivered', 'delivered|failed', 'failed', 'failed|rejected|expired', 'buffered|accepted|sent', 'delivered|buffered', 'rejected', 'unknown|error'];
const WORDS = ['code', 'order', 'Code', 'colis', 'sale', 'appointment', 'balance'];

/** `GET /sms` query strings: three filters, a sort and a page, values varying (seeded). */
function queryStrings(n: number): string[] {
  const random = seededRandom(2026);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = new URLSearchParams();
    p.set('status_in', pick(STATUS_SETS));
    p.set('country_eq', random() < 0.7 ? pick(['DE', 'FR', 'GB']) : pick(GENERATED_COUNTRIES));
    const third = i % 3;
    if (third === 0) p.set('createdAt_gte', `${1 + Math.floor(random() * 60)} days ago`);
    else if (third === 1) p.set('text_containsi', pick(WORDS));
    else p.set('clientId_exists', random() < 0.8 ? 'true' : 'false');
    p.set('_sort', 'createdAt:-');
    // Half the requests are the first page, the others one of pages 2 to 10.
    p.set('_start', String(random() < 0.5 ? 0 : 50 * (1 + Math.floor(random() * 9))));
    p.set('_limit', '50');
    out.push(p.toString());
  }
  return out;
}

interface Timing { p50: number; p90: number; p99: number; max: number; mean: number }
const timing = (xs: readonly number[]): Timing => ({
  p50: percentile(xs, 50), p90: percentile(xs, 90), p99: percentile(xs, 99), max: Math.max(...xs), mean: xs.reduce((s, x) => s + x, 0) / xs.length,
});
const ms = (t: Timing): string => `p50 ${t.p50.toFixed(1)} ms, p90 ${t.p90.toFixed(1)} ms, p99 ${t.p99.toFixed(1)} ms, max ${t.max.toFixed(1)} ms`;

function parseCompileMedianMicros(queries: readonly string[], iterations: number): { medianMicros: number; p99Micros: number } {
  const block = 100;
  const samples: number[] = [];
  let sink = 0;
  const run = (i: number): void => {
    const c = compile(parseUrl(new URLSearchParams(queries[i % queries.length])), SMS_FIELDS);
    sink += c.where.length;
  };
  for (let i = 0; i < 5000; i++) run(i);
  for (let b = 0; b < iterations / block; b++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < block; i++) run(b * block + i);
    samples.push(Number(process.hrtime.bigint() - started) / 1000 / block);
  }
  if (sink === 0) say('(no SQL compiled)');
  return { medianMicros: percentile(samples, 50), p99Micros: percentile(samples, 99) };
}

async function main(): Promise<void> {
  if (values['insert-only'] !== undefined) return insertOnly(Number(values['insert-only']));
  const machine = { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform };
  const dir = values.data ?? mkdtempSync(join(tmpdir(), 'bench-list-filter-'));
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: DATABASE, embeddedPath: dir });
  const results: Record<string, unknown> = { machine, at: new Date().toISOString(), loadAtStart: load() };
  try {
    await migrate(ch, createLogger('warn'));
    const meta = await ensureData(ch, dir);
    for (;;) {
      const pending = Number(await scalar<string>(ch, `SELECT count() FROM system.mutations WHERE database = '${DATABASE}' AND NOT is_done`));
      if (pending === 0) break;
      say(`waiting for ${pending} mutation(s) (index materialization)`);
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
    const table = (await (await ch.client.query({
      query: `SELECT (SELECT count() FROM ${ch.table('sms_messages')}) AS rows,
                     (SELECT count() FROM ${ch.table('sms_messages')} WHERE org_id = '${ORG}') AS orgRows,
                     (SELECT uniqExact(id) FROM ${ch.table('sms_messages')} WHERE org_id = '${ORG}') AS orgMessages,
                     (SELECT count() FROM system.parts WHERE database = '${DATABASE}' AND table = 'sms_messages' AND active) AS parts,
                     (SELECT sum(bytes_on_disk) FROM system.parts WHERE database = '${DATABASE}' AND table = 'sms_messages' AND active) AS bytes,
                     (SELECT groupArray(name) FROM system.data_skipping_indices WHERE database = '${DATABASE}' AND table = 'sms_messages') AS skipIndexes`,
      format: 'JSONEachRow',
    })).json<Record<string, unknown>>())[0] ?? {};
    results['data'] = { ...meta, table: { ...table, mib: Math.round(Number(table['bytes']) / 2 ** 20) } };
    say(`table: ${JSON.stringify(results['data'])}`);

    const history = new MessageHistory(ch);
    const visibility = { orgId: ORG, projectId: null };
    const strings = queryStrings(Number(values.queries));
    const withBaseline = values.baseline && !values['no-baseline'];
    const product: number[] = [];
    const reference: number[] = [];
    const baseline: number[] = [];
    let referenceDiffers = 0;
    const fullPages: number[] = [];
    const firstPage: number[] = [];
    const deeperPages: number[] = [];
    let mismatches = 0;
    say(`warm-up, then ${strings.length} queries${withBaseline ? ', each also through the baseline query (interleaved)' : ''}; load ${load()}`);
    for (const qs of strings.slice(0, 5)) await history.list(visibility, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS));
    const loads: number[] = [];
    for (const [i, qs] of strings.entries()) {
      const runProduct = async (): Promise<SmsMessage[]> => {
        const started = performance.now();
        const rows = await history.list(visibility, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS));
        product.push(performance.now() - started);
        return rows;
      };
      const runReference = async (): Promise<SmsMessage[]> => {
        const started = performance.now();
        const rows = await referenceList(ch, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS));
        reference.push(performance.now() - started);
        return rows;
      };
      const runBaseline = async (): Promise<SmsMessage[]> => {
        const started = performance.now();
        const rows = await baselineList(ch, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS));
        baseline.push(performance.now() - started);
        return rows;
      };
      let got: SmsMessage[];
      const key = (ms: readonly SmsMessage[]): string => ms.map((m) => `${m.id}/${m.status}`).join();
      // Product and reference side by side, alternating which goes first.
      const refFirst = i % 2 === 1;
      const ref = refFirst ? await runReference() : [];
      if (!withBaseline) got = await runProduct();
      else {
        const first = i % 2 === 0;
        const a = first ? await runProduct() : await runBaseline();
        const b = first ? await runBaseline() : await runProduct();
        got = first ? a : b;
        const expected = first ? b : a;
        if (got.map((m) => `${m.id}/${m.status}`).join() !== expected.map((m) => `${m.id}/${m.status}`).join()) {
          mismatches += 1;
          say(`MISMATCH on ${qs}: ${got.length} vs ${expected.length} rows`);
        }
      }
      const refRows = refFirst ? ref : await runReference();
      if (key(refRows) !== key(got)) referenceDiffers += 1;
      fullPages.push(got.length);
      const took = product[product.length - 1] ?? 0;
      (new URLSearchParams(qs).get('_start') === '0' ? firstPage : deeperPages).push(took);
      loads.push(loadavg()[0] ?? 0);
      if ((i + 1) % 40 === 0) say(`${i + 1}/${strings.length}: product ${ms(timing(product))}; reference ${ms(timing(reference))}${withBaseline ? `; baseline ${ms(timing(baseline))}` : ''}; load ${load()}`);
    }
    const list = timing(product);
    const slowest = strings.map((qs, i) => ({ ms: Math.round(product[i] ?? 0), rows: fullPages[i] ?? 0, query: decodeURIComponent(qs) }))
      .sort((a, b) => b.ms - a.ms).slice(0, 5);
    results['list'] = {
      queries: strings.length,
      shape: 'status_in + country_eq + one of (createdAt_gte "<n> days ago" | text_containsi | clientId_exists), _sort=createdAt:-, _limit=50, _start=0 for half of them and 50..450 for the others; org-big, account-wide token',
      examples: strings.slice(0, 3),
      product: list,
      productFirstPage: { queries: firstPage.length, ...timing(firstPage) },
      productDeeperPages: { queries: deeperPages.length, ...timing(deeperPages) },
      slowest,
      dataEndMinutesBeforeQueries: Math.round((Date.now() - meta.to) / 60_000),
      reference: timing(reference),
      ratioP50: list.p50 / timing(reference).p50,
      ratioP90: list.p90 / timing(reference).p90,
      ratioP99: list.p99 / timing(reference).p99,
      referenceDiffersFromProduct: referenceDiffers,
      ...(withBaseline ? { baseline: timing(baseline), sameResults: mismatches === 0, mismatches } : {}),
      pages: { full: fullPages.filter((n) => n === 50).length, partial: fullPages.filter((n) => n > 0 && n < 50).length, empty: fullPages.filter((n) => n === 0).length },
      load1mDuringQueries: { min: Math.min(...loads), median: percentile(loads, 50), max: Math.max(...loads) },
    };
    say(`list: product ${ms(list)}${withBaseline ? `; baseline ${ms(timing(baseline))}; same results: ${mismatches === 0}` : ''}`);

    say(`parse + compile, ${values.iterations} iterations`);
    const pc = parseCompileMedianMicros(strings, Number(values.iterations));
    results['parseCompile'] = { iterations: Number(values.iterations), ...pc };
    results['loadAtEnd'] = load();
    results['targets'] = { p50Ms: 30, p90Ms: 80, p99Ms: 150, ratioP50: 1.2, parseCompileMicros: 50 };

    mkdirSync(join(values.out, '..'), { recursive: true });
    writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
    const lines = [
      '',
      `machine: ${machine.cpus} × ${machine.model ?? '?'}, ${machine.memoryGiB} GiB, node ${machine.node}; embedded chdb; load average ${String(results['loadAtStart'])} at start, ${String(results['loadAtEnd'])} at end (other work running)`,
      `data: ${meta.messages} messages, ${String(table['rows'])} rows (${String(table['orgRows'])} rows / ${String(table['orgMessages'])} messages in ${ORG}), ${String(table['parts'])} active parts, ${String((results['data'] as { table: { mib: number } }).table.mib)} MiB`,
      `GET /sms list (${strings.length} queries, 3 filters + sort + page): ${ms(list)}  [targets p50 ≤ 30 ms, p90 ≤ 80 ms, p99 ≤ 150 ms]`,
      `hand-written reference (no FINAL): ${ms(timing(reference))}; ratio at p50 ${(list.p50 / timing(reference).p50).toFixed(2)}; reference differs from product on ${referenceDiffers}`,
      `  first page (${firstPage.length}): ${ms(timing(firstPage))}; pages 2-10 (${deeperPages.length}): ${ms(timing(deeperPages))}`,
      `  slowest: ${slowest.slice(0, 3).map((q) => `${q.ms} ms ${q.query}`).join('; ')}`,
      ...(withBaseline ? [`baseline (FINAL, as first shipped): ${ms(timing(baseline))}; same results: ${mismatches === 0 ? 'yes' : `NO (${mismatches})`}`] : []),
      `parse + compile: median ${pc.medianMicros.toFixed(1)} µs, p99 ${pc.p99Micros.toFixed(1)} µs  [target ≤ 50 µs]`,
      `written to ${values.out}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await ch.close();
    if (values.data === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
