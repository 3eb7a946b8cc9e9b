// The bootstrap's npm step (scripts/bootstrap.mjs, scripts/npm-deps.mjs, and the modules they import): it installs the
// locked versions without ever writing package-lock.json (a fresh clone stays clean after
// `npm start`), and installs only when node_modules differs from the lockfile
// (node_modules/.package-lock.json, npm's record of what it installed, against it). Run on
// copies of the two scripts in a temporary root with a stand-in `npm` on PATH that records
// its arguments; NATS_URL and TEMPORAL_ADDRESS set so that no Go tool is needed.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

const pkg = { name: 'fixture', version: '1.0.0', dependencies: { alpha: '^1.0.0' }, devDependencies: { beta: '^2.0.0' } };
const lock = {
  name: 'fixture', version: '1.0.0', lockfileVersion: 3, requires: true,
  packages: {
    '': { name: 'fixture', version: '1.0.0', dependencies: { alpha: '^1.0.0' }, devDependencies: { beta: '^2.0.0' } },
    'node_modules/alpha': { version: '1.2.0', integrity: 'sha512-alpha' },
    'node_modules/beta': { version: '2.0.1', integrity: 'sha512-beta', dev: true },
    // Another platform's optional binary: never installed here.
    'node_modules/alpha-darwin-arm64': { version: '1.2.0', optional: true, os: ['darwin'], cpu: ['arm64'] },
  },
};
/** What npm records in node_modules/.package-lock.json after installing `lock` on Linux. */
const installedOf = (l: { name: string; version: string; packages: Record<string, object> }): unknown => ({
  name: l.name, version: l.version, lockfileVersion: 3, requires: true,
  packages: Object.fromEntries(Object.entries(l.packages).filter(([k, v]) => k !== '' && !('optional' in v))),
});

