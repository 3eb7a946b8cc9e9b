// The Temporal CLI that runs `temporal server start-dev` for `npm start` and the tests is built
// with one constant of its server changed (docs/decisions.md, 2026-11-27, "the dev server's
// lost workflow tasks"): Matching gives History 1 s to record a workflow task it matched to a
// waiting poller as started (`recordTaskStartedSyncMatchTimeout`). On two busy cores History
// sometimes commits the start and answers later; Matching then drops the dispatch, History
// refuses the retry as already started, and the workflow waits for its workflow task timeout
// (temporalio/temporal#11733, fix proposed in #11734, not released). 10 s is the deadline the
// same code gives every other task it records as started (`recordTaskStartedDefaultTimeout`).
// Plain Node, no dependencies: bootstrap runs it before node_modules exists.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TEMPORAL_SERVER_PATCH = {
  id: 'sync-match-record-10s',
  module: 'go.temporal.io/server',
  version: 'v1.29.1',
  file: 'service/matching/matching_engine.go',
  from: 'recordTaskStartedSyncMatchTimeout = 1 * time.Second',
  to: 'recordTaskStartedSyncMatchTimeout = 10 * time.Second',
};

/** `text` with the patch's one occurrence of `from` replaced; throws when it is not there exactly once. */
export function applyPatch(text, patch) {
  const at = text.indexOf(patch.from);
  if (at < 0 || text.indexOf(patch.from, at + 1) >= 0) {
    throw new Error(`${patch.module}@${patch.version} ${patch.file}: expected "${patch.from}" exactly once (a different server version? update scripts/temporal-patch.mjs)`);
  }
  return text.slice(0, at) + patch.to + text.slice(at + patch.from.length);
}

function goModDir(modulePath, version) {
  const r = spawnSync('go', ['mod', 'download', '-json', `${modulePath}@${version}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`go mod download ${modulePath}@${version} failed: check that the Go module proxy is reachable (go env GOPROXY).\n${r.stderr}`);
  const dir = JSON.parse(r.stdout).Dir;
  if (!dir || !existsSync(dir)) throw new Error(`go mod download ${modulePath}@${version} gave no directory`);
  return dir;
}

/**
 * Builds `pkg` of the Go module `mainModule@version` into `out`, with `patch` applied to a copy
 * of its server dependency (a `replace` in a copy of the main module). `run(cmd, args, opts)`
 * runs a long step with progress; resolves to its exit code.
 */
export async function buildPatchedGoTool({ mainModule, version, pkg, versionFlag, patch, workDir, out, run }) {
  const main = goModDir(mainModule, version);
  const server = goModDir(patch.module, patch.version);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const src = join(workDir, 'src');
  cpSync(main, src, { recursive: true });
  cpSync(server, join(src, 'patched-server'), { recursive: true });
  // The module cache is read-only; the copies must be writable to patch them and to remove them.
  spawnSync('chmod', ['-R', 'u+w', src]);
  const file = join(src, 'patched-server', patch.file);
  writeFileSync(file, applyPatch(readFileSync(file, 'utf8'), patch));
  if (spawnSync('go', ['mod', 'edit', `-replace=${patch.module}=./patched-server`], { cwd: src }).status !== 0) throw new Error('go mod edit -replace failed');
  const code = await run('go', ['build', '-trimpath', '-ldflags', `-X ${versionFlag}=${version.replace(/^v/, '')}`, '-o', out, pkg], { cwd: src });
  rmSync(workDir, { recursive: true, force: true });
  return code;
}
