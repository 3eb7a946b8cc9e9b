// Start-up benchmark:
//  - bootstrap: `node scripts/bootstrap.mjs` in a fresh clone (no node_modules, no .tools);
//    with --cold, also with empty npm and Go caches (what a fresh machine pays);
//  - warm start: `npm start`-equivalent (every role, embedded engines) on an empty data dir and
//    again on the same data, to /health 200; median of --runs;
//  - idle memory: RSS of the product process plus nats-server and the Temporal dev server,
//    10 s after the stack is healthy;
//  - `--entry dist` (default: the compiled JavaScript `npm start` runs), `tsx` (the TypeScript
//    sources through tsx, as `npm run dev`), or `both`, interleaved run by run.
// Figures printed and written to bench/results/startup.json.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { sleep } from '../infra/supervisor';
import { freePort } from '../infra/local-engines';
import { roleProcessName, roleProcessPids } from './support/cpu';
import { writeResult } from './support/results';
import { ensureBuilt } from '../infra/paths';

const { values } = benchArgs({ options: { runs: { type: 'string', default: '3' }, cold: { type: 'boolean', default: false }, 'skip-bootstrap': { type: 'boolean', default: false }, entry: { type: 'string', default: 'dist' }, out: { type: 'string', default: 'startup.json' } } });
type Entry = 'dist' | 'tsx';
const ENTRIES: readonly Entry[] = values.entry === 'both' ? ['dist', 'tsx'] : values.entry === 'tsx' ? ['tsx'] : ['dist'];
const ROOT = join(__dirname, '..');
const say = (line: string): void => { process.stderr.write(`[bench:startup] ${line}\n`); };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function rssKiB(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return Number(line?.replace(/\D/g, '') ?? 0);
  } catch {
    return 0;
  }
}

/** A pid file of $DATA_DIR/run: JSON with a pid (infra/supervisor.ts), or a bare pid (earlier releases). */
function pidOf(text: string): number {
  try {
    const parsed = JSON.parse(text) as { pid?: unknown } | number;
    return typeof parsed === 'number' ? parsed : Number((parsed as { pid?: unknown }).pid ?? 0);
  } catch {
    return Number(text);
  }
}

async function startOnce(dataDir: string, entry: Entry): Promise<{ seconds: number; rssMiB: Record<string, number>; stop(): Promise<void> }> {
  const ports = { HTTP_PORT: await freePort(), NATS_PORT: await freePort(), TEMPORAL_PORT: await freePort(), TEMPORAL_UI_PORT: await freePort(), SIMULATOR_PORT: await freePort(), SMPP_PORT: await freePort() };
  const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
  const started = performance.now();
  const args = entry === 'dist' ? [ensureBuilt()] : ['--import', 'tsx', join(ROOT, 'main.ts')];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: 'ignore' });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the product exited with ${child.exitCode}`);
    if (await fetch(`http://127.0.0.1:${ports.HTTP_PORT}/health`).then((r) => r.status === 200, () => false)) break;
    await sleep(100);
  }
  const seconds = (performance.now() - started) / 1000;
  await sleep(10_000);
  const runDir = join(dataDir, 'run');
  const rssMiB: Record<string, number> = { product: rssKiB(child.pid ?? 0) / 1024 };
  // The role processes of PROCESS_LAYOUT=split (README, "Processes of `npm start`"), by their roles.
  for (const pid of roleProcessPids(child.pid ?? 0)) rssMiB[`product (${roleProcessName(pid)})`] = rssKiB(pid) / 1024;
  for (const file of existsSync(runDir) ? readdirSync(runDir).filter((f) => f.endsWith('.pid') && !f.startsWith('role-')) : []) rssMiB[file.replace(/\.pid$/, '')] = rssKiB(pidOf(readFileSync(join(runDir, file), 'utf8'))) / 1024;
  return {
    seconds,
    rssMiB,
    stop: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGINT');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    at: new Date().toISOString(),
  };
  if (!values['skip-bootstrap']) {
    const clone = mkdtempSync(join(tmpdir(), 'sms-bootstrap-'));
    execFileSync('git', ['clone', '-q', ROOT, clone]);
    const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true' };
    if (values.cold) Object.assign(env, { npm_config_cache: join(clone, '.cold-npm'), GOCACHE: join(clone, '.cold-gocache'), GOMODCACHE: join(clone, '.cold-gomod') });
    say(`bootstrap in a fresh clone${values.cold ? ' with empty npm and Go caches' : ' (npm and Go caches of this machine)'}`);
    const started = performance.now();
    execFileSync(process.execPath, ['scripts/bootstrap.mjs'], { cwd: clone, env, stdio: ['ignore', 'ignore', 'inherit'] });
    results['bootstrap'] = { seconds: (performance.now() - started) / 1000, cold: values.cold };
    say(`bootstrap: ${(results['bootstrap'] as { seconds: number }).seconds.toFixed(0)} s`);
  }
  const byEntry: Record<string, unknown> = {};
  const runs: Record<Entry, { first: number[]; again: number[]; rss: Record<string, number> }> = { dist: { first: [], again: [], rss: {} }, tsx: { first: [], again: [], rss: {} } };
  for (let i = 0; i < Number(values.runs); i++) {
    for (const entry of ENTRIES) {
      const dataDir = mkdtempSync(join(tmpdir(), 'sms-startup-'));
      const a = await startOnce(dataDir, entry);
      runs[entry].rss = a.rssMiB;
      await a.stop();
      const b = await startOnce(dataDir, entry);
      await b.stop();
      runs[entry].first.push(a.seconds);
      runs[entry].again.push(b.seconds);
      say(`run ${i + 1} (${entry}): empty data dir ${a.seconds.toFixed(1)} s, existing data ${b.seconds.toFixed(1)} s to /health 200; idle RSS ${Object.entries(a.rssMiB).map(([k, v]) => `${k} ${v.toFixed(0)} MiB`).join(', ')}`);
    }
  }
  const lines: string[] = [];
  for (const entry of ENTRIES) {
    const { first, again, rss } = runs[entry];
    const totalRss = Object.values(rss).reduce((s, v) => s + v, 0);
    byEntry[entry] = { warmStart: { emptyDataDirSeconds: median(first), existingDataSeconds: median(again), runs: first.length }, idleRssMiB: { ...rss, total: totalRss } };
    lines.push(`${entry}: warm start to a healthy stack ${median(first).toFixed(1)} s (empty data dir), ${median(again).toFixed(1)} s (existing data); idle RSS ${totalRss.toFixed(0)} MiB in all`);
  }
  results['entries'] = byEntry;
  results['loadAverage'] = { atEnd: loadavg() };
  const written = writeResult(String(values.out), results);
  process.stdout.write(`\n${lines.join('\n')}\nwritten to ${written}\n`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
