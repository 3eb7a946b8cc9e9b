// What the ingest writer's contacts write phase is made of (pipelines/ingest-writer.ts, phase
// `write`), on the embedded ClickHouse of this process: runs of bench:ingest-shaped contacts
// (new users, 100 per stream message, --messages per run) go through the writer's own
// functions (touched, AudienceWriter.loadStates, planWrites, AudienceWriter.write), and each
// insert of the write is timed apart: its wall (call to resolve), and the CPU of the JavaScript
// thread and of every other thread (chdb's) over the whole write. Variants (--variants, a comma
// list) each get a database of their own in one data directory and run interleaved, run by run:
//   base                 the tables as migrated, the writer as it is;
//   no-bloom             migration 0017's three bloom-filter skip indexes dropped;
//   no-distinct          migration 0021's MATERIALIZED client_tags_distinct dropped;
//   no-lowcard           migration 0020's LowCardinality columns back to String;
//   bare-audience        all three of the above;
//   no-parallel-parse    input_format_parallel_parsing = 0 on those inserts;
//   compact-parts        audience and ds_contacts parts compact (min_bytes_for_wide_part 1 GiB);
//   no-state             ds_contacts' state written as '' (what parsing and storing the JSON costs; not exact;
//                        its JS CPU includes rewriting the rows, its ds_contacts wall does not);
// ClickHouse's counters (system.events) over each write are kept per 1,000 contacts too (µs
// counters as ms; merges of the other variants' tables may fall into them).
// The first --warmup runs of each variant are not counted. Medians per variant, printed and
// written to bench/results/ (--out).
// Usage: node --import tsx bench/ingest-write-phase.ts [--runs 6 --warmup 1 --messages 500 --variants base,no-bloom --out ingest-write-phase.json]
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { planWrites, touched, type ContactStates, type IngestMessage } from '../core/ingest';
import { migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { AudienceWriter } from '../stores/audience-writer';
import { openEmbeddedClickHouse } from '../support/embedded-clickhouse';
import { benchArgs } from './cli-args';
import { loadAverage, writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '1' },
    messages: { type: 'string', default: '500' },
    variants: { type: 'string', default: 'base,no-bloom,no-distinct,no-lowcard,no-parallel-parse,compact-parts,no-state' },
    out: { type: 'string', default: 'ingest-write-phase.json' },
  },
});
const RUNS = Number(values.runs);
const WARMUP = Number(values.warmup);
const MESSAGES = Number(values.messages);
const PER_MESSAGE = 100;
const VARIANTS = (values.variants ?? '').split(',').filter(Boolean);

const SCHEMA: Record<string, string[]> = {
  'no-bloom': ['ALTER TABLE {t:audience} DROP INDEX idx_email', 'ALTER TABLE {t:audience} DROP INDEX idx_phone_mobile', 'ALTER TABLE {t:audience} DROP INDEX idx_client_tags'],
  'no-distinct': ['ALTER TABLE {t:audience} DROP COLUMN client_tags_distinct'],
  'no-lowcard': ['ALTER TABLE {t:audience} MODIFY COLUMN project_id String, MODIFY COLUMN country_code Nullable(String)'],
  'compact-parts': ['ALTER TABLE {t:audience} MODIFY SETTING min_bytes_for_wide_part = 1073741824', 'ALTER TABLE {t:ds_contacts} MODIFY SETTING min_bytes_for_wide_part = 1073741824'],
};
SCHEMA['bare-audience'] = [...(SCHEMA['no-bloom'] ?? []), ...(SCHEMA['no-distinct'] ?? []), ...(SCHEMA['no-lowcard'] ?? [])];
const SETTINGS: Record<string, Record<string, number>> = {
  'no-parallel-parse': { input_format_parallel_parsing: 0 },
};

/** CPU seconds of this process's threads so far: the JavaScript thread (tid = pid) and the others. */
function threadCpu(): { js: number; other: number } {
  const ticks = 100;
  let js = 0;
  let other = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const used = (Number(fields[11]) + Number(fields[12])) / ticks;
    if (Number(tid) === process.pid) js += used;
    else other += used;
  }
  return { js, other };
}