let root: string;
const write = (path: string, value: unknown): void => {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`);
};
const state = (): { state: string; reason: string } => JSON.parse(execFileSync(process.execPath, [join(root, 'scripts', 'npm-deps.mjs'), root], { encoding: 'utf8' })) as { state: string; reason: string };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'bootstrap-npm-'));
  mkdirSync(join(root, 'scripts'));
  for (const f of ['bootstrap.mjs', 'npm-deps.mjs', 'go-tools.mjs', 'temporal-patch.mjs']) copyFileSync(join(ROOT, 'scripts', f), join(root, 'scripts', f));
  write('package.json', pkg);
  write('package-lock.json', lock);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('scripts/npm-deps.mjs: is node_modules what package-lock.json locks?', () => {
  test('no node_modules: install', () => {
    expect(state()).toEqual({ state: 'install', reason: 'node_modules is absent (or was not installed by npm)' });
  });

  test('the locked versions installed, another platform\'s optional package absent: current', () => {
    write('node_modules/.package-lock.json', installedOf(lock));
    expect(state().state).toBe('current');
  });

  test('a version other than the locked one, a locked package missing, an extra package: install, naming it', () => {
    write('node_modules/.package-lock.json', installedOf({ ...lock, packages: { ...lock.packages, 'node_modules/alpha': { version: '1.1.0', integrity: 'sha512-old' } } }));
    expect(state()).toEqual({ state: 'install', reason: 'alpha: 1.1.0 installed, 1.2.0 locked' });
    const { 'node_modules/beta': _beta, ...withoutBeta } = lock.packages;
    write('node_modules/.package-lock.json', installedOf({ ...lock, packages: withoutBeta }));
    expect(state()).toEqual({ state: 'install', reason: 'beta@2.0.1 is locked but not installed' });
    write('node_modules/.package-lock.json', installedOf({ ...lock, packages: { ...lock.packages, 'node_modules/gamma': { version: '3.0.0', integrity: 'sha512-gamma' } } }));
    expect(state()).toEqual({ state: 'install', reason: 'gamma is installed but not in the lockfile' });
  });

  test('package.json names a dependency the lockfile lacks, or no lockfile: update-lock', () => {
    write('package.json', { ...pkg, dependencies: { ...pkg.dependencies, gamma: '^3.0.0' } });
    expect(state()).toEqual({ state: 'update-lock', reason: 'dependencies.gamma: ^3.0.0 in package.json, not in the lockfile' });
    rmSync(join(root, 'package-lock.json'));
    expect(state()).toEqual({ state: 'update-lock', reason: 'package-lock.json is missing' });
  });
});

describe('scripts/bootstrap.mjs: the npm step', () => {
  /** Runs the bootstrap with a stand-in npm that logs its arguments and "installs" the lockfile. */
  function bootstrap(runtime = 'v24.21.0', expectStatus = 0): { calls: string[]; stderr: string } {
    const bin = join(root, 'fake-bin');
    mkdirSync(bin, { recursive: true });
    const log = join(root, 'npm-calls.log');
    writeFileSync(join(bin, 'npm'), [
      '#!/bin/sh',
      `echo "$*" >> '${log}'`,
      'mkdir -p node_modules/.bin',
      // The `node` package's binary: the product's runtime (an empty version: not installed).
      ...(runtime ? [`printf '#!/bin/sh\\necho ${runtime}\\n' > node_modules/.bin/node`, 'chmod +x node_modules/.bin/node'] : []),
      // Like npm 11's `npm install` without --no-save: it rewrites the lockfile.
      'case " $* " in *" --no-save "*) ;; *) echo \'{"rewritten": true}\' > package-lock.json ;; esac',
      `node -e 'const l=require("./package-lock.json"); const p={...l.packages}; delete p[""]; for (const k in p) if (p[k].optional) delete p[k]; require("fs").writeFileSync("node_modules/.package-lock.json", JSON.stringify({...l, packages: p}))'`,
    ].join('\n'));
    chmodSync(join(bin, 'npm'), 0o755);
    const { NATS_URL: _n, TEMPORAL_ADDRESS: _t, CI: _c, npm_lifecycle_event: _e, ...env } = process.env;
    const result = spawnSync(process.execPath, [join(root, 'scripts', 'bootstrap.mjs')], {
      cwd: root, encoding: 'utf8',
      env: { ...env, PATH: `${bin}:${env['PATH'] ?? ''}`, NATS_URL: 'nats://127.0.0.1:1', TEMPORAL_ADDRESS: '127.0.0.1:1' },
    });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: expectStatus, stderr: expect.any(String) });
    return { calls: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [], stderr: result.stderr };
  }

  test('installs the locked versions with --no-save, leaves package-lock.json byte for byte, and does nothing the second time', () => {
    const lockBefore = readFileSync(join(root, 'package-lock.json'), 'utf8');
    const first = bootstrap();
    expect(first.calls).toEqual(['install --no-save --no-audit --no-fund']);
    expect(readFileSync(join(root, 'package-lock.json'), 'utf8')).toBe(lockBefore);
    expect(state().state).toBe('current');
    const second = bootstrap();
    expect(second.calls).toEqual(first.calls);
    expect(second.stderr).toContain('npm dependencies: present');
  });

  test('installs again when the lockfile moves on (a pull that bumps a version)', () => {
    bootstrap();
    write('package-lock.json', { ...lock, packages: { ...lock.packages, 'node_modules/alpha': { version: '1.3.0', integrity: 'sha512-alpha13' } } });
    const again = bootstrap();
    expect(again.calls).toEqual(['install --no-save --no-audit --no-fund', 'install --no-save --no-audit --no-fund']);
    expect(again.stderr).toContain('alpha: 1.2.0 installed, 1.3.0 locked');
  });

  test('package.json edited (a new dependency): plain npm install, which updates the lockfile, said so', () => {
    write('package.json', { ...pkg, dependencies: { ...pkg.dependencies, gamma: '^3.0.0' } });
    const run = bootstrap();
    expect(run.calls).toEqual(['install --no-audit --no-fund']);
    expect(run.stderr).toContain('updates package-lock.json (commit it with package.json)');
  });

  test('names the product runtime (the `node` package) and refuses a missing or older one', () => {
    expect(bootstrap().stderr).toMatch(/product runtime: Node v24\.21\.0 \(node_modules\/\.bin\/node/);
    rmSync(join(root, 'node_modules'), { recursive: true, force: true });
    expect(bootstrap('v20.20.2', 1).stderr).toContain("the product's Node runtime is v20.20.2; Node 22 or later is required");
    rmSync(join(root, 'node_modules'), { recursive: true, force: true });
    expect(bootstrap('', 1).stderr).toContain("the product's Node runtime is missing");
  });
});

describe('package-lock.json (committed)', () => {
  /**
   * Optional packages the npm registry answers 404 for: no lockfile can hold them, which is why
   * `npm ci` cannot be used and the bootstrap runs `npm install --no-save` (checked with `npm view`).
   */
  const UNPUBLISHED = new Set(['@chdb/lib-darwin-arm64', '@chdb/lib-darwin-x64', '@chdb/lib-linux-arm64-gnu']);

  test('holds every optional dependency of every locked package, the other platforms\' too (else npm install rewrites it on the first start)', () => {
    const locked = (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { optionalDependencies?: Record<string, string> }> }).packages;
    /** Node's lookup from the folder of `key` upwards, as npm places packages. */
    const found = (key: string, name: string): boolean => {
      for (let dir = key; ; dir = dir.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '')) {
        if (`${dir ? `${dir}/` : ''}node_modules/${name}` in locked) return true;
        if (!dir) return false;
      }
    };
    const missing = Object.entries(locked).flatMap(([key, entry]) => Object.keys(entry.optionalDependencies ?? {})
      .filter((name) => !UNPUBLISHED.has(name) && !found(key, name)).map((name) => `${key || '(root)'} -> ${name}`));
    expect(Object.keys(locked).length).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });
});
