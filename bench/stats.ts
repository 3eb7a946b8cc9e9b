// Delivery statistics benchmark (GET /sms/stats, docs/grammar-a.md "Statistics"):
//  - data: the list benchmark's generated messages (npm run bench:list, test/support/message-rows.ts):
//    --data DIR reuses a data dir that bench:list (--data DIR) filled; without it, --messages
//    are generated into a temp dir first (default 10 million; slow: ~15-30 min on 2 cores);
//  - queries: a few GET /sms/stats queries for the big organization (account-wide, like a legacy
//    token, and one project), through parseUrl → compileStats → MessageStats.sms, --rounds each,
//    interleaved, p50/p99 per query and over all;
//  - beside each, in the same round: the same statistics hand-written in SQL without FINAL
//    (count/sum over every state row: fast, not exact: a message counts once per state row),
//    the limit to approach; and once per query the exact truth, hand-written another way (the
//    newest row of each id by argMax, then the same counts), which the product must equal.
// Figures printed with machine and load, and written to bench/results/stats.json (writeResult).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { loadAverage as load, percentile, writeResult } from './support/results';
import { AppError } from '../core/errors';
import { parseUrl } from '../core/filters/grammar-a';
import { compileStats } from '../core/filters/grammar-a/stats';
import type { SmsStatsRow } from '../core/sms/stats';
import { migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { MessageHistory } from '../stores/message-history';
import { MessageStats, statsStatement } from '../stores/message-stats';
import { generateMessageBatches } from '../test/support/message-rows';

const { values } = benchArgs({
  options: {
    data: { type: 'string' },
    messages: { type: 'string', default: '10000000' },
    rounds: { type: 'string', default: '15' },
    /** Comma-separated indices of QUERIES whose exactness is checked (default all). */
    check: { type: 'string' },
    out: { type: 'string', default: 'stats.json' },
  },
});

const only = values.check === undefined ? null : values.check.split(',').map(Number);
const DATABASE = 'bench';
const ORG = 'org-big';
const PROJECT = 'org-big-p2';
const say = (line: string): void => { process.stderr.write(`[bench:stats] ${line}\n`); };

/** GET /sms/stats query strings and whose scope they run in. */
const QUERIES: readonly { readonly qs: string; readonly project: string | null }[] = [
  { qs: '', project: null },
  { qs: '_group=daily', project: null },
  { qs: '_group=daily,country', project: null },
  { qs: '_group=hourly&createdAt_gte=7 days ago', project: null },
  { qs: '_group=country,status&createdAt_gte=30 days ago', project: null },
  { qs: '_group=monthly,status&country_in=DE|FR', project: null },
  { qs: '_group=daily,country', project: PROJECT },
  { qs: '_group=country&text_containsi=code', project: null },
];

/** The hand-written statistics without FINAL: every state row counts (the limit to approach, not exact). */
function handWritten(ch: ClickHouse, qs: string, project: string | null): { query: string; query_params: Record<string, unknown> } {
  const c = compileStats(parseUrl(new URLSearchParams(qs)), 'sms');
  const scope = `org_id = {__org:String}${project === null ? '' : ' AND project_id = {__project:String}'}`;
  return {
    query: `SELECT ${c.select} FROM ${ch.table('sms_messages')} WHERE ${scope} AND (${c.where})${c.groupBy ? ` GROUP BY ${c.groupBy} ORDER BY ${c.orderBy}` : ''} LIMIT ${c.limit} OFFSET ${c.offset}`,
    query_params: { ...c.params, __org: ORG, __project: project },
  };
}

/** The exact truth, another way: the newest row of each id (argMax by updated_at), then the counts. */
function truth(ch: ClickHouse, qs: string, project: string | null, now: Date): { query: string; query_params: Record<string, unknown> } {
  const c = compileStats(parseUrl(new URLSearchParams(qs)), 'sms', { now });
  const scope = `org_id = {__org:String}${project === null ? '' : ' AND project_id = {__project:String}'}`;
  const columns = ['project_id', 'status', 'country', 'created_at', 'text', 'messages_count', 'price_user_micros', 'charged', 'delivered_at', 'chars_count'];
  // One tuple per id (aliases named like columns would shadow them inside the aggregation).
  const latest = `SELECT argMax(tuple(${columns.join(', ')}), updated_at) AS t FROM ${ch.table('sms_messages')} WHERE ${scope} GROUP BY id`;
  const newest = `SELECT ${columns.map((col, i) => `tupleElement(t, ${i + 1}) AS ${col}`).join(', ')} FROM (${latest})`;
  return {
    query: `SELECT ${c.select} FROM (${newest}) WHERE ${c.where}${c.groupBy ? ` GROUP BY ${c.groupBy} ORDER BY ${c.orderBy}` : ''} LIMIT ${c.limit} OFFSET ${c.offset} SETTINGS max_execution_time = 600`,
    query_params: { ...c.params, __org: ORG, __project: project },
  };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

async function rowsOf(ch: ClickHouse, statement: { query: string; query_params: Record<string, unknown> }): Promise<Record<string, unknown>[]> {
  return (await ch.client.query({ ...statement, format: 'JSONEachRow' })).json<Record<string, unknown>>();
}

async function main(): Promise<void> {
  const machine = { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  const dir = values.data ?? mkdtempSync(join(tmpdir(), 'bench-stats-'));
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: DATABASE, embeddedPath: dir });
  const results: Record<string, unknown> = { machine, at: new Date().toISOString(), loadAtStart: load() };
  try {
    await migrate(ch, createLogger('warn'));
    const existing = Number((await rowsOf(ch, { query: `SELECT count() AS n FROM ${ch.table('sms_messages')}`, query_params: {} }))[0]?.['n'] ?? 0);
    if (existing === 0) {
      const to = Date.now();
      say(`generating ${values.messages} messages into ${dir}`);
      const history = new MessageHistory(ch);
      for (const batch of generateMessageBatches({ messages: Number(values.messages), batchSize: 100_000, from: to - 90 * 86_400_000, to, seed: 7 })) await history.insert(batch.rows);
    } else if (values.data !== undefined && !existsSync(join(dir, 'bench-meta.json'))) say(`using ${existing} rows in ${dir}`);
    const table = (await rowsOf(ch, {
      query: `SELECT (SELECT count() FROM ${ch.table('sms_messages')}) AS rows, (SELECT count() FROM ${ch.table('sms_messages')} WHERE org_id = '${ORG}') AS orgRows,
                     (SELECT count() FROM system.parts WHERE database = '${DATABASE}' AND table = 'sms_messages' AND active) AS parts`,
      query_params: {},
    }))[0] ?? {};
    results['data'] = table;
    say(`table: ${JSON.stringify(table)}; load ${load()}`);

    const stats = new MessageStats(ch);
    const product = (qs: string, project: string | null): Promise<SmsStatsRow[]> =>
      stats.sms({ orgId: ORG, projectId: project }, compileStats(parseUrl(new URLSearchParams(qs)), 'sms'), 'EUR');

    // Exactness, once per query: every column of the product's statement equals the argMax truth.
    const exact: Record<string, boolean> = {};
    for (const [i, { qs, project }] of QUERIES.entries()) {
      if (only !== null && !only.includes(i)) continue;
      // One `now` for both, so that a relative date ("7 days ago") is the same instant in each.
      const now = new Date();
      const compiled = compileStats(parseUrl(new URLSearchParams(qs)), 'sms', { now });
      let mine: Record<string, unknown>[];
      try {
        mine = await rowsOf(ch, statsStatement(ch, { orgId: ORG, projectId: project }, compiled));
      } catch (err) {
        say(`exact: not checked for ${qs || '(totals)'}: ${err instanceof Error ? err.message.slice(0, 120) : String(err)}`);
        continue;
      }
      const expected = await rowsOf(ch, truth(ch, qs, project, now));
      const same = JSON.stringify(mine) === JSON.stringify(expected);
      exact[`${qs || '(totals)'}${project ? ` [project ${project}]` : ''}`] = same;
      say(`exact: ${same ? 'yes' : 'NO'} for ${qs || '(totals)'} (${mine.length} rows)${same ? '' : `: ${JSON.stringify(mine).slice(0, 300)} vs ${JSON.stringify(expected).slice(0, 300)}`}`);
    }
    results['sameAsTruth'] = exact;

    const rounds = Number(values.rounds);
    const perQuery = QUERIES.map(() => ({ product: [] as number[], hand: [] as number[], rows: 0, refused: 0 }));
    const loads: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const [i, { qs, project }] of QUERIES.entries()) {
        const slot = perQuery[i];
        if (!slot) continue;
        const first = (round + i) % 2 === 0;
        const runProduct = async (): Promise<void> => {
          const started = performance.now();
          try {
            slot.rows = (await product(qs, project)).length;
          } catch (err) {
            // Beyond the statement's ceiling (max_execution_time): a 400 QUERY_TOO_EXPENSIVE for the client; counted, timed to the refusal.
            if (!(err instanceof AppError && err.code === 'QUERY_TOO_EXPENSIVE')) throw err;
            slot.refused += 1;
          }
          slot.product.push(performance.now() - started);
        };
        const runHand = async (): Promise<void> => { const t = await timed(() => rowsOf(ch, handWritten(ch, qs, project))); slot.hand.push(t.ms); };
        if (first) { await runProduct(); await runHand(); } else { await runHand(); await runProduct(); }
      }
      loads.push(loadavg()[0] ?? 0);
      say(`round ${round + 1}/${rounds}; load ${load()}`);
    }
    const fig = (xs: readonly number[]): { p50: number; p99: number; max: number } => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), max: Math.max(...xs) });
    results['queries'] = QUERIES.map(({ qs, project }, i) => ({ query: qs || '(totals)', project, rows: perQuery[i]?.rows, refusedTooExpensive: perQuery[i]?.refused, product: fig(perQuery[i]?.product ?? []), handWrittenNoFinal: fig(perQuery[i]?.hand ?? []) }));
    const all = perQuery.flatMap((q) => q.product);
    const allHand = perQuery.flatMap((q) => q.hand);
    results['overall'] = { product: fig(all), handWrittenNoFinal: fig(allHand), ratioP50: percentile(all, 50) / percentile(allHand, 50) };
    results['load1mDuringQueries'] = { min: Math.min(...loads), median: percentile(loads, 50), max: Math.max(...loads) };
    results['loadAtEnd'] = load();
    results['target'] = { p50Ms: 100 };
    const out = writeResult(values.out, results);
    const f = (x: { p50: number; p99: number }): string => `p50 ${x.p50.toFixed(1)} ms, p99 ${x.p99.toFixed(1)} ms`;
    const lines = [
      '',
      `machine: ${machine.cpus} × ${machine.model ?? '?'}, ${machine.memoryGiB} GiB, node ${machine.node}; embedded chdb; load ${String(results['loadAtStart'])} at start, ${String(results['loadAtEnd'])} at end`,
      `data: ${JSON.stringify(table)}`,
      ...QUERIES.map(({ qs, project }, i) => `${(qs || '(totals)').padEnd(48)} ${project ? `[${project}] ` : ''}rows ${perQuery[i]?.rows}${perQuery[i]?.refused ? `, ${perQuery[i]?.refused} refused (ceiling)` : ''}: product ${f(fig(perQuery[i]?.product ?? []))}; hand-written, no FINAL ${f(fig(perQuery[i]?.hand ?? []))}; exact ${exact[`${qs || '(totals)'}${project ? ` [project ${project}]` : ''}`] === undefined ? 'not checked' : exact[`${qs || '(totals)'}${project ? ` [project ${project}]` : ''}`] ? 'yes' : 'NO'}`),
      `all: product ${f(fig(all))}; hand-written ${f(fig(allHand))}  [target p50 ≤ 100 ms]`,
      `written to ${out}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await ch.close();
    if (values.data === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