/** One run's messages as the gateway publishes bench:ingest's contacts (core/ingest validate: typed values). */
function runMessages(run: number): Array<{ seq: number; message: IngestMessage }> {
  const receivedAt = new Date().toISOString();
  return Array.from({ length: MESSAGES }, (_, m) => {
    const seq = run * MESSAGES + m + 1;
    return {
      seq,
      message: {
        kind: 'contacts', orgId: 'org-bench', projectId: 'project-bench', datasourceId: 'ds-bench', receivedAt, failed: 0,
        contacts: Array.from({ length: PER_MESSAGE }, (_, i) => {
          const n = (seq - 1) * PER_MESSAGE + i;
          return {
            userId: `user-${n}`,
            attributes: {
              _email: { type: 'string', value: `user${n}@example.com` }, _first_name: { type: 'string', value: 'Bench' },
              plan: { type: 'string', value: n % 3 === 0 ? 'gold' : 'free' }, visits: { type: 'number', value: n % 17 }, _client_tags: { type: 'array', value: ['bench'] },
            },
          };
        }),
      },
    };
  });
}

interface Timing { total: number; audience: number; dsContacts: number; usage: number; jsCpu: number; engineCpu: number; load: number; events: Record<string, number> }

/** ClickHouse's own counters (system.events) that say where an insert's engine time goes, in µs or counts. */
const COUNTERS = [
  'UserTimeMicroseconds', 'SystemTimeMicroseconds', 'MergeTreeDataWriterSortingBlocksMicroseconds', 'MergeTreeDataWriterMergingBlocksMicroseconds',
  'MergeTreeDataWriterSkipIndicesCalculationMicroseconds', 'MergeTreeDataWriterStatisticsCalculationMicroseconds', 'MergeTreeDataWriterProjectionsCalculationMicroseconds',
  'MergeTreeDataWriterBlocksAlreadySorted', 'MergeTreeDataWriterBlocks', 'InsertedRows', 'InsertedBytes', 'MergedRows', 'MergeTotalMilliseconds', 'ParallelParsingInputFormatMicroseconds',
  'DiskWriteElapsedMicroseconds', 'WriteBufferFromFileDescriptorWriteElapsedMicroseconds', 'FileSync', 'FileSyncElapsedMicroseconds', 'CreatedWriteBufferOrdinary',
  'CompressedReadBufferBlocks', 'SelectedRows', 'OSCPUVirtualTimeMicroseconds', 'RealTimeMicroseconds',
];

async function counters(ch: ClickHouse): Promise<Map<string, number>> {
  const result = await ch.client.query({ query: `SELECT event, value FROM system.events WHERE event IN {names:Array(String)}`, query_params: { names: COUNTERS }, format: 'JSONEachRow' });
  return new Map((await result.json<{ event: string; value: string }>()).map((r) => [r.event, Number(r.value)]));
}

/** The variant's ClickHouse: each insertRaw and client insert timed, with the variant's settings added. */
function timed(ch: ClickHouse, variant: string, walls: Map<string, number>): ClickHouse {
  const raw = ch.insertRaw;
  if (!raw) throw new Error('the embedded engine has no insertRaw');
  const extra = SETTINGS[variant] ?? {};
  const note = (table: string, started: number): void => { walls.set(table, (walls.get(table) ?? 0) + performance.now() - started); };
  let body = (b: Buffer): Buffer => b;
  if (variant === 'no-state') {
    // The ds_contacts rows' state column (6th) replaced by "" (column order: DS_CONTACT_COLUMNS).
    body = (b) => Buffer.from(b.toString('utf8').split('\n').filter(Boolean).map((line) => { const row = JSON.parse(line) as unknown[]; row[5] = ''; return JSON.stringify(row); }).join('\n'));
  }
  const client = new Proxy(ch.client, {
    get(target, prop, receiver) {
      if (prop !== 'insert') return Reflect.get(target, prop, receiver) as unknown;
      return async (params: Parameters<ClickHouse['client']['insert']>[0]) => {
        const started = performance.now();
        const result = await target.insert(params);
        note(String(params.table).replaceAll('`', '').split('.').at(-1) ?? '', started);
        return result;
      };
    },
  });
  return {
    ...ch,
    client,
    insertRaw: async (name, b, format, settings, columns) => {
      const sent = name === 'ds_contacts' ? body(b) : b;
      const started = performance.now();
      await raw(name, sent, format, { ...settings, ...(name === 'events' ? {} : extra) }, columns);
      note(name, started);
    },
  };
}

async function openVariant(dir: string, variant: string): Promise<ClickHouse> {
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: `wp_${variant.replaceAll('-', '_')}`, embeddedPath: dir });
  await migrate(ch, createLogger('warn'));
  for (const statement of SCHEMA[variant] ?? []) {
    await ch.client.command({ query: statement.replace(/\{t:(\w+)\}/g, (_, t: string) => ch.table(t)), clickhouse_settings: { mutations_sync: '2' } });
  }
  return ch;
}

