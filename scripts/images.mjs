#!/usr/bin/env node
// `npm run images`: builds, idempotently and with progress, every container image the product and
// its tests use, with podman and from this repository's files only (no image is pulled):
//
//   localhost/sms-base:bookworm        Debian bookworm (debootstrap --variant=minbase, podman import)
//   localhost/sms-nats:<v>             .tools/bin/nats-server (scripts/bootstrap.mjs builds it)
//   localhost/sms-temporal-dev:<v>     .tools/bin/temporal: `temporal server start-dev`
//   localhost/sms-temporal:<v>         the Temporal server, its SQL tool, schema and CLI (compose)
//   localhost/sms-postgres:15          PostgreSQL from Debian's packages (Temporal's store in compose)
//   localhost/sms-prometheus:bookworm  Prometheus from Debian's packages (compose observability)
//   localhost/sms-platform:latest      the product: dist/, production node_modules, Node 24, engines
//
// Containerfiles: compose/Dockerfile (the product) and compose/images/*.Containerfile. Each
// build context is staged under .tools/images/<image>/ from the repository (binaries built
// here, dist/, the production dependencies of package-lock.json). An image is rebuilt only when
// its inputs changed: their digest (Containerfile, names, sizes and times of the staged files)
// is a label of the image. Installs podman when missing (apt-get) and adds to
// /etc/containers/containers.conf only the lines this machine needs and the file lacks.
//
//   npm run images                    all of them
//   npm run images -- platform nats   some (the base image is always made first)
//   npm run images -- --force         rebuild even when the inputs did not change
//   npm run images -- --list          print the image names and exit
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, copyFileSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOLS } from './go-tools.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const toolsBin = join(root, '.tools', 'bin');
const stageRoot = join(root, '.tools', 'images');
const log = (msg) => process.stderr.write(`[images] ${msg}\n`);
const fail = (msg) => {
  log(`error: ${msg}`);
  process.exit(1);
};

export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const POSTGRES_MAJOR = '15';
export const BASE_IMAGE = 'localhost/sms-base:bookworm';
/** Debian packages every image may use: tini (PID 1), wget and nc (health checks), socat (compose's chdb link). */
const BASE_PACKAGES = ['ca-certificates', 'tini', 'wget', 'netcat-openbsd', 'socat'];
const CONTAINERS_CONF = '/etc/containers/containers.conf';
/** What this machine needs (it withholds CAP_SYS_RESOURCE; crun is not used here). */
const CONF_LINES = [
  { section: 'containers', key: 'default_ulimits', line: 'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]' },
  { section: 'engine', key: 'runtime', line: 'runtime = "runc"' },
];

const version = (name) => {
  if (!TOOLS[name]) fail(`scripts/go-tools.mjs: no pinned version of ${name} found (TOOLS)`);
  return TOOLS[name].version.replace(/^v/, '');
};

/** Every image but the base: its tags, Containerfile and how its build context is staged. */
export const IMAGES = {
  nats: { tags: [`localhost/sms-nats:${version('nats-server')}`, 'localhost/sms-nats:latest'], file: 'compose/images/nats.Containerfile', stage: (dir) => linkInto(dir, join(toolsBin, 'nats-server')) },
  'temporal-dev': { tags: [`localhost/sms-temporal-dev:${version('temporal')}`, 'localhost/sms-temporal-dev:latest'], file: 'compose/images/temporal-dev.Containerfile', stage: (dir) => linkInto(dir, join(toolsBin, 'temporal')) },
  temporal: { tags: [`localhost/sms-temporal:${TEMPORAL_SERVER_VERSION.replace(/^v/, '')}`, 'localhost/sms-temporal:latest'], file: 'compose/images/temporal.Containerfile', stage: stageTemporal },
  postgres: { tags: [`localhost/sms-postgres:${POSTGRES_MAJOR}`, 'localhost/sms-postgres:latest'], file: 'compose/images/postgres.Containerfile', stage: (dir) => copyInto(dir, join(root, 'compose', 'images', 'postgres-entrypoint.sh')) },
  prometheus: { tags: ['localhost/sms-prometheus:bookworm', 'localhost/sms-prometheus:latest'], file: 'compose/images/prometheus.Containerfile', stage: () => {} },
  platform: { tags: ['localhost/sms-platform:latest'], file: 'compose/Dockerfile', stage: stagePlatform },
};

