// Delivery statistics benchmark (GET /sms/stats, docs/grammar-a.md "Statistics"):
//  - data: the list benchmark's generated messages (npm run bench:list, support/message-rows.ts):
//    --data DIR reuses a data dir that bench:list (--data DIR) filled; without it, --messages
//    are generated into a temp dir first (default 10 million; slow: ~15-30 min on 2 cores);
//  - queries: a few GET /sms/stats queries for the big organization (account-wide, like a legacy
//    token, and one project), through parseUrl → compileStats → MessageStats.sms, --rounds each,
//    interleaved, p50/p99 per query and over all;
//  - the rollup (migration 0015): a pass rolls every closed hour first (timed; the data is
//    static, so the quiet period is 0), then --roll-samples passes each re-roll 3 touched hours
//    of every organization (about 14,000 messages: one hour at 10 M messages a month), timed;
//  - beside each query, in the same round, in alternating order: the product (rollup of closed
//    hours + FINAL for the rest) and the plain FINAL statement (MessageStats without the rollup:
//    the product before migration 0015); with --hand, also the same statistics hand-written
//    without FINAL (not exact); and once per query the exact truth, hand-written another way
//    (the newest row of each id by argMax), which the plain statement must equal, and the
//    product's rows, which must equal the plain statement's.
// Figures printed with machine and load, and written to bench/results/stats.json (writeResult).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { loadAverage as load, percentile, writeResult } from './support/results';
import { AppError } from '../core/errors';
import { parseUrl } from '../core/filters/grammar-a';
import { compileStats } from '../core/filters/grammar-a/stats';
import type { SmsStatsRow } from '../core/sms';
import { migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { MessageHistory } from '../stores/message-history';
import { MessageStats, statsStatement } from '../stores/message-stats';
import { StatsRollup, STATS_ROLLUP_DEFAULTS } from '../stores/stats-rollup';
import { sameStats } from '../support/median-resolution';
import { generateMessageBatches } from '../support/message-rows';

const { values } = benchArgs({
  options: {
    data: { type: 'string' },
    messages: { type: 'string', default: '10000000' },
    rounds: { type: 'string', default: '15' },
    /** Comma-separated indices of QUERIES whose exactness is checked (default all). */
    check: { type: 'string' },
    out: { type: 'string', default: 'stats.json' },
    /** Also time the hand-written statistics without FINAL. */
    hand: { type: 'boolean', default: false },
    'roll-samples': { type: 'string', default: '5' },
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
  const columns = ['project_id', 'direction', 'status', 'country', 'created_at', 'text', 'messages_count', 'price_user_micros', 'charged', 'sent_at', 'delivered_at', 'chars_count'];
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

    // The rollup: every closed hour first (static data: no insert is in flight, a quiet period of 0 is safe).
    const rollup = new StatsRollup(ch, { ...STATS_ROLLUP_DEFAULTS, quietMs: 0, graceMs: 0, hoursPerPass: 1_000_000 });
    const backfill = await timed(() => rollup.pass());
    results['rollupBackfill'] = { hours: backfill.value.hours, seconds: backfill.ms / 1000, load: load() };
    say(`rollup backfill: ${backfill.value.hours} (org, hour) rolled in ${(backfill.ms / 1000).toFixed(1)} s; load ${load()}`);
    // The job's cost in steady state: passes that each re-roll 3 consecutive hours of every organization.
    const samples: { hours: number; messages: number; seconds: number }[] = [];
    const hoursOf = await rowsOf(ch, { query: `SELECT DISTINCT toString(hour) AS hour FROM ${ch.table('sms_stats_hours')} ORDER BY hour`, query_params: {} });
    for (let i = 0; i < Number(values['roll-samples']); i++) {
      const at = Math.floor(hoursOf.length * (0.1 + (0.8 * i) / Math.max(1, Number(values['roll-samples']))));
      const window = hoursOf.slice(at, at + 3).map((h) => String(h['hour']));
      const [sized] = await rowsOf(ch, { query: `SELECT count() AS n FROM ${ch.table('sms_messages')} FINAL WHERE toStartOfHour(created_at) IN {w:Array(DateTime('UTC'))}`, query_params: { w: window.map((h) => h.slice(0, 19)) } });
      await ch.client.command({ query: `INSERT INTO ${ch.table('sms_stats_touched')} SELECT org_id, hour, now64(3, 'UTC') FROM ${ch.table('sms_stats_hours')} WHERE hour IN {w:Array(DateTime64(3, 'UTC'))}`, query_params: { w: window } });
      const pass = await timed(() => rollup.pass());
      samples.push({ hours: pass.value.hours, messages: Number(sized?.['n'] ?? 0), seconds: pass.ms / 1000 });
    }
    const perHour10M = samples.map((x) => (x.seconds * (10_000_000 / (30 * 24))) / Math.max(1, x.messages));
    results['rollupPasses'] = { samples, secondsPerHourOf10MPerMonth: { p50: percentile(perHour10M, 50), max: Math.max(...perHour10M) } };
    say(`rollup passes: ${JSON.stringify(samples)}; seconds per hour of 10 M/month data: p50 ${percentile(perHour10M, 50).toFixed(3)}`);

    const after = new MessageStats(ch);
    const before = new MessageStats(ch, undefined, { rollup: false });
    const run = (stats: MessageStats, qs: string, project: string | null, now?: Date): Promise<SmsStatsRow[]> =>
      stats.sms({ orgId: ORG, projectId: project }, compileStats(parseUrl(new URLSearchParams(qs)), 'sms', now ? { now } : {}), 'EUR');

    // Exactness, once per query: the plain statement equals the argMax truth, and the product's rows equal the plain statement's.
    const exact: Record<string, boolean> = {};
    const sameAsPlain: Record<string, boolean> = {};
    for (const [i, { qs, project }] of QUERIES.entries()) {
      if (only !== null && !only.includes(i)) continue;
      const label = `${qs || '(totals)'}${project ? ` [project ${project}]` : ''}`;
      // One `now` for all, so that a relative date ("7 days ago") is the same instant in each.
      const now = new Date();
      const compiled = compileStats(parseUrl(new URLSearchParams(qs)), 'sms', { now });
      try {
        const mine = await rowsOf(ch, statsStatement(ch, { orgId: ORG, projectId: project }, compiled, 'max_execution_time = 600'));
        const expected = await rowsOf(ch, truth(ch, qs, project, now));
        exact[label] = JSON.stringify(mine) === JSON.stringify(expected);
        const plainRows = await run(new MessageStats(ch, { maxExecutionSeconds: 600, maxMemoryBytes: 4 * 1024 ** 3 }, { rollup: false }), qs, project, now);
        const rollupRows = await run(after, qs, project, now);
        // The same counts, the medians within the histograms' resolution (support/median-resolution.ts).
        sameAsPlain[label] = sameStats(rollupRows, plainRows);
      } catch (err) {
        say(`exact: not checked for ${label}: ${err instanceof Error ? err.message.slice(0, 120) : String(err)}`);
        continue;
      }
      say(`exact: plain = truth ${exact[label] ? 'yes' : 'NO'}, rollup = plain ${sameAsPlain[label] ? 'yes' : 'NO'} for ${label}`);
    }
    results['sameAsTruth'] = exact;
    results['rollupSameAsPlain'] = sameAsPlain;

    const rounds = Number(values.rounds);
    const perQuery = QUERIES.map(() => ({ after: [] as number[], before: [] as number[], hand: [] as number[], rows: 0, refused: 0 }));
    const loads: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const [i, { qs, project }] of QUERIES.entries()) {
        const slot = perQuery[i];
        if (!slot) continue;
        const timeOf = (stats: MessageStats, into: number[]) => async (): Promise<void> => {
          const started = performance.now();
          try {
            slot.rows = (await run(stats, qs, project)).length;
          } catch (err) {
            // Beyond the statement's ceiling (max_execution_time): a 400 QUERY_TOO_EXPENSIVE for the client; counted, timed to the refusal.
            if (!(err instanceof AppError && err.code === 'QUERY_TOO_EXPENSIVE')) throw err;
            slot.refused += 1;
          }
          into.push(performance.now() - started);
        };
        const steps = [timeOf(after, slot.after), timeOf(before, slot.before)];
        if (values.hand) steps.push(async () => { const t = await timed(() => rowsOf(ch, handWritten(ch, qs, project))); slot.hand.push(t.ms); });
        if ((round + i) % 2 === 1) steps.reverse();
        for (const step of steps) await step();
      }
      loads.push(loadavg()[0] ?? 0);
      say(`round ${round + 1}/${rounds}; load ${load()}`);
    }
    const fig = (xs: readonly number[]): { p50: number; p99: number; max: number } | null => xs.length === 0 ? null : { p50: percentile(xs, 50), p99: percentile(xs, 99), max: Math.max(...xs) };
    results['queries'] = QUERIES.map(({ qs, project }, i) => ({
      query: qs || '(totals)', project, rows: perQuery[i]?.rows, refusedTooExpensive: perQuery[i]?.refused,
      rollup: fig(perQuery[i]?.after ?? []), plainFinal: fig(perQuery[i]?.before ?? []), handWrittenNoFinal: fig(perQuery[i]?.hand ?? []),
    }));
    const all = perQuery.flatMap((q) => q.after);
    const allBefore = perQuery.flatMap((q) => q.before);
    results['overall'] = { rollup: fig(all), plainFinal: fig(allBefore), handWrittenNoFinal: fig(perQuery.flatMap((q) => q.hand)), speedupP50: percentile(allBefore, 50) / percentile(all, 50) };
    results['load1mDuringQueries'] = { min: Math.min(...loads), median: percentile(loads, 50), max: Math.max(...loads) };
    results['loadAtEnd'] = load();
    results['target'] = { p50Ms: 100 };
    const out = writeResult(values.out, results);
    const f = (x: { p50: number; p99: number } | null): string => (x ? `p50 ${x.p50.toFixed(1)} / p99 ${x.p99.toFixed(1)} ms` : '-');
    const lines = [
      '',
      `machine: ${machine.cpus} × ${machine.model ?? '?'}, ${machine.memoryGiB} GiB, node ${machine.node}; embedded chdb; load ${String(results['loadAtStart'])} at start, ${String(results['loadAtEnd'])} at end; 1-min load during queries ${JSON.stringify(results['load1mDuringQueries'])}`,
      `data: ${JSON.stringify(table)}`,
      `rollup backfill ${backfill.value.hours} hours in ${(backfill.ms / 1000).toFixed(1)} s; a pass re-rolling one hour of 10 M/month data: p50 ${percentile(perHour10M, 50).toFixed(3)} s`,
      `${'query'.padEnd(58)} ${'rows'.padStart(5)}  ${'rollup (after)'.padEnd(30)} ${'plain FINAL (before)'.padEnd(30)} rollup = plain`,
      ...QUERIES.map(({ qs, project }, i) => {
        const label = `${qs || '(totals)'}${project ? ` [project ${project}]` : ''}`;
        const q = perQuery[i];
        return `${label.padEnd(58)} ${String(q?.rows).padStart(5)}  ${f(fig(q?.after ?? [])).padEnd(30)} ${f(fig(q?.before ?? [])).padEnd(30)} ${sameAsPlain[label] === undefined ? 'not checked' : sameAsPlain[label] ? 'yes' : 'NO'}${q?.refused ? ` (${q.refused} refused by the ceiling)` : ''}${values.hand ? `; no FINAL ${f(fig(q?.hand ?? []))}` : ''}`;
      }),
      `all: rollup ${f(fig(all))}; plain FINAL ${f(fig(allBefore))}  [target p50 ≤ 100 ms]`,
      `written to ${out}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await ch.close();
    if (values.data === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