async function oneRun(ch: ClickHouse, variant: string, run: number): Promise<Timing> {
  const walls = new Map<string, number>();
  const writer = new AudienceWriter(timed(ch, variant, walls));
  const states: ContactStates = new Map();
  const messages = runMessages(run);
  const loadStarted = performance.now();
  const needs = touched(messages);
  await writer.loadStates(states, needs.users);
  const load = performance.now() - loadStarted;
  const plan = planWrites({ messages, states, storedBefore: () => false });
  const eventsBefore = await counters(ch);
  const cpu = threadCpu();
  const started = performance.now();
  await writer.write(plan, states);
  const total = performance.now() - started;
  const after = threadCpu();
  const eventsAfter = await counters(ch);
  const per1000 = 1000 / (MESSAGES * PER_MESSAGE);
  return {
    total: total * per1000, audience: (walls.get('audience') ?? 0) * per1000, dsContacts: (walls.get('ds_contacts') ?? 0) * per1000, usage: (walls.get('ingest_usage') ?? 0) * per1000,
    jsCpu: (after.js - cpu.js) * 1000 * per1000, engineCpu: (after.other - cpu.other) * 1000 * per1000, load: load * per1000,
    events: Object.fromEntries([...eventsAfter].map(([k, v]) => [k, (v - (eventsBefore.get(k) ?? 0)) * (k.endsWith('Microseconds') ? per1000 / 1000 : k.endsWith('Milliseconds') ? per1000 : 1)])),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const round = (x: number): number => Number(x.toFixed(1));

async function main(): Promise<void> {
  const engine = await openEmbeddedClickHouse('wp_scratch', { migrated: false });
  const loads: string[] = [loadAverage()];
  try {
    const chs = new Map<string, ClickHouse>();
    for (const variant of VARIANTS) chs.set(variant, await openVariant(engine.dir, variant));
    const timings = new Map<string, Timing[]>();
    for (let run = 0; run < WARMUP + RUNS; run++) {
      // Interleaved (and the order turned each run), so a change of the machine's load falls on every variant alike.
      const order = run % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) {
        const t = await oneRun(chs.get(variant) as ClickHouse, variant, run);
        process.stderr.write(`  run ${run + 1}${run < WARMUP ? ' (warm-up)' : ''} ${variant.padEnd(18)} write ${t.total.toFixed(1)} ms per 1,000 (audience ${t.audience.toFixed(1)}, ds_contacts ${t.dsContacts.toFixed(1)}, usage ${t.usage.toFixed(1)}); CPU JS ${t.jsCpu.toFixed(1)}, engine ${t.engineCpu.toFixed(1)}; load phase ${t.load.toFixed(1)}\n`);
        if (run >= WARMUP) timings.set(variant, [...(timings.get(variant) ?? []), t]);
      }
      loads.push(loadAverage());
    }
    for (const ch of chs.values()) await ch.close();
    const rows = [...timings].map(([variant, ts]) => {
      const m = (k: Exclude<keyof Timing, 'events'>): number => round(median(ts.map((t) => t[k])));
      const engine = Object.fromEntries(COUNTERS.map((c) => [c, round(median(ts.map((t) => t.events[c] ?? 0)))]).filter(([, v]) => v !== 0));
      return { variant, writeMsPer1000: m('total'), audienceMs: m('audience'), dsContactsMs: m('dsContacts'), usageMs: m('usage'), jsCpuMs: m('jsCpu'), engineCpuMs: m('engineCpu'), loadPhaseMs: m('load'), runs: ts.map((t) => round(t.total)), engineCountersPer1000: engine };
    });
    const written = writeResult(values.out as string, {
      at: new Date().toISOString(), machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }, loads,
      conditions: `embedded chdb scratch, one database per variant, ${MESSAGES} messages × ${PER_MESSAGE} new contacts per writer run (bench:ingest's shape), ${RUNS} interleaved runs after ${WARMUP} warm-up; per 1,000 contacts: the write phase's wall, each insert's wall, CPU of the JS thread and of the other threads during the write; medians`,
      rows,
    });
    for (const r of rows) process.stdout.write(`${r.variant.padEnd(18)} write ${r.writeMsPer1000} ms (audience ${r.audienceMs}, ds_contacts ${r.dsContactsMs}, usage ${r.usageMs}); CPU JS ${r.jsCpuMs}, engine ${r.engineCpuMs}; load ${r.loadPhaseMs}\n`);
    process.stdout.write(`load ${loads.join(' | ')}\nwritten to ${written}\n`);
  } finally {
    await engine.close();
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
