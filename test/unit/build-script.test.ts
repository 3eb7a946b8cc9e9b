// scripts/build.mjs: `npm start` and `npm run admin` run the compiled dist/, built only when a
// product source is newer than the last build (docs/decisions.md, "Compiled JavaScript").
import { spawnSync } from 'node:child_process';
import { existsSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { COMPILED_MAIN, ensureBuilt, PROJECT_ROOT, projectPath } from '../../infra/paths';

const check = (): { status: number | null; stderr: string } => {
  const result = spawnSync(process.execPath, [projectPath('scripts', 'build.mjs'), '--check'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
};

describe('scripts/build.mjs: dist/ built when stale, left alone when current', () => {
  beforeAll(() => { ensureBuilt(); }, 120_000);

  test('after a build, dist/ holds main.js and the check says current', () => {
    expect(existsSync(COMPILED_MAIN)).toBe(true);
    expect(check()).toEqual({ status: 0, stderr: expect.stringContaining('dist/ is current') });
  });

  test('a product source newer than the build makes it stale, naming the file; as before, current again', () => {
    const source = join(PROJECT_ROOT, 'core', 'money.ts');
    const { atime, mtime } = statSync(source);
    try {
      const future = new Date(Date.now() + 60_000);
      utimesSync(source, future, future);
      expect(check()).toEqual({ status: 1, stderr: expect.stringContaining('stale: core/money.ts changed since the last build') });
    } finally {
      utimesSync(source, atime, mtime);
    }
    expect(check().status).toBe(0);
  });

  test('files that are not code are found from dist/ in the source tree (migrations, console assets, tools)', () => {
    const run = spawnSync(process.execPath, ['-e', [
      "const { MIGRATIONS_DIR } = require('./dist/infra/clickhouse');",
      "const { TOOLS_BIN } = require('./dist/infra/local-engines');",
      'process.stdout.write(JSON.stringify({ MIGRATIONS_DIR, TOOLS_BIN }));',
    ].join('\n')], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ MIGRATIONS_DIR: projectPath('infra', 'migrations'), TOOLS_BIN: projectPath('.tools', 'bin') });
  });
});
