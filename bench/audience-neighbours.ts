// Neighbours of a heavy audience searcher (spec 3 §4.2; docs/decisions.md "audience search cost
// and tenant isolation"): organization B's ordinary reads, quiet and while organization A runs
// its most expensive allowed search in a loop from --clients (2: its in-flight bound) concurrent
// clients, in one process sharing one embedded chdb, as the gateway does:
//  - data: A's project `bench` of bench:audience (--contacts, --events; reused from --data DIR,
//    generated there when missing) and B's project `bench-b` (--b-contacts 100,000 contacts,
//    --b-events 1,000,000 events, the same generator) plus B's SMS history (--b-messages 100,000
//    messages of support/message-rows.ts; B is its `org-big`), generated once into the same DIR;
//  - A's search: an OR of `contains` with --a-values (20) values on `_universal_search` and an
//    event group over every `view` event, with a terms aggregation over all contacts: three
//    statements of 1.5-3 s each on 1 M contacts / 10 M events, under the per-statement ceilings
//    (a 400 QUERY_TOO_EXPENSIVE is counted, not retried);
//  - B, one request after another, --rounds (40) rounds quiet and --heavy-rounds (15) with A looping, of: attribute-only search (country + tag,
//    50 + total), search with an event group (purchase ≥ 400 in 30 days), the next cursor page
//    (1,000 per page) of a walk, and `GET /sms` as the SMS API reads it (parseUrl → compile(SMS_FIELDS)
//    → MessageHistory.list: status_in + country_eq + _sort=createdAt:- + _start=0, _limit=50);
//  - phases: quiet (A idle), then A looping (after --warmup 3 s of it); the audience search is
//    one AudienceSearch for both organizations (one per gateway process), with the fairness
//    of config/ (AUDIENCE_FAIRNESS and the AUDIENCE_* knobs from the environment) unless
//    --fairness off (every statement on the one read lane, as before the fairness).
// Prints p50/p99 of each of B's operations per phase and their ratio to quiet, A's searches per
// second and latency, machine and load; writes bench/results/audience-neighbours-<date>-<commit>[-label].json.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { loadAverage as load, percentile, writeResult } from './support/results';
import { BENCH_PROJECT, generateContacts, generateEvents } from './audience-data';
import { AppError } from '../core/errors';
import { compile, parseUrl, SMS_FIELDS } from '../core/filters/grammar-a';
import { parseSearch } from '../core/filters/grammar-b';
import { migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { loadConfig } from '../config';
import { searchFairness } from '../roles/gateway-http';
import { AudienceSearch, DEFAULT_CEILING, type SearchScope } from '../stores/audience-search';
import { MessageHistory } from '../stores/message-history';
import { generateMessageBatches } from '../support/message-rows';

const { values } = benchArgs({
  options: {
    data: { type: 'string' },
    contacts: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '10000000' },
    'b-contacts': { type: 'string', default: '100000' },
    'b-events': { type: 'string', default: '1000000' },
    'b-messages': { type: 'string', default: '100000' },
    'a-values': { type: 'string', default: '20' },
    clients: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '40' },
    'heavy-rounds': { type: 'string', default: '15' },
    fairness: { type: 'string', default: 'config' },
    warmup: { type: 'string', default: '3' },
    phases: { type: 'string', default: 'quiet,heavy' },
    label: { type: 'string', default: '' },
  },
});

const B_PROJECT = 'bench-b';
const ORG_A = 'org-a';
/** B's SMS history is the generator's big organization. */
const ORG_B = 'org-big';
const say = (line: string): void => { process.stderr.write(`[bench:neighbours] ${line}\n`); };
const round = (x: number): number => Math.round(x * 10) / 10;