// ---------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------

const sh = (cmd, args, options = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
const has = (cmd) => sh('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** Runs a long command with its output shown, a heartbeat every 20 s, and `nice -n 10` (shared machine). */
function run(cmd, args, { label, cwd = root, input } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn('nice', ['-n', '10', cmd, ...args], { cwd, stdio: [input ? 'pipe' : 'ignore', 'inherit', 'inherit'] });
    if (input) input(child.stdin);
    const heartbeat = setInterval(() => log(`${label}: still working (${Math.round((Date.now() - started) / 1000)} s)`), 20000);
    child.on('error', (err) => { clearInterval(heartbeat); resolve({ code: 1, err, seconds: 0 }); });
    child.on('exit', (code) => { clearInterval(heartbeat); resolve({ code: code ?? 1, seconds: (Date.now() - started) / 1000 }); });
  });
}

// ---------------------------------------------------------------------------------------
// podman and its configuration
// ---------------------------------------------------------------------------------------

function aptInstall(packages) {
  const list = packages.join(' ');
  log(`apt-get install -y ${list}`);
  const cmd = `DEBIAN_FRONTEND=noninteractive apt-get install -y ${list} || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${list})`;
  const result = sh('sh', ['-c', cmd], { stdio: ['ignore', 'ignore', 'inherit'] });
  return result.status === 0;
}

export function ensurePodman({ compose = false } = {}) {
  const missing = [['podman', 'podman'], ['runc', 'runc'], ['debootstrap', 'debootstrap'], ...(compose ? [['podman-compose', 'podman-compose']] : [])]
    .filter(([cmd]) => !has(cmd)).map(([, pkg]) => pkg);
  if (missing.length > 0) {
    if (!has('apt-get')) fail(`${missing.join(', ')} missing and this is not a Debian/Ubuntu machine: install podman (and podman-compose), then rerun`);
    if (process.getuid?.() !== 0) fail(`${missing.join(', ')} missing: run as root, or \`sudo apt-get install -y ${missing.join(' ')}\`, then rerun`);
    log(`podman: installing ${missing.join(', ')} from Debian (first time only, about a minute)`);
    if (!aptInstall(missing)) fail(`apt-get install ${missing.join(' ')} failed (see above)`);
  }
  ensureContainersConf();
  const v = sh('podman', ['--version']).stdout.trim();
  log(`podman: present (${v})`);
}

/** Adds to containers.conf only the lines (or sections) it lacks; a key already set is left as it is. */
export function withConfLines(text, lines = CONF_LINES) {
  let out = text;
  const added = [];
  for (const { section, key, line } of lines) {
    const sections = [...out.matchAll(/^\s*\[([^\]]+)\]\s*$/gm)];
    const index = sections.findIndex((m) => m[1].trim() === section);
    if (index === -1) {
      out = `${out}${out === '' || out.endsWith('\n') ? '' : '\n'}\n[${section}]\n${line}\n`;
      added.push(`[${section}] ${line}`);
      continue;
    }
    const start = sections[index].index + sections[index][0].length;
    const end = sections[index + 1]?.index ?? out.length;
    if (new RegExp(`^\\s*${key}\\s*=`, 'm').test(out.slice(start, end))) continue;
    out = `${out.slice(0, start)}\n${line}${out.slice(start)}`;
    added.push(`[${section}] ${line}`);
  }
  return { text: out, added };
}

function ensureContainersConf() {
  const before = existsSync(CONTAINERS_CONF) ? readFileSync(CONTAINERS_CONF, 'utf8') : '';
  const { text, added } = withConfLines(before);
  if (added.length === 0) return;
  if (process.getuid?.() !== 0) {
    log(`warning: ${CONTAINERS_CONF} lacks ${added.join('; ')} (needed where CAP_SYS_RESOURCE is withheld); run as root to add them`);
    return;
  }
  mkdirSync(dirname(CONTAINERS_CONF), { recursive: true });
  writeFileSync(CONTAINERS_CONF, text);
  log(`podman: added to ${CONTAINERS_CONF}: ${added.join('; ')}`);
}

