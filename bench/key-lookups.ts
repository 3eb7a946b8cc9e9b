// What the ingest writer's lookups before a run cost as a scope's stored keys grow, for --ids keys
// per lookup, half of them stored and all new, against --sizes stored keys (random UUIDs, as
// clients send them) of one scope, on the product's migrated schema in an embedded chdb of its own:
//   --table event_keys   the deduplication lookup (AudienceWriter.storedEventKeys) of one datasource
//   --table ds_contacts  the contact states' load (AudienceWriter.loadStates) of one project, each
//                        contact's state a few attributes long
// Both tables are ordered by (scope, key), so random keys each touch their own granule: the
// lookup reads up to keys × 8,192 rows, until it reads the whole scope. Each lookup runs twice,
// interleaved: through the table alone (the writer before 582ded4), and as the writer runs now,
// the scope's key filter asked first (stores/key-filters.ts) and the table only for the keys it
// may hold; the filter's build from the table (wall, CPU, memory) is measured once per size.
// Medians of --rounds lookups, wall and process CPU.
// Printed and written to bench/results/key-lookups-<table>-<date>-<commit>.json.
// Usage: npm run bench:key-lookups [-- --table event_keys|ds_contacts --sizes 100000,1000000,5000000 --ids 1000 --rounds 7 --out <file>]
import { randomUUID } from 'node:crypto';
import { loadKeyHash, type ContactStates } from '../core/ingest';
import { createLogger } from '../infra/logger';
import { AudienceWriter } from '../stores/audience-writer';
import { CONTACT_KEYS, EVENT_KEYS, KeyFilterMemory, StoredKeys } from '../stores/key-filters';
import { openEmbeddedClickHouse } from '../support/embedded-clickhouse';
import { benchArgs } from './cli-args';
import { benchCommit, loadAverage, writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    table: { type: 'string', default: 'event_keys' },
    sizes: { type: 'string', default: '100000,1000000,5000000' },
    ids: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '7' },
    out: { type: 'string' },
  },
});
const say = (line: string): void => { process.stderr.write(`[bench:key-lookups] ${line}\n`); };
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const SCOPE = 'bench-scope';
const DATABASE = 'bench_key_lookups';
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

/** How one table is filled and looked up: the answer is the number of keys found stored. */
interface Subject {
  readonly fill: (table: string) => string;
  readonly lookup: (writer: AudienceWriter, keys: readonly string[]) => Promise<number>;
}

const SUBJECTS: Record<string, Subject> = {
  event_keys: {
    fill: (table) => `INSERT INTO ${table} SELECT {scope:String}, toString(generateUUIDv4()), number FROM numbers({n:UInt64})`,
    lookup: async (writer, keys) => (await writer.storedEventKeys(keys.map((eventId) => ({ datasourceId: SCOPE, eventId })))).size,
  },
  ds_contacts: {
    fill: (table) => `INSERT INTO ${table} SELECT {scope:String}, toString(generateUUIDv4()), 'ds', number, 0,
      concat('{"attributes":{"_email":{"value":"', toString(number), '@example.com","version":1},"_first_name":{"value":"Name ', toString(number % 977), '","version":1},"score":{"value":', toString(number % 100), ',"version":1}},"createdAt":"2026-11-27T00:00:00.000Z","updatedAt":"2026-11-27T00:00:00.000Z","version":1}'),
      now64(3), now64(3) FROM numbers({n:UInt64})`,
    lookup: async (writer, keys) => {
      const states: ContactStates = new Map();
      await writer.loadStates(states, keys.map((userId) => ({ projectId: SCOPE, userId })));
      return [...states.values()].filter((s) => s.size > 0).length;
    },
  },
};

