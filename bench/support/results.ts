// A benchmark's result file: a name under bench/results/, or an absolute path; written as
// indented JSON. Returns the path to print ("written to …").
import { mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

const RESULTS_DIR = join(__dirname, '..', 'results');

export function writeResult(out: string, data: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(isAbsolute(out) ? out : join(RESULTS_DIR, out), `${JSON.stringify(data, null, 2)}\n`);
  return isAbsolute(out) ? out : `bench/results/${out}`;
}
