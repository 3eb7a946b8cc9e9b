// What the history writer's insert of accepted messages costs the embedded ClickHouse (chdb, in
// this process), per row (docs/acceptance.md, "chdb handed bytes"): rows in the shape sms.accepted carries,
// inserted into sms_messages_intake (migration 0011) in inserts of --rows-per-insert, ways:
//   raw                 ClickHouse.insertRaw: the bytes handed to chdb's parser (the product);
//   client              the client's INSERT with a body (a server's, or another process's chdb);
//   client-no-optimize  the same with optimize_on_insert = 0;
//   client-no-parallel  the same with input_format_parallel_parsing = 0;
// each through the view into sms_messages (its projection and sms_versions too) and, with
// --null-only, into the Null table alone (the view dropped: parsing only). Process CPU per row
// (every thread of this process: chdb's included), medians of RUNS runs, each on a fresh engine.
// Printed and written to bench/results/chdb-insert.json.
// Usage: node --import tsx bench/chdb-insert.ts [--runs 3 --inserts 40 --rows-per-insert 10000 --null-only --out chdb-insert.json]
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { Readable } from 'node:stream';
import { openEmbeddedClickHouse } from '../support/embedded-clickhouse';
import { makeMessage } from '../support/message-rows';
import { benchArgs } from './cli-args';
import { writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '3' },
    inserts: { type: 'string', default: '40' },
    'rows-per-insert': { type: 'string', default: '10000' },
    'null-only': { type: 'boolean', default: false },
    out: { type: 'string', default: 'chdb-insert.json' },
  },
});
const INSERTS = Number(values.inserts);
const ROWS = Number(values['rows-per-insert']);

const WAYS = {
  raw: undefined,
  client: { input_format_skip_unknown_fields: 1 },
  'client-no-optimize': { input_format_skip_unknown_fields: 1, optimize_on_insert: 0 },
  'client-no-parallel': { input_format_skip_unknown_fields: 1, input_format_parallel_parsing: 0 },
} as const;
type Way = keyof typeof WAYS;

/** Bodies as the history writer hands them over: messages' JSON, a line each, 100 per request batch. */
function bodies(): Buffer[] {
  return Array.from({ length: INSERTS }, () => {
    const lines: string[] = [];
    for (let j = 0; j < ROWS / 100; j++) {
      const batch = randomUUID().slice(0, 34);
      for (let i = 0; i < 100; i++) lines.push(JSON.stringify(makeMessage({ id: `${batch}${i.toString(16).padStart(2, '0')}`, orgId: 'org-bench', text: `Bulk benchmark item ${i}` })));
    }
    return Buffer.from(lines.join('\n'));
  });
}

async function cpuPerRow(way: Way, nullOnly: boolean): Promise<number> {
  const engine = await openEmbeddedClickHouse('bench');
  try {
    const { ch } = engine;
    if (nullOnly) await ch.client.command({ query: `DROP VIEW ${ch.table('sms_messages_intake_mv')}` });
    const data = bodies();
    const before = process.cpuUsage();
    for (const body of data) {
      const settings = WAYS[way];
      if (settings === undefined) {
        if (!ch.insertRaw) throw new Error('the embedded engine has no insertRaw');
        await ch.insertRaw('sms_messages_intake', body, 'JSONEachRow', { input_format_skip_unknown_fields: 1 });
      } else {
        const result = await ch.client.exec({ query: `INSERT INTO ${ch.table('sms_messages_intake')} FORMAT JSONEachRow`, values: Readable.from([body], { objectMode: false }), clickhouse_settings: settings });
        for await (const chunk of result.stream) void chunk;
      }
    }
    const used = process.cpuUsage(before);
    const rs = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('sms_messages')}`, format: 'JSONEachRow' });
    const stored = Number((await rs.json<{ n: string }>())[0]?.n);
    if (stored !== (nullOnly ? 0 : INSERTS * ROWS)) throw new Error(`${way}: ${stored} rows stored, expected ${nullOnly ? 0 : INSERTS * ROWS}`);
    return (used.user + used.system) / (INSERTS * ROWS);
  } finally {
    await engine.close();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const targets = values['null-only'] ? [false, true] : [false];
  const rows: Array<{ way: Way; target: string; cpuUsPerRow: number; runs: number[] }> = [];
  for (const nullOnly of targets) {
    const runs = new Map<Way, number[]>();
    for (let run = 1; run <= Number(values.runs); run++) {
      // Interleaved, so a change of the machine's load falls on every way alike.
      for (const way of Object.keys(WAYS) as Way[]) {
        const us = await cpuPerRow(way, nullOnly);
        runs.set(way, [...(runs.get(way) ?? []), us]);
        process.stderr.write(`  run ${run} ${way}${nullOnly ? ' (Null table only)' : ''}: ${us.toFixed(2)} µs per row\n`);
      }
    }
    for (const [way, us] of runs) rows.push({ way, target: nullOnly ? 'sms_messages_intake only (view dropped)' : 'through the view into sms_messages', cpuUsPerRow: Number(median(us).toFixed(2)), runs: us.map((u) => Number(u.toFixed(2))) });
  }
  const written = writeResult(values.out, {
    at: new Date().toISOString(), machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    conditions: `${INSERTS} inserts of ${ROWS} rows per run, a fresh embedded engine per run, process CPU (all threads) per row; ${values.runs} interleaved runs, medians`, rows,
  });
  for (const r of rows) process.stdout.write(`${r.way.padEnd(20)} ${r.cpuUsPerRow.toFixed(2).padStart(6)} µs per row  ${r.target}\n`);
  process.stdout.write(`written to ${written}\n`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
