#!/usr/bin/env node
// `npm run test:containers`: the test suites with their engines in containers (podman, the images
// of `npm run images`, nothing pulled).
//
//   npm run test:containers                 test/containers (the images themselves) and the whole
//                                           integration project with NATS and the Temporal dev
//                                           server as containers (test/support/global-setup.ts)
//   npm run test:containers -- --smoke      test/containers only: what .ci/run runs (a few minutes)
//   npm run test:containers -- <jest args>  e.g. a path: test/integration/sms-api.test.ts
//
// Builds the images it needs (idempotent), serves podman's Docker-compatible API on a socket of
// its own (.tools/podman/podman.sock; never /var/run/docker.sock, so other runs keep their local
// engines) unless one already answers there, and stops that service again if it started it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const socketDir = join(root, '.tools', 'podman');
export const SOCKET = join(socketDir, 'podman.sock');
const log = (msg) => process.stderr.write(`[test:containers] ${msg}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the Docker-compatible API answers on the socket (GET /_ping → 200). */
export function socketAnswers(socket = SOCKET) {
  return new Promise((resolve) => {
    if (!existsSync(socket)) return resolve(false);
    const req = request({ socketPath: socket, path: '/_ping', timeout: 2000 }, (res) => { res.resume(); resolve(res.statusCode === 200); });
    req.on('error', () => resolve(false));
    req.on('timeout', () => { req.destroy(); resolve(false); });
    req.end();
  });
}

/** Starts `podman system service` on SOCKET unless it answers; returns a stop function (a no-op for a service it did not start). */
export async function ensureSocket() {
  if (await socketAnswers()) {
    log(`podman API: answering on ${SOCKET}`);
    return async () => {};
  }
  mkdirSync(socketDir, { recursive: true });
  rmSync(SOCKET, { force: true });
  const service = spawn('podman', ['system', 'service', '--time=0', `unix://${SOCKET}`], { stdio: 'ignore', detached: false });
  const deadline = Date.now() + 20_000;
  while (!(await socketAnswers())) {
    if (service.exitCode !== null || Date.now() > deadline) throw new Error(`podman system service did not answer on ${SOCKET}`);
    await sleep(200);
  }
  log(`podman API: started on ${SOCKET} (pid ${service.pid})`);
  return async () => {
    if (service.exitCode !== null) return;
    const exited = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGTERM');
    await exited;
    rmSync(SOCKET, { force: true });
  };
}

export const containerEnv = () => ({
  DOCKER_HOST: `unix://${SOCKET}`,
  TESTCONTAINERS_RYUK_DISABLED: 'true',
  TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
  TEST_ENGINES: 'containers',
  TEST_CONTAINERS: '1',
});

async function main() {
  const args = process.argv.slice(2);
  const smoke = args.includes('--smoke');
  const jestArgs = args.filter((a) => a !== '--smoke');
  const started = Date.now();
  if (spawnSync(process.execPath, [join(root, 'scripts', 'bootstrap.mjs')], { stdio: 'inherit' }).status !== 0) process.exit(1);
  if (spawnSync(process.execPath, [join(root, 'scripts', 'images.mjs'), 'nats', 'temporal-dev', 'platform'], { stdio: 'inherit' }).status !== 0) process.exit(1);
  const stop = await ensureSocket();
  const projects = smoke ? ['containers'] : ['containers', 'integration'];
  log(`jest --selectProjects ${projects.join(' ')} ${jestArgs.join(' ')}`);
  const jest = spawn(process.execPath, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...jestArgs, '--selectProjects', ...projects], { cwd: root, stdio: 'inherit', env: { ...process.env, ...containerEnv() } });
  const code = await new Promise((resolve) => jest.on('exit', (c) => resolve(c ?? 1)));
  await stop();
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s (jest exit code ${code})`);
  process.exit(code);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