// ---------------------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------------------

const imageExists = (tag) => sh('podman', ['image', 'exists', tag]).status === 0;
const labelOf = (tag, label) => {
  const r = sh('podman', ['image', 'inspect', '--format', `{{ index .Labels "${label}" }}`, tag]);
  return r.status === 0 ? r.stdout.trim() : undefined;
};

/** The Debian mirror apt already uses (deb822 .sources or sources.list), not the security one. */
export function debianMirror() {
  const found = [];
  const dir = '/etc/apt/sources.list.d';
  const files = ['/etc/apt/sources.list', ...(existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.sources') || f.endsWith('.list')).map((f) => join(dir, f)) : [])];
  for (const file of files.filter((f) => existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^URIs:\s*(\S+)/gm)) found.push(m[1]);
    for (const m of text.matchAll(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\b/gm)) found.push(m[1]);
  }
  return found.find((u) => !/security/.test(u)) ?? 'http://deb.debian.org/debian';
}

async function ensureBase(force) {
  const inputs = digest([`debootstrap minbase bookworm ${BASE_PACKAGES.join(',')}`]);
  if (!force && imageExists(BASE_IMAGE) && labelOf(BASE_IMAGE, 'sms.inputs') === inputs) {
    log(`${BASE_IMAGE}: up to date`);
    return;
  }
  const mirror = debianMirror();
  const rootfs = join(stageRoot, 'base-rootfs');
  rmSync(rootfs, { recursive: true, force: true });
  mkdirSync(rootfs, { recursive: true });
  log(`${BASE_IMAGE}: debootstrap --variant=minbase bookworm from ${mirror} (first time only, 2-4 minutes)`);
  const boot = await run('debootstrap', ['--variant=minbase', `--include=${BASE_PACKAGES.join(',')}`, 'bookworm', rootfs, mirror], { label: 'debootstrap' });
  if (boot.code !== 0) fail('debootstrap failed (see above): is the Debian mirror reachable?');
  // Smaller and reproducible-ish: no package lists or caches in the image; apt-get update in a build gets them.
  for (const sub of ['var/cache/apt/archives', 'var/lib/apt/lists', 'var/log']) {
    const path = join(rootfs, sub);
    for (const entry of existsSync(path) ? readdirSync(path) : []) if (entry !== 'partial' && entry !== 'lock') rmSync(join(path, entry), { recursive: true, force: true });
  }
  log(`${BASE_IMAGE}: podman import`);
  const tar = spawn('tar', ['-C', rootfs, '--numeric-owner', '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const imported = await run('podman', ['import', '--change', `LABEL sms.inputs=${inputs}`, '--change', 'CMD ["/bin/bash"]', '-', BASE_IMAGE], { label: 'podman import', input: (stdin) => tar.stdout.pipe(stdin) });
  if (imported.code !== 0) fail('podman import failed (see above)');
  rmSync(rootfs, { recursive: true, force: true });
  log(`${BASE_IMAGE}: made in ${(boot.seconds + imported.seconds).toFixed(0)} s`);
}

/** A digest of strings and of the files under `dir` (relative name, size, modification time). */
function digest(parts, dir) {
  const hash = createHash('sha256');
  for (const p of parts) hash.update(`${p}\0`);
  const visit = (path) => {
    const stat = lstatSync(path);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path).sort()) visit(join(path, entry));
    } else {
      hash.update(`${relative(dir, path)}\0${stat.size}\0${Math.floor(stat.mtimeMs)}\0`);
    }
  };
  if (dir && existsSync(dir)) visit(dir);
  return hash.digest('hex').slice(0, 24);
}

