// What the ingest writer's deduplication lookup costs as a datasource's stored event ids grow:
// AudienceWriter.storedEventKeys (the statement the writer runs once per run and datasource) for
// --ids ids (half of them stored, half new), against event_keys holding each of --sizes ids of
// one datasource (random UUIDs, as clients send them), on the product's migrated schema in an
// embedded chdb of its own. event_keys is ordered by (datasource_id, event_id), so a run's ids
// each touch their own granule: the lookup reads up to ids × 8,192 rows, until it reads the whole
// datasource. Medians of --rounds lookups per size, wall and process CPU.
// Beside it, what the writer runs now: StoredEventIds (stores/stored-event-ids.ts), the
// datasource's filter of stored ids asked first and the table only for the ids it may hold; its
// build from the table (wall, CPU, memory) once per size, then the same lookups interleaved with
// the table's, for ids half stored and for ids all new.
// Printed and written to bench/results/event-keys-lookup-<date>-<commit>.json.
// Usage: npm run bench:event-keys [-- --sizes 100000,1000000,5000000 --ids 1000 --rounds 7 --out <file>]
import { randomUUID } from 'node:crypto';
import { openEmbeddedClickHouse } from '../support/embedded-clickhouse';
import { loadIdHash } from '../core/ingest';
import { createLogger } from '../infra/logger';
import { AudienceWriter } from '../stores/audience-writer';
import { StoredEventIds, type EventKey } from '../stores/stored-event-ids';
import { benchArgs } from './cli-args';
import { benchCommit, loadAverage, writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    sizes: { type: 'string', default: '100000,1000000,5000000' },
    ids: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '7' },
    out: { type: 'string' },
  },
});
const say = (line: string): void => { process.stderr.write(`[bench:event-keys] ${line}\n`); };
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const DATASOURCE = 'ds-bench';
const DATABASE = 'bench_event_keys';
const FILTER_BUDGET_BYTES = 256 * 1024 * 1024;

/** Wall and process CPU of one call, in ms. */
async function measured<T>(fn: () => Promise<T>): Promise<{ wall: number; cpu: number; value: T }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000, value };
}
const ms = (x: number): number => Number(x.toFixed(1));