async function main(): Promise<void> {
  const table = values.table;
  const subject = SUBJECTS[table];
  if (!subject) throw new Error(`--table: event_keys or ds_contacts, not ${table}`);
  const source = table === 'event_keys' ? EVENT_KEYS : CONTACT_KEYS;
  const sizes = values.sizes.split(',').map(Number).sort((a, b) => a - b);
  const idCount = Number(values.ids);
  const rounds = Number(values.rounds);
  if (sizes.some((n) => !Number.isInteger(n) || n < idCount) || !Number.isInteger(idCount) || idCount < 2) throw new Error('--sizes: integers of at least --ids; --ids: an integer ≥ 2');
  await loadKeyHash();
  const engine = await openEmbeddedClickHouse(DATABASE);
  const tableName = engine.ch.table(table);
  const plain = new AudienceWriter(engine.ch);
  const rows: Array<Record<string, number>> = [];
  try {
    let stored = 0;
    for (const size of sizes) {
      say(`filling ${table} to ${size} keys; load ${loadAverage()}`);
      await engine.ch.client.command({ query: subject.fill(tableName), query_params: { scope: SCOPE, n: size - stored } });
      await engine.ch.client.command({ query: `OPTIMIZE TABLE ${tableName} FINAL` });
      stored = size;
      const granules = Number((await (await engine.ch.client.query({ query: `SELECT sum(marks) AS m FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active`, query_params: { db: DATABASE, t: table }, format: 'JSONEachRow' })).json<{ m: string }>())[0]?.m ?? 0);
      say(`building the filter of ${size} keys; load ${loadAverage()}`);
      const keys = new StoredKeys(engine.ch, source, new KeyFilterMemory(FILTER_BUDGET_BYTES), createLogger('warn'));
      const filtered = new AudienceWriter(engine.ch, table === 'event_keys' ? { events: keys } : { contacts: keys });
      const build = await measured(async () => {
        await subject.lookup(filtered, [randomUUID()]);
        await keys.settled(SCOPE);
      });
      if (keys.status(SCOPE) !== 'ready') throw new Error(`the filter of ${size} keys did not become ready (${keys.status(SCOPE)})`);
      const times = { tableHalf: [] as number[], tableHalfCpu: [] as number[], filterHalf: [] as number[], filterHalfCpu: [] as number[], tableNew: [] as number[], tableNewCpu: [] as number[], filterNew: [] as number[], filterNewCpu: [] as number[] };
      for (let round = 0; round < rounds; round++) {
        const known = (await (await engine.ch.client.query({ query: `SELECT ${source.key} AS k FROM ${tableName} ORDER BY rand() LIMIT {n:UInt32}`, query_params: { n: Math.floor(idCount / 2) }, format: 'JSONEachRow' })).json<{ k: string }>()).map((r) => r.k);
        const half = [...known, ...Array.from({ length: idCount - known.length }, () => randomUUID())];
        const fresh = Array.from({ length: idCount }, () => randomUUID());
        const runs: Array<[keyof typeof times, keyof typeof times, () => Promise<number>, number]> = [
          ['tableHalf', 'tableHalfCpu', () => subject.lookup(plain, half), known.length],
          ['filterHalf', 'filterHalfCpu', () => subject.lookup(filtered, half), known.length],
          ['tableNew', 'tableNewCpu', () => subject.lookup(plain, fresh), 0],
          ['filterNew', 'filterNewCpu', () => subject.lookup(filtered, fresh), 0],
        ];
        // Alternate which goes first, so neither always meets a warmer cache.
        for (const [wall, cpu, run, expected] of round % 2 === 0 ? runs : [...runs].reverse()) {
          const m = await measured(run);
          if (m.value !== expected) throw new Error(`${wall}: found ${m.value} stored keys, expected ${expected}`);
          times[wall].push(m.wall);
          times[cpu].push(m.cpu);
        }
      }
      const row = {
        storedKeys: size, granules,
        tableHalfMs: ms(median(times.tableHalf)), tableHalfCpuMs: ms(median(times.tableHalfCpu)),
        filterHalfMs: ms(median(times.filterHalf)), filterHalfCpuMs: ms(median(times.filterHalfCpu)),
        tableNewMs: ms(median(times.tableNew)), tableNewCpuMs: ms(median(times.tableNewCpu)),
        filterNewMs: ms(median(times.filterNew)), filterNewCpuMs: ms(median(times.filterNewCpu)),
        filterBuildMs: ms(build.wall), filterBuildCpuMs: ms(build.cpu), filterBytes: keys.bytes(),
      };
      rows.push(row);
      process.stdout.write(`${table}: ${size} stored keys (${granules} granules), ${idCount} keys per lookup, medians of ${rounds}:\n`
        + `  half stored: table ${row.tableHalfMs} ms (CPU ${row.tableHalfCpuMs}), filter first ${row.filterHalfMs} ms (CPU ${row.filterHalfCpuMs})\n`
        + `  all new:     table ${row.tableNewMs} ms (CPU ${row.tableNewCpuMs}), filter first ${row.filterNewMs} ms (CPU ${row.filterNewCpuMs})\n`
        + `  filter built in ${row.filterBuildMs} ms (process CPU ${row.filterBuildCpuMs} ms), ${(row.filterBytes / 1024 / 1024).toFixed(1)} MiB\n`);
    }
  } finally {
    await engine.close();
  }
  const commit = benchCommit();
  const out = values.out ?? `key-lookups-${table}-${new Date().toISOString().slice(0, 10)}-${commit}.json`;
  say(`written to ${writeResult(out, { at: new Date().toISOString(), commit, load: loadAverage(), table, keysPerLookup: idCount, rounds, rows })}`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
