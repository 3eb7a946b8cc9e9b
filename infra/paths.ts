// Where the project's files are, whether this code runs from its TypeScript sources (tsx: tests,
// development) or compiled into dist/ (`npm start`): files that are not code (migrations, the
// console's assets, the tools the bootstrap builds) stay at their place in the source tree.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root: the nearest folder above this module with a package.json (dist/ has none). */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}: run the product from its repository (or image)`);
  }
}

export const PROJECT_ROOT = findRoot(__dirname);

/** A path inside the source tree, e.g. projectPath('infra', 'migrations'). */
export const projectPath = (...parts: string[]): string => join(PROJECT_ROOT, ...parts);

/** The compiled product entry that `npm start` runs (tsconfig.build.json, scripts/build.mjs). */
export const COMPILED_MAIN = projectPath('dist', 'main.js');

/**
 * Node flags the product runs with (`npm start` in package.json; tools that start it as
 * `npm start` does: support/stack.ts; role processes inherit them). A young generation of 64 MB
 * semi-spaces instead of V8's 16: ingestion allocates per item (bodies, messages, rows) and
 * lets go at once, so fewer scavenges and fewer objects promoted to the old generation. Measured
 * 2026-11-26 (bench:ingest, events, 2 × 2 alternating runs): product CPU 40-51 against
 * 48-55 ms per 1,000 events, the JavaScript thread 21-26 against 25-29.
 */
export const PRODUCT_NODE_FLAGS = ['--max-semi-space-size=64'] as const;

/**
 * Compiles dist/ when a source changed since the last build (scripts/build.mjs; at once when
 * current): for tools that start the product as `npm start` does (the test stack, benchmarks).
 */
export function ensureBuilt(options: { readonly emitOnError?: boolean } = {}): string {
  const args = [projectPath('scripts', 'build.mjs'), ...(options.emitOnError ? ['--emit-on-error'] : [])];
  const result = spawnSync(process.execPath, args, { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
  if (result.status !== 0) throw new Error(`building dist/ failed (node scripts/build.mjs): ${result.stderr}`);
  return COMPILED_MAIN;
}