async function buildImage(name, force) {
  const spec = IMAGES[name];
  const dir = join(stageRoot, name);
  mkdirSync(dir, { recursive: true });
  await spec.stage(dir);
  const containerfile = join(root, spec.file);
  const inputs = digest([readFileSync(containerfile, 'utf8'), labelOf(BASE_IMAGE, 'sms.inputs') ?? ''], dir);
  const [tag] = spec.tags;
  if (!force && spec.tags.every(imageExists) && labelOf(tag, 'sms.inputs') === inputs) {
    log(`${tag}: up to date`);
    return { name, seconds: 0, built: false };
  }
  log(`${tag}: building from ${spec.file}`);
  // --force rebuilds every layer (--no-cache): what a fresh machine pays (bench/containers.ts).
  const args = ['build', '--format', 'docker', '--layers', ...(force ? ['--no-cache'] : []), '--label', `sms.inputs=${inputs}`, ...spec.tags.flatMap((t) => ['-t', t]), '-f', containerfile, dir];
  const result = await run('podman', args, { label: `build ${tag}` });
  if (result.code !== 0) fail(`podman build of ${tag} failed (see above)`);
  log(`${tag}: built in ${result.seconds.toFixed(0)} s`);
  return { name, seconds: result.seconds, built: true };
}

// ---------------------------------------------------------------------------------------
// Build contexts
// ---------------------------------------------------------------------------------------

/** Hard link (same inode: same size and time, no copy) or, across file systems, a copy that keeps the time. */
function linkInto(dir, source, name = source.split('/').pop()) {
  if (!existsSync(source)) fail(`${relative(root, source)} is missing: run \`npm run bootstrap\` first`);
  const target = join(dir, name);
  const s = statSync(source);
  const t = statSync(target, { throwIfNoEntry: false });
  if (t && t.ino === s.ino) return;
  rmSync(target, { force: true });
  try {
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
    utimesSync(target, s.atime, s.mtime);
  }
}

const copyInto = (dir, source, name = source.split('/').pop()) => cpSync(source, join(dir, name), { preserveTimestamps: true, force: true });

/** A folder mirrored into the context: stale files removed, times kept (so the digest only moves on a change). */
function mirror(source, target) {
  rmSync(target, { recursive: true, force: true });
  cpSync(source, target, { recursive: true, preserveTimestamps: true, filter: (src) => !src.endsWith('.tsbuildinfo') });
}

function ensureToolsBuilt() {
  const needed = ['nats-server', 'temporal'].filter((t) => !existsSync(join(toolsBin, t)));
  if (needed.length === 0) return;
  log(`${needed.join(', ')} missing in .tools/bin: running scripts/bootstrap.mjs --all`);
  if (sh(process.execPath, [join(root, 'scripts', 'bootstrap.mjs'), '--all'], { stdio: 'inherit' }).status !== 0) fail('bootstrap failed');
}

function stageTemporal(dir) {
  // The Temporal server and its SQL tool: the installer of `npm run topology` (go install, cached in .tools/bin).
  if (!existsSync(join(toolsBin, 'temporal-server')) || !existsSync(join(toolsBin, 'temporal-sql-tool'))) {
    log(`building the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool into .tools/bin (first time only, a few minutes)`);
    const r = sh(process.execPath, ['--import', 'tsx', '-e', "require('./scripts/topology/engines.ts').ensureTemporalBuilds()"], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) fail('building the Temporal server failed (see above)');
  }
  linkInto(dir, join(toolsBin, 'temporal-server'));
  linkInto(dir, join(toolsBin, 'temporal-sql-tool'));
  linkInto(dir, join(toolsBin, 'temporal'));
  const modcache = sh('go', ['env', 'GOMODCACHE']).stdout.trim();
  const schema = join(modcache, `go.temporal.io/server@${TEMPORAL_SERVER_VERSION}`, 'schema', 'postgresql', 'v12');
  if (!existsSync(schema)) fail(`the Temporal schema files are not in the Go module cache (${schema})`);
  mirror(schema, join(dir, 'schema'));
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  for (const f of ['setup-postgres.sh', 'create-namespace.sh', 'server-entrypoint.sh', 'server-config.yaml']) copyInto(join(dir, 'scripts'), join(root, 'compose', 'temporal', f));
  mirror(join(root, 'compose', 'temporal', 'dynamicconfig'), join(dir, 'dynamicconfig'));
}

/** Folders of tsconfig.build.json: the product's sources (non-code files such as the console's assets are read from them at run time). */
const productFolders = () => JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')).include.filter((p) => !p.endsWith('.ts'));

