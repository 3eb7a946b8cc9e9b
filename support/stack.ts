// Starts one real stack for the test suites and the benchmarks: NATS JetStream and a Temporal
// server (testcontainers when a Docker engine answers, otherwise the local binaries in
// .tools/bin, infra/local-engines.ts), then the product itself as a child process (every role,
// embedded chdb) pointed at them. test/support/global-setup.ts starts it for the integration run.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../config';
import { freePort, startLocalEngines } from '../infra/local-engines';
import { createLogger } from '../infra/logger';
import { ensureBuilt, PRODUCT_NODE_FLAGS } from '../infra/paths';
import { sleep } from '../infra/supervisor';

const ROOT = join(__dirname, '..');

/** What the suites read from $STACK_FILE (stack() below). */
export interface StackInfo {
  readonly httpUrl: string;
  readonly natsUrl: string;
  readonly temporalAddress: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly dataDir: string;
  readonly productDataDir: string;
  readonly productEnv: Record<string, string | undefined>;
  /** Every /metrics of the stack, by process (TEST_TOPOLOGY=cluster); absent: the one process at httpUrl. */
  readonly metrics?: ReadonlyArray<{ readonly instance: string; readonly url: string }>;
}

async function dockerAnswers(): Promise<boolean> {
  if (process.env['TEST_ENGINES'] === 'local') return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch (err) {
    // TEST_ENGINES=containers (npm run test:containers): no silent fallback to the local binaries.
    if (process.env['TEST_ENGINES'] === 'containers') throw new Error(`TEST_ENGINES=containers but no container engine answers (DOCKER_HOST=${process.env['DOCKER_HOST'] ?? 'unset'}): ${String(err)}`);
    return false;
  }
}

// The engine images: built here by `npm run images` (scripts/images.mjs) from the binaries in
// .tools/bin, as nothing can be pulled on these machines; TEST_NATS_IMAGE / TEST_TEMPORAL_IMAGE
// name others (e.g. nats:2.12, temporalio/temporal:1.5.1 where pulling works).
const NATS_IMAGE = process.env['TEST_NATS_IMAGE'] ?? 'localhost/sms-nats:latest';
const TEMPORAL_IMAGE = process.env['TEST_TEMPORAL_IMAGE'] ?? 'localhost/sms-temporal-dev:latest';

interface Engines {
  natsUrl: string;
  temporalAddress: string;
  stop(): Promise<void>;
}

async function startContainerEngines(): Promise<Engines> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const nats = await new GenericContainer(NATS_IMAGE).withCommand(['-js']).withExposedPorts(4222).withWaitStrategy(Wait.forLogMessage(/Server is ready/)).start();
  const temporal = await new GenericContainer(TEMPORAL_IMAGE)
    .withCommand(['server', 'start-dev', '--ip', '0.0.0.0']).withExposedPorts(7233).withWaitStrategy(Wait.forListeningPorts()).start();
  return {
    natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    temporalAddress: `${temporal.getHost()}:${temporal.getMappedPort(7233)}`,
    stop: async () => { await temporal.stop(); await nats.stop(); },
  };
}

/** GET `url`/health answers 200 within `timeoutMs`, before `product` exits (else an Error with its `output`). */
export async function waitForHealth(url: string, product: { exitCode: number | null }, output: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (product.exitCode !== null) throw new Error(`the product exited with code ${product.exitCode} during start-up:\n${output.join('')}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch { /* not listening yet */ }
    await sleep(250);
  }
  throw new Error(`the product did not become healthy within ${timeoutMs / 1000} s:\n${output.join('')}`);
}

export interface RunningStack {
  readonly info: StackInfo;
  /** The product process (benchmarks read its CPU time from /proc). */
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/** Extra node flags for the product process (profiling: PRODUCT_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"). */
const productNodeFlags = (): string[] => (process.env['PRODUCT_NODE_FLAGS'] ?? '').split(' ').filter(Boolean);

/** How many times the product is started on fresh ports when one it was given was taken. */
const PORT_ATTEMPTS = 3;

interface StartedProduct {
  readonly product: ChildProcess;
  readonly productEnv: Record<string, string | undefined>;
  readonly httpUrl: string;
}

/**
 * The product (its `roles`, every one by default) on free ports, healthy. Ports are picked free,
 * then bound seconds later by the product: another process (a parallel suite's stack, an engine)
 * can take one in between, so a start that fails on a taken port is made again on new ports, up
 * to PORT_ATTEMPTS times (never when `env` names the ports). Any other failure kills it and throws.
 */
async function startProduct(engines: { readonly natsUrl: string; readonly temporalAddress: string }, productDir: string, env: Record<string, string>, roles: readonly string[], log: (line: string) => void): Promise<StartedProduct> {
  for (let attempt = 1; ; attempt++) {
    const httpPort = await freePort();
    const productEnv: Record<string, string | undefined> = {
      ...process.env,
      DATA_DIR: productDir,
      NATS_URL: engines.natsUrl,
      TEMPORAL_ADDRESS: engines.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      HTTP_PORT: String(httpPort),
      HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'warn',
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_BULK_PER_MINUTE: '100000',
      SIMULATOR_PORT: String(await freePort()),
      SMPP_PORT: String(await freePort()),
      SIMULATOR_LATENCY_MS: '30',
      // Short schedules so that expiry and webhook retries are observable within a test.
      MESSAGE_VALIDITY_SECONDS: '15',
      WEBHOOK_RETRY_INITIAL_MS: '1000',
      WEBHOOK_RETRY_MAX_MS: '4000',
      WEBHOOK_TIMEOUT_MS: '2000',
      // The suites' and benchmarks' webhook receivers listen on 127.0.0.1 over http.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      ...env,
    };
    const output: string[] = [];
    const product = spawn(process.execPath, [...PRODUCT_NODE_FLAGS, ...productNodeFlags(), ensureBuilt({ emitOnError: true }), ...roles.map((r) => `--role=${r}`)], { cwd: ROOT, env: productEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const remember = (chunk: Buffer): void => {
      output.push(chunk.toString('utf8'));
      if (output.length > 200) output.shift();
      if (process.env['TEST_LOG_LEVEL']) process.stderr.write(chunk);
    };
    product.stdout.on('data', remember);
    product.stderr.on('data', remember);
    const httpUrl = `http://127.0.0.1:${httpPort}`;
    try {
      await waitForHealth(httpUrl, product, output, 120_000);
      return { product, productEnv, httpUrl };
    } catch (err) {
      product.kill('SIGKILL');
      const portTaken = product.exitCode !== null && output.join('').includes('EADDRINUSE');
      if (!portTaken || attempt >= PORT_ATTEMPTS || env['HTTP_PORT'] || env['SMPP_PORT'] || env['SIMULATOR_PORT']) throw err;
      log(`[test stack] a port was taken before the product bound it; starting again on new ports (${attempt + 1} of ${PORT_ATTEMPTS})\n`);
    }
  }
}

