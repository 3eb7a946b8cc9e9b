// A benchmark's result file: a name under bench/results/, or an absolute path; written as
// indented JSON. Returns the path to print ("written to …"). And the figures the benchmarks
// print with it: a percentile of samples, the load average.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { isAbsolute, join } from 'node:path';

const RESULTS_DIR = join(__dirname, '..', 'results');

/** The checkout's commit (short), for result files; `unknown` outside a git checkout. */
export function benchCommit(): string {
  try { return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: join(__dirname, '..', '..'), encoding: 'utf8' }).trim(); } catch { return 'unknown'; }
}

export function writeResult(out: string, data: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(isAbsolute(out) ? out : join(RESULTS_DIR, out), `${JSON.stringify(data, null, 2)}\n`);
  return isAbsolute(out) ? out : `bench/results/${out}`;
}

/** The nearest-rank `p`th percentile of `xs` (0 when empty). */
export function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** The 1, 5 and 15 minute load averages, as printed: `0.52 0.61 0.70`. */
export const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