async function stagePlatform(dir) {
  log('product: compiling dist/ (scripts/build.mjs)');
  if (sh(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' }).status !== 0) fail('the product does not compile (see above)');
  // Node 24: the binary of the `node` npm package of the lockfile (node_modules/node/bin/node).
  linkInto(dir, join(root, 'node_modules', 'node', 'bin', 'node'));
  const app = join(dir, 'app');
  mkdirSync(app, { recursive: true });
  // Production dependencies: `npm install --omit=dev` from package.json + package-lock.json in the
  // context (npm's cache makes it a copy); again only when the lockfile changed.
  const lockHash = createHash('sha256').update(readFileSync(join(root, 'package-lock.json'))).update(readFileSync(join(root, 'package.json'))).digest('hex');
  const stamp = join(dir, '.npm-installed');
  if (!existsSync(join(app, 'node_modules')) || !existsSync(stamp) || readFileSync(stamp, 'utf8') !== lockHash) {
    copyInto(app, join(root, 'package.json'));
    copyInto(app, join(root, 'package-lock.json'));
    log('product: npm install --omit=dev into the build context (first time or lockfile changed; about a minute)');
    const r = await run('npm', ['install', '--omit=dev', '--no-save', '--no-audit', '--no-fund', '--loglevel=warn'], { cwd: app, label: 'npm install --omit=dev' });
    if (r.code !== 0) fail('npm install --omit=dev failed (see above)');
    writeFileSync(stamp, lockHash);
  }
  copyInto(app, join(root, 'package.json'));
  copyInto(app, join(root, 'package-lock.json'));
  mirror(join(root, 'dist'), join(app, 'dist'));
  for (const folder of productFolders()) mirror(join(root, folder), join(app, folder));
  // The engines of the embedded mode (the image alone runs `npm start`'s stack).
  mkdirSync(join(app, '.tools', 'bin'), { recursive: true });
  linkInto(join(app, '.tools', 'bin'), join(toolsBin, 'nats-server'));
  linkInto(join(app, '.tools', 'bin'), join(toolsBin, 'temporal'));
}

// ---------------------------------------------------------------------------------------

/**
 * One `npm run images` at a time: two would stage the same build contexts under each other's
 * builds. A lock file holds the owner's pid; a lock whose process is gone is taken over.
 */
async function acquireLock() {
  mkdirSync(stageRoot, { recursive: true });
  const lock = join(stageRoot, '.lock');
  let announced = false;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      process.on('exit', () => rmSync(lock, { force: true }));
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const owner = Number(readFileSync(lock, 'utf8').trim());
    let alive = false;
    try { alive = Number.isInteger(owner) && owner > 0 && (process.kill(owner, 0), true); } catch { alive = false; }
    if (!alive) {
      rmSync(lock, { force: true });
      continue;
    }
    if (!announced) log(`waiting for another \`npm run images\` (pid ${owner}) to finish`);
    announced = true;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    process.stdout.write(`${[BASE_IMAGE, ...Object.values(IMAGES).flatMap((i) => i.tags)].join('\n')}\n`);
    return;
  }
  const force = args.includes('--force');
  const wanted = args.filter((a) => !a.startsWith('--'));
  const unknown = wanted.filter((w) => !(w in IMAGES));
  if (unknown.length > 0) fail(`unknown image ${unknown.join(', ')}; known: ${Object.keys(IMAGES).join(', ')}`);
  const names = wanted.length > 0 ? wanted : Object.keys(IMAGES);
  const started = Date.now();
  await acquireLock();
  ensurePodman();
  ensureToolsBuilt();
  await ensureBase(force);
  const results = [];
  for (const name of names) results.push(await buildImage(name, force));
  const built = results.filter((r) => r.built);
  // A rebuilt image leaves its predecessor dangling (the product image is ~1.4 GB): remove those of ours.
  if (built.length > 0) sh('podman', ['image', 'prune', '-f', '--filter', 'label=sms.inputs']);
  log(`ready in ${((Date.now() - started) / 1000).toFixed(0)} s: ${built.length === 0 ? 'every image up to date' : built.map((r) => `${r.name} ${r.seconds.toFixed(0)} s`).join(', ')}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
