// What the ingest writer's deduplication lookup costs as a datasource's stored event ids grow:
// AudienceWriter.storedEventKeys (the statement the writer runs once per run and datasource) for
// --ids ids (half of them stored, half new), against event_keys holding each of --sizes ids of
// one datasource (random UUIDs, as clients send them), on the product's migrated schema in an
// embedded chdb of its own. event_keys is ordered by (datasource_id, event_id), so a run's ids
// each touch their own granule: the lookup reads up to ids × 8,192 rows, until it reads the whole
// datasource. Medians of --rounds lookups per size, wall and process CPU.
// Printed and written to bench/results/event-keys-lookup-<date>-<commit>.json.
// Usage: npm run bench:event-keys [-- --sizes 100000,1000000,5000000 --ids 1000 --rounds 7 --out <file>]
import { randomUUID } from 'node:crypto';
import { openEmbeddedClickHouse } from '../support/embedded-clickhouse';
import { AudienceWriter } from '../stores/audience-writer';
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

async function main(): Promise<void> {
  const sizes = values.sizes.split(',').map(Number).sort((a, b) => a - b);
  const idCount = Number(values.ids);
  const rounds = Number(values.rounds);
  if (sizes.some((n) => !Number.isInteger(n) || n < idCount) || !Number.isInteger(idCount) || idCount < 2) throw new Error('--sizes: integers of at least --ids; --ids: an integer ≥ 2');
  const engine = await openEmbeddedClickHouse(DATABASE);
  const writer = new AudienceWriter(engine.ch);
  const table = engine.ch.table('event_keys');
  const rows: Array<{ storedIds: number; lookupMs: number; cpuMs: number; granules: number; found: number }> = [];
  try {
    let stored = 0;
    for (const size of sizes) {
      say(`filling event_keys to ${size} ids; load ${loadAverage()}`);
      await engine.ch.client.command({ query: `INSERT INTO ${table} SELECT {ds:String}, toString(generateUUIDv4()), number FROM numbers({n:UInt64})`, query_params: { ds: DATASOURCE, n: size - stored } });
      await engine.ch.client.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
      stored = size;
      const granules = Number((await (await engine.ch.client.query({ query: `SELECT sum(marks) AS m FROM system.parts WHERE database = {db:String} AND table = 'event_keys' AND active`, query_params: { db: DATABASE }, format: 'JSONEachRow' })).json<{ m: string }>())[0]?.m ?? 0);
      const walls: number[] = [];
      const cpus: number[] = [];
      let found = 0;
      for (let round = 0; round < rounds; round++) {
        const known = (await (await engine.ch.client.query({ query: `SELECT event_id FROM ${table} ORDER BY rand() LIMIT {n:UInt32}`, query_params: { n: Math.floor(idCount / 2) }, format: 'JSONEachRow' })).json<{ event_id: string }>()).map((r) => r.event_id);
        const keys = [...known, ...Array.from({ length: idCount - known.length }, () => randomUUID())].map((eventId) => ({ datasourceId: DATASOURCE, eventId }));
        const cpu = process.cpuUsage();
        const started = performance.now();
        found = (await writer.storedEventKeys(keys)).size;
        walls.push(performance.now() - started);
        const used = process.cpuUsage(cpu);
        cpus.push((used.user + used.system) / 1000);
        if (found !== known.length) throw new Error(`lookup found ${found} of the ${known.length} stored ids it was given`);
      }
      const row = { storedIds: size, lookupMs: Number(median(walls).toFixed(1)), cpuMs: Number(median(cpus).toFixed(1)), granules, found };
      rows.push(row);
      process.stdout.write(`${size} stored ids (${granules} granules): ${idCount} ids looked up in ${row.lookupMs} ms (process CPU ${row.cpuMs} ms), median of ${rounds}\n`);
    }
  } finally {
    await engine.close();
  }
  const commit = benchCommit();
  const out = values.out ?? `event-keys-lookup-${new Date().toISOString().slice(0, 10)}-${commit}.json`;
  say(`written to ${writeResult(out, { at: new Date().toISOString(), commit, load: loadAverage(), idsPerLookup: idCount, rounds, rows })}`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