async function main(): Promise<void> {
  const sizes = values.sizes.split(',').map(Number).sort((a, b) => a - b);
  const idCount = Number(values.ids);
  const rounds = Number(values.rounds);
  if (sizes.some((n) => !Number.isInteger(n) || n < idCount) || !Number.isInteger(idCount) || idCount < 2) throw new Error('--sizes: integers of at least --ids; --ids: an integer ≥ 2');
  const engine = await openEmbeddedClickHouse(DATABASE);
  const writer = new AudienceWriter(engine.ch);
  const table = engine.ch.table('event_keys');
  const rows: Array<Record<string, number>> = [];
  await loadIdHash();
  try {
    let stored = 0;
    for (const size of sizes) {
      say(`filling event_keys to ${size} ids; load ${loadAverage()}`);
      await engine.ch.client.command({ query: `INSERT INTO ${table} SELECT {ds:String}, toString(generateUUIDv4()), number FROM numbers({n:UInt64})`, query_params: { ds: DATASOURCE, n: size - stored } });
      await engine.ch.client.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
      stored = size;
      const granules = Number((await (await engine.ch.client.query({ query: `SELECT sum(marks) AS m FROM system.parts WHERE database = {db:String} AND table = 'event_keys' AND active`, query_params: { db: DATABASE }, format: 'JSONEachRow' })).json<{ m: string }>())[0]?.m ?? 0);
      say(`building the filter of ${size} ids; load ${loadAverage()}`);
      const filtered = new StoredEventIds(engine.ch, writer, createLogger('warn'), { budgetBytes: FILTER_BUDGET_BYTES });
      const build = await measured(async () => {
        await filtered.stored([{ datasourceId: DATASOURCE, eventId: randomUUID() }]);
        await filtered.settled(DATASOURCE);
      });
      if (filtered.status(DATASOURCE) !== 'ready') throw new Error(`the filter of ${size} ids did not become ready (${filtered.status(DATASOURCE)})`);
      const filterBytes = (filtered as unknown as { usedBytes(): number }).usedBytes();
      const times = { tableHalf: [] as number[], tableHalfCpu: [] as number[], filterHalf: [] as number[], filterHalfCpu: [] as number[], tableNew: [] as number[], tableNewCpu: [] as number[], filterNew: [] as number[], filterNewCpu: [] as number[] };
      for (let round = 0; round < rounds; round++) {
        const known = (await (await engine.ch.client.query({ query: `SELECT event_id FROM ${table} ORDER BY rand() LIMIT {n:UInt32}`, query_params: { n: Math.floor(idCount / 2) }, format: 'JSONEachRow' })).json<{ event_id: string }>()).map((r) => r.event_id);
        const asKeys = (ids: readonly string[]): EventKey[] => ids.map((eventId) => ({ datasourceId: DATASOURCE, eventId }));
        const half = asKeys([...known, ...Array.from({ length: idCount - known.length }, () => randomUUID())]);
        const fresh = asKeys(Array.from({ length: idCount }, () => randomUUID()));
        const runs: Array<[keyof typeof times, keyof typeof times, () => Promise<Set<string>>, number]> = [
          ['tableHalf', 'tableHalfCpu', () => writer.storedEventKeys(half), known.length],
          ['filterHalf', 'filterHalfCpu', () => filtered.stored(half), known.length],
          ['tableNew', 'tableNewCpu', () => writer.storedEventKeys(fresh), 0],
          ['filterNew', 'filterNewCpu', () => filtered.stored(fresh), 0],
        ];
        // Alternate which goes first, so neither always meets a warmer cache.
        for (const [wall, cpu, run, expected] of round % 2 === 0 ? runs : [...runs].reverse()) {
          const m = await measured(run);
          if (m.value.size !== expected) throw new Error(`${wall}: found ${m.value.size} stored ids, expected ${expected}`);
          times[wall].push(m.wall);
          times[cpu].push(m.cpu);
        }
      }
      const row = {
        storedIds: size, granules,
        tableHalfMs: ms(median(times.tableHalf)), tableHalfCpuMs: ms(median(times.tableHalfCpu)),
        filterHalfMs: ms(median(times.filterHalf)), filterHalfCpuMs: ms(median(times.filterHalfCpu)),
        tableNewMs: ms(median(times.tableNew)), tableNewCpuMs: ms(median(times.tableNewCpu)),
        filterNewMs: ms(median(times.filterNew)), filterNewCpuMs: ms(median(times.filterNewCpu)),
        filterBuildMs: ms(build.wall), filterBuildCpuMs: ms(build.cpu), filterBytes,
      };
      rows.push(row);
      process.stdout.write(`${size} stored ids (${granules} granules), ${idCount} ids per lookup, medians of ${rounds}:\n`
        + `  half stored: event_keys ${row.tableHalfMs} ms (CPU ${row.tableHalfCpuMs}), filter first ${row.filterHalfMs} ms (CPU ${row.filterHalfCpuMs})\n`
        + `  all new:     event_keys ${row.tableNewMs} ms (CPU ${row.tableNewCpuMs}), filter first ${row.filterNewMs} ms (CPU ${row.filterNewCpuMs})\n`
        + `  filter built in ${row.filterBuildMs} ms (process CPU ${row.filterBuildCpuMs} ms), ${(filterBytes / 1024 / 1024).toFixed(1)} MiB\n`);
    }
  } finally {
    await engine.close();
  }
  const commit = benchCommit();
  const out = values.out ?? `event-keys-lookup-${new Date().toISOString().slice(0, 10)}-${commit}.json`;
  say(`written to ${writeResult(out, { at: new Date().toISOString(), commit, load: loadAverage(), idsPerLookup: idCount, rounds, rows })}`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
