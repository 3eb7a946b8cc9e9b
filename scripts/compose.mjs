#!/usr/bin/env node
// `npm run compose -- <command>`: compose/docker-compose.yml with podman-compose, on the images of
// `npm run images` (built first, idempotently; nothing is pulled).
//
//   up [--observability] [--no-build]
//                          builds what is missing (--no-build: uses the images present), starts every service, waits until the Temporal
//                          namespace exists and both HTTP gateways answer /health with 200
//   smoke [--messages N]   sends N messages (default 20) through both gateways with the demo
//                          organization, waits until each one is final and checks its DLRs
//   down                   stops and removes every container, volume and network of the project,
//                          then checks that nothing of it is left
//   status                 the project's containers and their state
//
// --observability adds compose/docker-compose.observability.yml (Prometheus from Debian's
// package; the Grafana part, compose/docker-compose.grafana.yml, needs an image that cannot be
// built here). Progress on stderr; figures of the last run in bench/results/compose-smoke.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePodman } from './images.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const PROJECT = 'sms-platform';
const BASE_FILE = join(root, 'compose', 'docker-compose.yml');
const OBSERVABILITY_FILE = join(root, 'compose', 'docker-compose.observability.yml');
const GATEWAYS = ['http://127.0.0.1:8080', 'http://127.0.0.1:8081'];
const log = (msg) => process.stderr.write(`[compose] ${msg}\n`);
const fail = (msg) => {
  log(`error: ${msg}`);
  process.exit(1);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const sh = (cmd, args, options = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });

const args = process.argv.slice(2);
const command = args.find((a) => !a.startsWith('--'));
const observability = args.includes('--observability');
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};

function composeArgs() {
  return ['-p', PROJECT, '-f', BASE_FILE, ...(observability ? ['-f', OBSERVABILITY_FILE] : [])];
}

function podmanCompose(sub, { quiet = false } = {}) {
  const r = sh('podman-compose', [...composeArgs(), ...sub], { stdio: ['ignore', quiet ? 'pipe' : 'inherit', quiet ? 'pipe' : 'inherit'] });
  return r.status === 0;
}

/** The project's containers: name, state and exit code (podman ps, label of podman-compose). */
export function projectContainers() {
  const r = sh('podman', ['ps', '-a', '--filter', `label=io.podman.compose.project=${PROJECT}`, '--format', '{{.Names}}\t{{.State}}\t{{.Status}}']);
  return r.stdout.split('\n').filter(Boolean).map((line) => {
    const [name, state, status] = line.split('\t');
    return { name, state, status };
  });
}

const projectVolumes = () => sh('podman', ['volume', 'ls', '--filter', `label=io.podman.compose.project=${PROJECT}`, '--format', '{{.Name}}']).stdout.split('\n').filter(Boolean);
const projectNetworks = () => sh('podman', ['network', 'ls', '--format', '{{.Name}}']).stdout.split('\n').filter((n) => n.startsWith(`${PROJECT}_`));

async function waitFor(what, check, timeoutMs) {
  const started = Date.now();
  let last = 0;
  while (Date.now() - started < timeoutMs) {
    if (await check()) {
      log(`${what}: ready after ${((Date.now() - started) / 1000).toFixed(0)} s`);
      return (Date.now() - started) / 1000;
    }
    if (Date.now() - last > 15000) {
      last = Date.now();
      const states = projectContainers().map((c) => `${c.name.replace(`${PROJECT}_`, '')}=${c.state}`).join(' ');
      log(`${what}: waiting (${Math.round((Date.now() - started) / 1000)} s) ${states}`);
    }
    await sleep(1000);
  }
  fail(`${what} not ready within ${timeoutMs / 1000} s; \`podman logs <container>\` shows why (npm run compose -- status)`);
  return 0;
}

