// Container figures (npm run bench:containers):
//  - build: each image of `npm run images` built again from scratch (`--force`: every layer,
//    podman build --no-cache), as a fresh machine pays it; the base image (debootstrap) only
//    with --base, as it takes minutes and rarely changes;
//  - start: each image started with `podman run` until it is ready (nats-server: /healthz 200;
//    the Temporal dev server: its port answers; PostgreSQL: pg_isready; the product alone, the
//    embedded stack: /health 200), median of --runs, the container removed after each run.
// Figures printed and written to bench/results/containers.json.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { loadAverage, writeResult } from './support/results';
import { sleep } from '../infra/supervisor';
import { freePort } from '../infra/local-engines';

const { values } = benchArgs({ options: { runs: { type: 'string', default: '3' }, base: { type: 'boolean', default: false }, 'skip-build': { type: 'boolean', default: false }, images: { type: 'string', default: 'nats,temporal-dev,temporal,postgres,prometheus,platform' }, out: { type: 'string', default: 'containers.json' } } });
const ROOT = join(__dirname, '..');
const say = (line: string): void => { process.stderr.write(`[bench:containers] ${line}\n`); };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const images = values.images.split(',').filter(Boolean);

/** Seconds of one `npm run images -- --force <name>` (the build itself, as scripts/images.mjs reports it). */
function buildSeconds(name: string): number {
  const started = Date.now();
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'images.mjs'), '--force', name], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
  process.stderr.write(result.stderr);
  if (result.status !== 0) throw new Error(`building ${name} failed`);
  const reported = [...result.stderr.matchAll(/built in (\d+) s/g)].map((m) => Number(m[1]));
  return reported.at(-1) ?? (Date.now() - started) / 1000;
}

interface StartSpec { image: string; port: number; args: string[]; ready: (name: string, port: number) => Promise<boolean> }

const httpOk = async (url: string): Promise<boolean> => {
  try { return (await fetch(url, { signal: AbortSignal.timeout(2000) })).status === 200; } catch { return false; }
};
const execOk = (name: string, cmd: string[]): boolean => spawnSync('podman', ['exec', name, ...cmd], { stdio: 'ignore' }).status === 0;

const STARTS: Record<string, StartSpec> = {
  nats: { image: 'localhost/sms-nats:latest', port: 8222, args: [], ready: (_n, p) => httpOk(`http://127.0.0.1:${p}/healthz`) },
  'temporal-dev': { image: 'localhost/sms-temporal-dev:latest', port: 7233, args: [], ready: async (n) => execOk(n, ['temporal', 'operator', 'namespace', 'describe', '--namespace', 'default']) },
  postgres: { image: 'localhost/sms-postgres:latest', port: 5432, args: ['-e', 'POSTGRES_USER=temporal', '-e', 'POSTGRES_PASSWORD=temporal'], ready: async (n) => execOk(n, ['pg_isready', '-h', '127.0.0.1', '-d', 'postgres']) },
  platform: { image: 'localhost/sms-platform:latest', port: 8080, args: [], ready: (_n, p) => httpOk(`http://127.0.0.1:${p}/health`) },
};

async function startSeconds(key: string, run: number): Promise<number> {
  const spec = STARTS[key] as StartSpec;
  const name = `sms-bench-${key}-${process.pid}-${run}`;
  const hostPort = await freePort();
  const started = Date.now();
  execFileSync('podman', ['run', '-d', '--name', name, '-p', `127.0.0.1:${hostPort}:${spec.port}`, ...spec.args, spec.image], { stdio: 'ignore' });
  try {
    while (!(await spec.ready(name, hostPort))) {
      if (Date.now() - started > 300_000) throw new Error(`${spec.image} not ready within 300 s`);
      await sleep(100);
    }
    return (Date.now() - started) / 1000;
  } finally {
    spawnSync('podman', ['rm', '-f', '-v', name], { stdio: 'ignore' });
  }
}

async function main(): Promise<void> {
  const runs = Number(values.runs);
  const at = new Date().toISOString();
  const load = loadAverage();
  const build: Record<string, number> = {};
  if (!values['skip-build']) {
    if (values.base) {
      const started = Date.now();
      execFileSync('podman', ['rmi', '-f', 'localhost/sms-base:bookworm'], { stdio: 'ignore' });
      execFileSync(process.execPath, [join(ROOT, 'scripts', 'images.mjs'), 'nats'], { cwd: ROOT, stdio: 'inherit' });
      build['base (debootstrap + import) and nats'] = (Date.now() - started) / 1000;
    }
    for (const name of images) {
      say(`building ${name} from scratch`);
      build[name] = buildSeconds(name);
    }
  }
  const start: Record<string, { median: number; runs: number[] }> = {};
  for (const key of images.filter((i) => i in STARTS)) {
    const samples: number[] = [];
    for (let run = 0; run < runs; run += 1) samples.push(await startSeconds(key, run));
    start[key] = { median: median(samples), runs: samples };
    say(`${key}: ready after ${samples.map((s) => s.toFixed(1)).join(', ')} s`);
  }
  const sizes = Object.fromEntries(images.map((i) => [i, spawnSync('podman', ['image', 'inspect', '--format', '{{.Size}}', i === 'prometheus' ? 'localhost/sms-prometheus:latest' : `localhost/sms-${i}:latest`], { encoding: 'utf8' }).stdout.trim()]).map(([k, v]) => [k, Math.round(Number(v) / 1e6)]));
  const file = writeResult(values.out, { at, machine: { cpus: cpus().length, loadAverageAtStart: load }, buildSecondsFromScratch: build, startSecondsToReady: start, imageSizeMB: sizes });
  console.log('\nimage          build from scratch   start to ready (median)   size');
  for (const i of images) console.log(`${i.padEnd(14)} ${(build[i] === undefined ? '-' : `${build[i].toFixed(0)} s`).padStart(18)}   ${(start[i] ? `${start[i].median.toFixed(1)} s` : '-').padStart(23)}   ${String(sizes[i] ?? '-').padStart(5)} MB`);
  for (const [k, v] of Object.entries(build).filter(([k]) => !images.includes(k))) console.log(`${k}: ${v.toFixed(0)} s`);
  console.log(`\nload average at start ${load}; written to ${file}`);
}

main().catch((err: unknown) => { console.error(err); process.exit(1); });