async function count(ch: ClickHouse, sql: string, params: Record<string, unknown>): Promise<number> {
  const rows = await (await ch.client.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<{ n: string }>();
  return Number(rows[0]?.n ?? 0);
}

async function ensureData(ch: ClickHouse, dir: string): Promise<Record<string, unknown>> {
  const audience = ch.table('audience');
  const contacts = Number(values.contacts);
  const aHave = await count(ch, `SELECT count() AS n FROM ${audience} FINAL WHERE project_id = {p:String}`, { p: BENCH_PROJECT });
  if (aHave === 0) {
    say(`generating A: ${contacts} contacts, ${values.events} events…`);
    await generateContacts(ch, contacts);
    await generateEvents(ch, Number(values.events), contacts, (done) => say(`  events ${done.toLocaleString('en')}`));
  }
  const meta = join(dir, 'bench-neighbours-meta.json');
  if (!existsSync(meta)) {
    const started = performance.now();
    const bContacts = Number(values['b-contacts']);
    say(`generating B: ${bContacts} contacts, ${values['b-events']} events, ${values['b-messages']} messages…`);
    await generateContacts(ch, bContacts, B_PROJECT);
    await generateEvents(ch, Number(values['b-events']), bContacts, (done) => say(`  events ${done.toLocaleString('en')}`), B_PROJECT);
    const history = new MessageHistory(ch);
    const to = Date.now();
    for (const batch of generateMessageBatches({ messages: Number(values['b-messages']), batchSize: 50_000, from: to - 30 * 86_400_000, to, seed: 5 })) {
      await history.insert(batch.rows);
    }
    writeFileSync(meta, JSON.stringify({ generatedAt: new Date().toISOString(), seconds: round((performance.now() - started) / 1000), bContacts, bEvents: Number(values['b-events']), bMessages: Number(values['b-messages']) }));
  }
  const parts = await (await ch.client.query({ query: `SELECT table, count() AS parts FROM system.parts WHERE database = {db:String} AND active AND table IN ('audience', 'events', 'sms_messages') GROUP BY table ORDER BY table`, query_params: { db: ch.database }, format: 'JSONEachRow' })).json();
  return {
    aContacts: aHave || contacts, bContacts: await count(ch, `SELECT count() AS n FROM ${audience} FINAL WHERE project_id = {p:String}`, { p: B_PROJECT }),
    bMessageRows: await count(ch, `SELECT count() AS n FROM ${ch.table('sms_messages')} WHERE org_id = {o:String}`, { o: ORG_B }),
    meta: JSON.parse(readFileSync(meta, 'utf8')) as unknown, parts,
  };
}

const scopeOf = (project: string, org: string): SearchScope => ({ project, org, timezone: 'Europe/Berlin', now: new Date() });

/** A's search: the costliest shape the limits still take (see the header). */
function heavyBody(n: number): Record<string, unknown> {
  return {
    version: '0.0.1', limit: 50,
    root: { type: 'group', join: 'or', children: [
      { type: 'attribute_condition', key: '_universal_search', operator: 'contains', values: Array.from({ length: n }, (_, i) => `zq${i}x`.padEnd(20, 'y')) },
      { type: 'group_event', event: 'view', children: [{ type: 'event_condition', key: 'amount', operator: 'range-number', values: { lowerNumber: 0, upperNumber: null } }] },
    ] },
    aggregations: { tags: { type: 'terms', params: { field: '@_client_tags', size: 10, other_bucket: true } } },
  };
}

const COUNTRIES = ['DE', 'FR', 'US', 'ES', 'IT', 'GB', 'NL', 'PL'];
const attributeOnly = (i: number): Record<string, unknown> => ({
  version: '0.0.1', limit: 50, root: { type: 'group', join: 'and', children: [
    { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: [COUNTRIES[i % COUNTRIES.length]] },
    { type: 'attribute_condition', key: '_client_tags', operator: 'matches-string', values: ['vip'] },
  ] },
});
const eventGroup = (i: number): Record<string, unknown> => ({
  version: '0.0.1', limit: 50, root: { type: 'group', join: 'and', children: [
    { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: [COUNTRIES[i % COUNTRIES.length]] },
    { type: 'group_event', event: 'purchase', children: [
      { type: 'event_condition', key: 'amount', operator: 'range-number', values: { lowerNumber: 400, upperNumber: null } },
      { type: 'event_condition', key: 'created-at', operator: 'range-date-relative', values: { lowerOffset: -30, upperOffset: null } },
    ] },
  ] },
});
const WALK = { version: '0.0.1', limit: 1000, root: { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['DE'] } };
const SMS_QUERIES = ['DE', 'FR', 'GB'].map((c) => `status_in=delivered,failed&country_eq=${c}&_sort=createdAt:-&_start=0&_limit=50`);

type Op = 'attribute-only search' | 'event-group search' | 'cursor page' | 'GET /sms list';
const OPS: readonly Op[] = ['attribute-only search', 'event-group search', 'cursor page', 'GET /sms list'];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** B's rounds, one request after another; the cursor walk goes on across rounds. */
async function runB(search: AudienceSearch, history: MessageHistory, rounds: number): Promise<Record<Op, number[]>> {
  const out: Record<Op, number[]> = { 'attribute-only search': [], 'event-group search': [], 'cursor page': [], 'GET /sms list': [] };
  let cursor: string | null = null;
  for (let i = 0; i < rounds; i += 1) {
    out['attribute-only search'].push(await timed(() => search.search(parseSearch(attributeOnly(i)), scopeOf(B_PROJECT, ORG_B))));
    out['event-group search'].push(await timed(() => search.search(parseSearch(eventGroup(i)), scopeOf(B_PROJECT, ORG_B))));
    // The first page (with its total) starts the walk; the measured ones are the cursor pages.
    if (cursor === null) cursor = (await search.search(parseSearch(WALK), scopeOf(B_PROJECT, ORG_B))).cursor;
    const c: string | null = cursor;
    out['cursor page'].push(await timed(async () => { cursor = (await search.search(parseSearch({ cursor: c }), scopeOf(B_PROJECT, ORG_B))).cursor; }));
    const qs = SMS_QUERIES[i % SMS_QUERIES.length] as string;
    out['GET /sms list'].push(await timed(() => history.list({ orgId: ORG_B, projectId: null }, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS))));
    if (i % 5 === 4) say(`  round ${i + 1}/${rounds}: ${OPS.map((op) => `${op} ${Math.round(out[op][i] ?? 0)}`).join(', ')} ms`);
  }
  return out;
}

