#!/usr/bin/env node
// Compiles the product (tsconfig.build.json) into dist/, only when a source file is newer than the
// last build: `npm start` and `npm run admin` run dist/, and call this first, so a checkout
// that changed is built again and an unchanged one starts at once. Plain Node, no dependencies.
// `--check` only says whether dist/ is current (exit 0) or stale (exit 1).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');
// What tsc compiles: the "include" of tsconfig.build.json (a folder added there is watched too).
const SOURCES = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')).include;
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
// --quiet: say nothing when dist/ is current (the admin CLI's every call); a build is always shown.
const quiet = process.argv.includes('--quiet');
// --emit-on-error: type errors do not stop the build (the test stack; `npm start` and the CLI never pass it).
const emitOnError = process.argv.includes('--emit-on-error');
const log = (msg) => process.stderr.write(`[build] ${msg}\n`);

/** The newest modification time among the product's TypeScript sources and the build's inputs. */
function newestSource() {
  let newest = { time: 0, file: '' };
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
    } else if ((path.endsWith('.ts') || INPUTS.some((f) => path === join(root, f))) && stat.mtimeMs > newest.time) {
      newest = { time: stat.mtimeMs, file: path };
    }
  };
  for (const source of [...SOURCES, ...INPUTS]) visit(join(root, source));
  return newest;
}

function staleReason() {
  const built = statSync(stamp, { throwIfNoEntry: false });
  if (!built || !existsSync(join(dist, 'main.js'))) return 'dist/ has no build yet';
  const newest = newestSource();
  return newest.time > built.mtimeMs ? `${newest.file.slice(root.length + 1)} changed since the last build` : undefined;
}

const reason = staleReason();
if (process.argv.includes('--check')) {
  log(reason ? `stale: ${reason}` : 'dist/ is current');
  process.exit(reason ? 1 : 0);
}
if (!reason) {
  if (!quiet) log('dist/ is current');
  process.exit(0);
}
const started = Date.now();
const startedAt = new Date();
log(`compiling TypeScript into dist/ (${reason}; the first build takes about 30 s)`);
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const child = spawn(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
const heartbeat = setInterval(() => log(`still compiling (${Math.round((Date.now() - started) / 1000)} s)`), 15000);
child.on('exit', (code) => {
  clearInterval(heartbeat);
  if (code !== 0) {
    // tsc writes the JavaScript of files with type errors too. The test stack may run it (npm test
    // has already failed on them in its lint step; a suite run alone should still run): not stamped,
    // so the next build tries again.
    if (emitOnError && code === 2 && existsSync(join(dist, 'main.js'))) {
      process.stderr.write('[build] warning: type errors above (npm run lint shows them too); dist/ was written anyway for this test run\n');
      process.exit(0);
    }
    process.stderr.write(`[build] error: tsc exited with ${code}: fix the type errors above (npm run lint shows them too)\n`);
    process.exit(1);
  }
  // The stamp carries the time the build started: a file saved during the build is newer, so the next start builds again.
  writeFileSync(stamp, `${startedAt.toISOString()}\n`);
  utimesSync(stamp, startedAt, startedAt);
  log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

