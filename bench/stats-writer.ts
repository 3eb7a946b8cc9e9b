// What the statistics rollup (migration 0015) costs the history writer: the view
// sms_stats_touched_mv runs on every insert into sms_messages. Inserts of generated messages
// (support/message-rows.ts, the list benchmark's mix, ~1.3 rows per message) through
// MessageHistory.insert into a fresh embedded database, in alternating rounds with the view and
// without it (dropped, then created again from the migration's own statement), rows per second
// per round; medians printed with the machine's load and written to bench/results/stats-writer.json.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { loadAverage as load, percentile, writeResult } from './support/results';
import { loadMigrations, migrate, openClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { MessageHistory } from '../stores/message-history';
import { generateMessageBatches } from '../support/message-rows';

const { values } = benchArgs({ options: { rounds: { type: 'string', default: '6' }, batch: { type: 'string', default: '20000' }, batches: { type: 'string', default: '5' } } });

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-stats-writer-'));
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'writer', embeddedPath: dir });
  try {
    await migrate(ch, createLogger('warn'));
    const view = loadMigrations().find((m) => m.version === 15)?.statements.find((st) => st.includes('MATERIALIZED VIEW'))?.replaceAll('{db}', `\`${ch.database}\``);
    if (!view) throw new Error('migration 0015 has no view');
    const history = new MessageHistory(ch);
    const batch = Number(values.batch);
    const perRound = Number(values.batches);
    const rounds = Number(values.rounds);
    const source = generateMessageBatches({ messages: batch * perRound * rounds * 2 + batch, batchSize: batch, from: Date.now() - 30 * 86_400_000, to: Date.now(), seed: 11 });
    const rates = { withView: [] as number[], withoutView: [] as number[] };
    const loadAtStart = load();
    for (let round = 0; round < rounds * 2; round++) {
      const withView = round % 2 === 0;
      if (withView) await ch.client.command({ query: view });
      else await ch.client.command({ query: `DROP VIEW IF EXISTS ${ch.table('sms_stats_touched_mv')}` });
      let rows = 0;
      const started = performance.now();
      for (let i = 0; i < perRound; i++) {
        const next = source.next();
        if (next.done) break;
        await history.insert(next.value.rows);
        rows += next.value.rows.length;
      }
      (withView ? rates.withView : rates.withoutView).push(rows / ((performance.now() - started) / 1000));
      process.stderr.write(`[bench:stats-writer] round ${round + 1}: ${withView ? 'with' : 'without'} view, ${rows} rows; load ${load()}\n`);
    }
    const results = {
      at: new Date().toISOString(), loadAtStart, loadAtEnd: load(), rowsPerInsert: batch,
      rowsPerSecond: { withView: { p50: percentile(rates.withView, 50), all: rates.withView }, withoutView: { p50: percentile(rates.withoutView, 50), all: rates.withoutView } },
      costOfView: 1 - percentile(rates.withView, 50) / percentile(rates.withoutView, 50),
    };
    const out = writeResult('stats-writer.json', results);
    process.stdout.write(`history inserts (${batch} rows each): with the touched view p50 ${results.rowsPerSecond.withView.p50.toFixed(0)} rows/s, without ${results.rowsPerSecond.withoutView.p50.toFixed(0)} rows/s (cost ${(results.costOfView * 100).toFixed(1)} %); load ${loadAtStart} at start, ${results.loadAtEnd} at end; written to ${out}\n`);
  } finally {
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