interface Heavy { stop(): Promise<{ ok: number; refused: number; latencies: number[]; seconds: number }>; mark(): void }

/** A's loop from `clients` concurrent clients; `mark` starts the counted window. */
function startHeavy(search: AudienceSearch, clients: number, n: number): Heavy {
  let stopping = false;
  let counting = false;
  let since = 0;
  let ok = 0;
  let refused = 0;
  const latencies: number[] = [];
  const body = heavyBody(n);
  const loops = Array.from({ length: clients }, async () => {
    while (!stopping) {
      const started = performance.now();
      let good = true;
      try {
        await search.search(parseSearch(body), scopeOf(BENCH_PROJECT, ORG_A));
      } catch (err) {
        good = false;
        if (!(err instanceof AppError && err.code === 'QUERY_TOO_EXPENSIVE')) throw err;
      }
      if (!counting) continue;
      latencies.push(performance.now() - started);
      if (good) ok += 1; else refused += 1;
    }
  });
  return {
    mark: () => { counting = true; since = performance.now(); },
    stop: async () => {
      const seconds = (performance.now() - since) / 1000;
      stopping = true;
      await Promise.all(loops);
      return { ok, refused, latencies, seconds };
    },
  };
}

const commit = (): string => execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();

async function main(): Promise<void> {
  if (!values.data) throw new Error('--data DIR is required (the data is generated once and reused)');
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'bench_audience', embeddedPath: values.data });
  const results: Record<string, unknown> = { startedAt: new Date().toISOString(), commit: commit(), label: values.label, loadAtStart: load() };
  try {
    await migrate(ch, createLogger('warn'));
    results['data'] = await ensureData(ch, values.data);
    const configured = loadConfig(process.env).audience.fairness;
    const fairness = values.fairness === 'off' ? undefined : searchFairness(configured);
    results['fairness'] = fairness === undefined ? 'off' : { ...configured, heavySettings: fairness.heavySettings };
    say(`fairness: ${JSON.stringify(results['fairness'])}`);
    const search = new AudienceSearch(ch, { getRoot: async () => null }, Buffer.alloc(32, 3), DEFAULT_CEILING, fairness);
    const history = new MessageHistory(ch);
    const rounds = Number(values.rounds);
    await runB(search, history, 2); // warm-up
    const a0 = performance.now();
    await search.search(parseSearch(heavyBody(Number(values['a-values']))), scopeOf(BENCH_PROJECT, ORG_A));
    results['heavyAloneMs'] = Math.round(performance.now() - a0);
    say(`A's search alone: ${String(results['heavyAloneMs'])} ms; load ${load()}`);
    const phases: Record<string, unknown>[] = [];
    results['phases'] = phases;
    const name = `audience-neighbours-${new Date().toISOString().slice(0, 16).replace(':', '')}-${String(results['commit'])}${values.label ? `-${values.label}` : ''}.json`;
    const quiet = new Map<Op, number[]>();
    for (const phase of values.phases.split(',')) {
      const loadBefore = load();
      let b: Record<Op, number[]>;
      let a: Awaited<ReturnType<Heavy['stop']>> | undefined;
      if (phase === 'quiet') {
        b = await runB(search, history, rounds);
      } else if (phase === 'heavy') {
        const heavy = startHeavy(search, Number(values.clients), Number(values['a-values']));
        await new Promise((resolve) => { setTimeout(resolve, Number(values.warmup) * 1000); });
        heavy.mark();
        try {
          b = await runB(search, history, Number(values['heavy-rounds']));
        } finally {
          a = await heavy.stop();
        }
      } else {
        throw new Error(`unknown phase ${phase} (quiet, heavy)`);
      }
      const ops = OPS.map((op) => {
        const xs = b[op];
        if (phase === 'quiet') quiet.set(op, xs);
        const q = quiet.get(op);
        const row = {
          op, n: xs.length, p50: round(percentile(xs, 50)), p99: round(percentile(xs, 99)), max: round(Math.max(...xs)),
          ...(q && phase !== 'quiet' ? { p50ToQuiet: round(percentile(xs, 50) / percentile(q, 50)), p99ToQuiet: round(percentile(xs, 99) / percentile(q, 99)) } : {}),
        };
        say(`[${phase}] B ${op}: p50 ${row.p50} ms, p99 ${row.p99} ms${'p99ToQuiet' in row ? ` (×${row.p50ToQuiet} / ×${row.p99ToQuiet} quiet)` : ''}`);
        return row;
      });
      const heavy = a === undefined ? undefined : {
        searches: a.ok, refused: a.refused, seconds: round(a.seconds), perSecond: Math.round((a.ok / a.seconds) * 100) / 100,
        p50: round(percentile(a.latencies, 50)), p99: round(percentile(a.latencies, 99)),
      };
      if (heavy) say(`[${phase}] A: ${heavy.searches} searches in ${heavy.seconds} s (${heavy.perSecond}/s, p50 ${heavy.p50} ms), ${heavy.refused} refused`);
      phases.push({ phase, ops, ...(heavy ? { heavy } : {}), loadBefore, loadAfter: load() });
      say(`[${phase}] load ${loadBefore} → ${load()}`);
      results['loadAtEnd'] = load();
      results['machine'] = { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
      // After each phase, so that a run stopped in the next one keeps what it measured.
      writeResult(name, results);
    }
    process.stdout.write(`written to bench/results/${name}\n`);
  } finally {
    await ch.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