async function healthy(url) {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

async function up() {
  const started = Date.now();
  ensurePodman({ compose: true });
  const images = ['nats', 'temporal', 'postgres', 'platform', ...(observability ? ['prometheus'] : [])];
  if (args.includes('--no-build')) {
    log('images: not rebuilt (--no-build): the ones present are used');
  } else {
    log(`images: npm run images -- ${images.join(' ')}`);
    if (sh(process.execPath, [join(root, 'scripts', 'images.mjs'), ...images], { stdio: 'inherit' }).status !== 0) fail('building the images failed (--no-build uses the images present)');
  }
  const imagesSeconds = (Date.now() - started) / 1000;
  const upStarted = Date.now();
  log(`podman-compose up -d (${observability ? 'with' : 'without'} Prometheus)`);
  if (!podmanCompose(['up', '-d', '--no-build'])) fail('podman-compose up failed (see above)');
  const namespace = await waitFor('Temporal namespace job', async () => {
    const job = projectContainers().find((c) => c.name === `${PROJECT}_temporal-create-namespace_1`);
    // podman 4.3 prints the status text ("Exited (0) 5 seconds ago") for both State and Status.
    const exited = /^Exited \((\d+)\)/i.exec(job?.status ?? '');
    if (exited && exited[1] !== '0') fail(`temporal-create-namespace failed: ${job.status} (podman logs ${job.name})`);
    return exited !== null;
  }, 300_000);
  const gateways = await waitFor('gateway-http 1 and 2 (/health 200)', async () => (await Promise.all(GATEWAYS.map(healthy))).every(Boolean), 300_000);
  const seconds = (Date.now() - upStarted) / 1000;
  log(`up in ${seconds.toFixed(0)} s (images ${imagesSeconds.toFixed(0)} s before): ${GATEWAYS.join(', ')}`);
  return { imagesSeconds, upSeconds: seconds, namespaceSeconds: namespace, gatewaysSeconds: gateways };
}

function demoCredentials() {
  for (const gateway of [1, 2]) {
    const r = sh('podman', ['exec', `${PROJECT}_gateway-http-${gateway}_1`, 'cat', '/data/demo.json']);
    if (r.status === 0) return JSON.parse(r.stdout);
  }
  return fail('no demo.json in either gateway-http container (DEMO_SEED=true on gateway-http seeds it on the first start)');
}

const FINAL = new Set(['delivered', 'failed', 'expired', 'canceled', 'rejected', 'error', 'unknown']);

async function smoke() {
  const count = option('messages', 20);
  for (const url of GATEWAYS) if (!(await healthy(url))) fail(`${url}/health does not answer 200: run \`npm run compose -- up\` first`);
  const demo = demoCredentials();
  const headers = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/json' };
  const started = Date.now();
  const ids = [];
  for (let i = 0; i < count; i += 1) {
    const base = `${GATEWAYS[i % GATEWAYS.length]}/transactional/v1`;
    const res = await fetch(`${base}/sms`, { method: 'POST', headers, body: JSON.stringify({ from: 'Compose', to: `+49151${String(12345000 + i)}`, text: `compose smoke ${i}` }) });
    const body = await res.json();
    if (res.status !== 201) fail(`POST ${base}/sms answered ${res.status}: ${JSON.stringify(body)}`);
    ids.push(body.entity.id);
  }
  log(`${count} messages accepted (201) through ${GATEWAYS.length} gateways in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const final = new Map();
  await waitFor(`${count} messages final`, async () => {
    for (const [i, id] of ids.entries()) {
      if (final.has(id)) continue;
      const res = await fetch(`${GATEWAYS[(i + 1) % GATEWAYS.length]}/transactional/v1/sms/${id}`, { headers });
      if (res.status !== 200) continue;
      const body = await res.json();
      if (FINAL.has(body.entity.status)) final.set(id, body.entity.status);
    }
    return final.size === ids.length;
  }, 300_000);
  const settled = (Date.now() - started) / 1000;
  // Every message's DLR history (ClickHouse, through the writer's chdb) ends with its final status.
  const missing = [];
  await waitFor('DLR history of every message', async () => {
    missing.length = 0;
    for (const id of ids) {
      const res = await fetch(`${GATEWAYS[0]}/transactional/v1/sms/${id}/dlrs`, { headers });
      const body = res.status === 200 ? await res.json() : undefined;
      const statuses = (body?.entities ?? []).map((d) => d.status);
      if (!statuses.includes(final.get(id))) missing.push(id);
    }
    return missing.length === 0;
  }, 120_000);
  const outcomes = [...final.values()].reduce((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
  log(`smoke passed: ${count} accepted, all final within ${settled.toFixed(1)} s (${JSON.stringify(outcomes)}), every final status in its DLR history`);
  return { messages: count, settledSeconds: settled, outcomes };
}

function down() {
  const started = Date.now();
  ensurePodman({ compose: true });
  const allFiles = ['-p', PROJECT, '-f', BASE_FILE, '-f', OBSERVABILITY_FILE];
  sh('podman-compose', [...allFiles, 'down', '-v', '-t', '15'], { stdio: ['ignore', 'ignore', 'inherit'] });
  // What podman-compose 1.0.3 may leave (containers of a service no longer in the file, volumes, the network).
  for (const c of projectContainers()) sh('podman', ['rm', '-f', '-v', c.name]);
  for (const v of projectVolumes()) sh('podman', ['volume', 'rm', '-f', v]);
  for (const n of projectNetworks()) sh('podman', ['network', 'rm', '-f', n]);
  const left = [...projectContainers().map((c) => `container ${c.name}`), ...projectVolumes().map((v) => `volume ${v}`), ...projectNetworks().map((n) => `network ${n}`)];
  if (left.length > 0) fail(`still there after down: ${left.join(', ')}`);
  const seconds = (Date.now() - started) / 1000;
  log(`down in ${seconds.toFixed(0)} s: no container, volume or network of ${PROJECT} is left`);
  return { downSeconds: seconds };
}

function record(part, figures) {
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `compose-${part}.json`), `${JSON.stringify({ at: new Date().toISOString(), observability, ...figures }, null, 2)}\n`);
}

async function main() {
  switch (command) {
    case 'up': record('up', await up()); break;
    case 'smoke': record('smoke', await smoke()); break;
    case 'down': record('down', down()); break;
    case 'status':
      for (const c of projectContainers()) process.stdout.write(`${c.name}\t${c.state}\t${c.status}\n`);
      break;
    default:
      fail('usage: npm run compose -- up [--observability] | smoke [--messages N] | down | status');
  }
}

await main();