/**
 * Starts engines (testcontainers or local binaries) and the product (every role, embedded chdb)
 * on free ports; `env` adds to or overrides the product's environment. Used by the jest global
 * setup and by the benchmarks.
 */
export async function startStack(env: Record<string, string> = {}, log: (line: string) => void = (l) => process.stderr.write(l), roles: readonly string[] = []): Promise<RunningStack> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'sms-platform-test-'));
  const containers = await dockerAnswers();
  log(`\n[test stack] engines from ${containers ? 'testcontainers' : 'local binaries (.tools/bin) and chdb'}; data in ${dir}\n`);
  // The Temporal dev server at the product's BACKGROUND_NICE, as `npm start` runs it (roles/engines.ts).
  const { backgroundNice } = loadConfig({ BACKGROUND_NICE: env['BACKGROUND_NICE'] ?? process.env['BACKGROUND_NICE'] });
  const engines = containers ? await startContainerEngines() : await startLocalEngines(dir, createLogger(process.env['TEST_LOG_LEVEL'] ?? 'warn', { component: 'test-stack' }), { backgroundNice });

  const productDir = join(dir, 'product');
  const { product, productEnv, httpUrl } = await startProduct(engines, productDir, env, roles, log).catch(async (err: unknown) => {
    await engines.stop();
    removeData(dir, log);
    throw err;
  });
  const info: StackInfo = { httpUrl, natsUrl: engines.natsUrl, temporalAddress: engines.temporalAddress, namespace: 'default', taskQueue: 'sms', dataDir: dir, productDataDir: productDir, productEnv };
  log(`[test stack] ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${httpUrl}\n`);
  return {
    info,
    pid: product.pid,
    stop: async () => {
      if (product.exitCode === null) {
        const exited = new Promise<void>((resolve) => product.once('exit', () => resolve()));
        product.kill('SIGTERM');
        const timer = setTimeout(() => product.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await engines.stop();
      removeData(dir, log);
    },
  };
}

/**
 * A stopped stack's data (JetStream files, the Temporal database, the embedded ClickHouse) is
 * removed: a benchmark run leaves 1-2 GB behind otherwise. KEEP_TEST_DATA=1 keeps it to look at.
 */
export function removeData(dir: string, log: (line: string) => void): void {
  if (process.env['KEEP_TEST_DATA'] === '1') {
    log(`[test stack] data kept in ${dir} (KEEP_TEST_DATA=1)\n`);
    return;
  }
  rmSync(dir, { recursive: true, force: true });
}

// ---- reaching the stack of the integration run (the suites; a benchmark that sets $STACK_FILE) ----

export function stack(): StackInfo {
  const file = process.env['STACK_FILE'];
  if (!file) throw new Error('STACK_FILE is not set: integration suites run under jest with test/support/global-setup.ts');
  return JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
}

const run = promisify(execFile);

/** Runs the admin CLI exactly as an operator would (`npm run admin -- ...`), with --json, against the suites' stack. */
export async function admin<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  return adminAt<T>(stack(), ...args);
}

/** `admin` against a given stack (a benchmark's own). */
export async function adminAt<T = Record<string, unknown>>(at: Pick<StackInfo, 'natsUrl' | 'temporalAddress'>, ...args: string[]): Promise<T> {
  const { stdout } = await run('npm', ['run', '-s', 'admin', '--', ...args, '--json'], {
    cwd: ROOT,
    // As the test stack: webhook receivers on 127.0.0.1 over http (WEBHOOK_ALLOW_PRIVATE_TARGETS).
    env: { ...process.env, NATS_URL: at.natsUrl, TEMPORAL_ADDRESS: at.temporalAddress, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  return JSON.parse(stdout) as T;
}

export async function api(path: string, init: { method?: string; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Headers; body: unknown }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers['authorization'] = `Bearer ${init.token}`;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const res = await fetch(`${stack().httpUrl}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* keep text */ }
  return { status: res.status, headers: res.headers, body: parsed };
}
