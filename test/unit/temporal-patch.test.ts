// scripts/temporal-patch.mjs: the dev server `npm start` runs is built with Matching's
// deadline for recording a sync-matched workflow task as started raised from 1 s to 10 s
// (docs/decisions.md, 2026-11-27, "the dev server's lost workflow tasks"). The patch is a
// search and replace that must find its text exactly once, in the pinned server's source.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT, projectPath } from '../../infra/paths';

/** Runs `code` as an ES module beside scripts/temporal-patch.mjs and answers what it printed as JSON. */
function inScripts(code: string): { out: unknown; status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import * as p from ${JSON.stringify(projectPath('scripts', 'temporal-patch.mjs'))};\n${code}`], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  return { out: r.status === 0 && r.stdout.trim() ? JSON.parse(r.stdout) : null, status: r.status, stderr: r.stderr };
}

const patch = inScripts('console.log(JSON.stringify(p.TEMPORAL_SERVER_PATCH));').out as { module: string; version: string; file: string; from: string; to: string; id: string };

describe('scripts/temporal-patch.mjs', () => {
  test('the patch raises the sync-match deadline to the 10 s every other record-started call gets', () => {
    expect(patch).toMatchObject({ module: 'go.temporal.io/server', file: 'service/matching/matching_engine.go' });
    expect(patch.from).toBe('recordTaskStartedSyncMatchTimeout = 1 * time.Second');
    expect(patch.to).toBe('recordTaskStartedSyncMatchTimeout = 10 * time.Second');
  });

  test('applyPatch replaces the one occurrence and nothing else', () => {
    const r = inScripts('console.log(JSON.stringify(p.applyPatch("a\\n\\trecordTaskStartedSyncMatchTimeout = 1 * time.Second\\nb", p.TEMPORAL_SERVER_PATCH)));');
    expect(r.out).toBe('a\n\trecordTaskStartedSyncMatchTimeout = 10 * time.Second\nb');
  });

  test.each([
    ['absent', '"package matching"'],
    ['twice', '"recordTaskStartedSyncMatchTimeout = 1 * time.Second recordTaskStartedSyncMatchTimeout = 1 * time.Second"'],
  ])('applyPatch refuses a source with the text %s, naming the file and what to update', (_, source) => {
    const r = inScripts(`p.applyPatch(${source}, p.TEMPORAL_SERVER_PATCH);`);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('service/matching/matching_engine.go: expected "recordTaskStartedSyncMatchTimeout = 1 * time.Second" exactly once');
    expect(r.stderr).toContain('update scripts/temporal-patch.mjs');
  });

  test("the pinned server's source (Go module cache) holds the patched text exactly once", () => {
    const download = spawnSync('go', ['mod', 'download', '-json', `${patch.module}@${patch.version}`], { encoding: 'utf8' });
    expect(download.status).toBe(0);
    const dir = (JSON.parse(download.stdout) as { Dir: string }).Dir;
    const source = readFileSync(join(dir, patch.file), 'utf8');
    expect(source.split(patch.from)).toHaveLength(2);
  });

  test('the installed temporal binary was built with the patch (bootstrap stamp)', () => {
    const stamp = readFileSync(join(PROJECT_ROOT, '.tools', 'bin', '.temporal.installed'), 'utf8');
    expect(stamp).toContain(`${patch.module}@${patch.version} ${patch.id}`);
  });
});
