// Brings the topology up and down (`npm run topology -- up|down|status`), and starts or kills
// one process of it by name (`start <name>`, `kill <name>`: what bench/reliability.ts
// --topology cluster does for its faults). Idempotent: `up` starts only what is not running.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startNats, startPostgres, startTemporal, stopPostgres, stopTemporal } from './engines';
import { alive, launch, LOGS, pidOf, portOpen, say, stop, trackedNames, waitFor } from './processes';
import { HTTP_URLS, NATS_NODES, NATS_URL, PORTS, productProcesses, ROOT, STATE, TEMPORAL_ADDRESS, type ProductProcess } from './plan';
import { ensureBuilt } from '../../infra/paths';
import { serveSecret } from '../../infra/clickhouse-remote';

/** Product settings for every role process, from $TOPOLOGY_ENV (a JSON object), e.g. short schedules for tests. */
export function productOverrides(): Record<string, string> {
  const text = process.env['TOPOLOGY_ENV'];
  // The writer serves its chdb to the others on loopback; the link takes the deployment's secret
  // (infra/clickhouse-remote.ts), made once in the topology's state and handed to every process.
  const { secret } = serveSecret('', STATE);
  return { CLICKHOUSE_PASSWORD: secret, ...(text ? (JSON.parse(text) as Record<string, string>) : {}) };
}

const logSize = (name: string): number => (existsSync(join(LOGS, `${name}.log`)) ? statSync(join(LOGS, `${name}.log`)).size : 0);

async function ready(p: ProductProcess, logOffset: number): Promise<void> {
  if (p.port !== undefined) {
    const port = p.port;
    const check = p.roles.includes('gateway-http')
      ? async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 200
      : () => portOpen(port);
    await waitFor(p.name, check, 180_000, p.name);
    return;
  }
  // Outbound-only roles print "sms-platform ready in" (main.ts, whatever LOG_LEVEL) once every role runs.
  const log = join(LOGS, `${p.name}.log`);
  await waitFor(p.name, async () => /sms-platform ready in/.test(readFileSync(log).subarray(logOffset).toString('utf8')), 180_000, p.name);
}

export async function startProduct(name?: string): Promise<void> {
  // One build check for every process: each runs the same dist/ (rebuilt between two of them, it would differ).
  const entry = ensureBuilt();
  for (const p of productProcesses(productOverrides())) {
    if (name !== undefined && p.name !== name) continue;
    const offset = logSize(p.name);
    const { started, pid } = launch({
      name: p.name, cwd: ROOT, env: p.env,
      command: process.execPath, args: [entry, ...p.roles.map((r) => `--role=${r}`), ...p.args],
    });
    if (started) await ready(p, offset);
    say(`${p.name}: ${started ? 'started' : 'running'} (pid ${pid}, roles ${p.roles.join('+')}${p.port ? `, port ${p.port}` : ''})`);
  }
}

export async function up(): Promise<void> {
  const t0 = Date.now();
  say(`state in ${STATE}`);
  await startNats();
  await startPostgres();
  await startTemporal();
  await startProduct();
  say(`up in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  say(`  HTTP     ${HTTP_URLS.join('  ')}`);
  say(`  SMPP     127.0.0.1:${PORTS.smpp}`);
  say(`  NATS     ${NATS_URL}`);
  say(`  Temporal ${TEMPORAL_ADDRESS}`);
  say(`  demo     ${join(STATE, 'product', 'gateway-http-1', 'demo.json')}`);
}

export async function down(): Promise<void> {
  const product = productProcesses().map((p) => p.name).reverse();
  for (const name of product) if (await stop(name)) say(`${name}: stopped`);
  if (await stopTemporal()) say('temporal-server: stopped');
  if (stopPostgres()) say('PostgreSQL: stopped');
  for (const node of [...NATS_NODES].reverse()) if (await stop(node.name)) say(`${node.name}: stopped`);
  for (const name of trackedNames()) if (await stop(name)) say(`${name}: stopped`);
  say('down: no topology process left');
}

export async function status(): Promise<boolean> {
  const names = [...NATS_NODES.map((n) => n.name), 'temporal-server', ...productProcesses().map((p) => p.name)];
  let all = true;
  for (const name of names) {
    const pid = pidOf(name);
    all &&= pid !== undefined;
    say(`${name.padEnd(16)} ${pid !== undefined ? `up (pid ${pid})` : 'down'}`);
  }
  const pg = await portOpen(PORTS.postgres);
  all &&= pg;
  say(`${'postgresql'.padEnd(16)} ${pg ? `up (127.0.0.1:${PORTS.postgres})` : 'down'}`);
  return all;
}

/** kill -9 one process of the topology (fault injection). */
export async function kill(name: string): Promise<void> {
  const pid = pidOf(name);
  if (pid === undefined) throw new Error(`${name} is not running`);
  await stop(name, 'SIGKILL');
  say(`${name}: killed (SIGKILL, pid ${pid}, alive afterwards: ${alive(pid)})`);
}

/** Starts one process again (or all missing ones): NATS nodes, the Temporal server, or a product process. */
export async function start(name: string): Promise<void> {
  if (name.startsWith('nats-')) await startNats();
  else if (name === 'temporal-server') await startTemporal();
  else await startProduct(name);
}

async function main(): Promise<void> {
  const [command, name] = process.argv.slice(2);
  try {
    if (command === 'up') await up();
    else if (command === 'down') await down();
    else if (command === 'status') process.exitCode = (await status()) ? 0 : 3;
    else if (command === 'kill' && name) await kill(name);
    else if (command === 'start' && name) await start(name);
    else {
      process.stderr.write('usage: npm run topology -- up | down | status | kill <name> | start <name>\n');
      process.exitCode = 2;
    }
  } catch (err) {
    say(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
