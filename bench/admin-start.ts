// Admin CLI start-up benchmark: `admin --help` to exit, compiled with the compile cache (as
// `npm run admin` runs it), compiled without the cache, and through tsx; interleaved run by run,
// CPU (user + system, of the process and its children) and wall time per run, medians of --runs.
// The first round warms the compile cache and the file cache and is not counted.
// Figures printed and written to bench/results/admin-start.json (or --out <file>).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { writeResult } from './support/results';
import { ensureBuilt } from '../infra/paths';

const { values } = benchArgs({ options: { runs: { type: 'string', default: '7' }, out: { type: 'string', default: 'admin-start.json' } } });
const ROOT = join(__dirname, '..');
const say = (line: string): void => { process.stderr.write(`[bench:admin-start] ${line}\n`); };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

interface Variant { readonly name: string; readonly args: readonly string[]; readonly env: NodeJS.ProcessEnv }
const { NODE_COMPILE_CACHE: _ignored, ...baseEnv } = process.env;
const VARIANTS: readonly Variant[] = [
  { name: 'compiled, compile cache', args: ['dist/cli/admin.js', '--help'], env: { ...baseEnv, NODE_COMPILE_CACHE: join(ROOT, '.tools', 'compile-cache') } },
  { name: 'compiled, no cache', args: ['dist/cli/admin.js', '--help'], env: baseEnv },
  { name: 'tsx', args: ['--import', 'tsx', 'cli/admin.ts', '--help'], env: baseEnv },
];

/** One run under /usr/bin/time: CPU seconds (user + system, children included) and wall seconds. */
function runOnce(variant: Variant, timing: string): { cpuSeconds: number; wallSeconds: number } {
  const result = spawnSync('/usr/bin/time', ['-o', timing, '-f', '%U %S %e', process.execPath, ...variant.args], { cwd: ROOT, env: variant.env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${variant.name}: exit ${String(result.status)}: ${result.stderr}`);
  const [user, system, wall] = readFileSync(timing, 'utf8').trim().split(/\s+/).slice(-3).map(Number) as [number, number, number];
  return { cpuSeconds: user + system, wallSeconds: wall };
}

ensureBuilt();
const timing = join(mkdtempSync(join(tmpdir(), 'admin-start-')), 'time.txt');
const runs = Number(values.runs);
const samples = new Map<string, Array<{ cpuSeconds: number; wallSeconds: number }>>(VARIANTS.map((v) => [v.name, []]));
for (let round = 0; round <= runs; round++) {
  for (const variant of VARIANTS) {
    const sample = runOnce(variant, timing);
    if (round === 0) continue;
    samples.get(variant.name)?.push(sample);
    say(`run ${round} (${variant.name}): ${sample.cpuSeconds.toFixed(2)} s CPU, ${sample.wallSeconds.toFixed(2)} s wall`);
  }
}
const variants = Object.fromEntries(VARIANTS.map((v) => {
  const s = samples.get(v.name) ?? [];
  return [v.name, { cpuSeconds: median(s.map((x) => x.cpuSeconds)), wallSeconds: median(s.map((x) => x.wallSeconds)), runs: s.length }];
}));
const written = writeResult(String(values.out), {
  machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  at: new Date().toISOString(),
  conditions: `admin --help to exit, ${runs} interleaved runs per variant after one uncounted warm-up round, medians; CPU = user + system of the process and its children (/usr/bin/time)`,
  variants,
  loadAverage: { atEnd: loadavg() },
});
for (const [name, v] of Object.entries(variants)) process.stdout.write(`${name}: ${v.cpuSeconds.toFixed(2)} s CPU, ${v.wallSeconds.toFixed(2)} s wall (median of ${v.runs})\n`);
process.stdout.write(`written to ${written}\n`);
