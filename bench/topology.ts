// Throughput of the scale-out topology (scripts/topology) beside the embedded one-process stack,
// in the same run and with the same load generator, with the CPU each component spends per
// message (from /proc/<pid>/stat of every process of the stack, engines included).
//   accept:    POST /sms for --seconds (autocannon; on the topology split over both gateways)
//   lifecycle: --messages through POST /sms/bulk until every final DLR reached the webhook
// Usage: npm run bench:topology [-- --messages 2000 --seconds 10 --only embedded,cluster]
// Writes bench/results/topology.json.
import autocannon from 'autocannon';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { benchArgs } from './cli-args';
import { sleep } from '../infra/supervisor';
import { HTTP_URLS, NATS_URL, productProcesses, TOPOLOGY } from '../scripts/topology/plan';
import { pidOf, stop } from '../scripts/topology/processes';
import { down, startProduct, up } from '../scripts/topology/topology';
import { startStack } from '../support/stack';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { processCpuMs } from './support/cpu';
import { createTenantAt } from './support/tenant';
import { writeResult } from './support/results';

const { values } = benchArgs({ options: { messages: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '10' }, only: { type: 'string', default: 'embedded,cluster' } } });
const MESSAGES = Number(values.messages);
const SECONDS = Number(values.seconds);
const say = (line: string): void => { process.stderr.write(`[bench:topology ${new Date().toISOString().slice(11, 19)}] ${line}\n`); };
const SETTINGS = { LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BULK_PER_MINUTE: '1000000000', SIMULATOR_LATENCY_MS: '0', MESSAGE_VALIDITY_SECONDS: '172800' };

type Components = Record<string, number[]>;

/** Every process on the machine whose command line contains `needle`, with its children (PostgreSQL backends). */
function pidsMatching(needle: string): number[] {
  const all = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  const parent = new Map<number, number>();
  const hits: number[] = [];
  for (const pid of all) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) hits.push(pid);
      parent.set(pid, Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]));
    } catch { /* exited */ }
  }
  const children = all.filter((pid) => hits.includes(parent.get(pid) ?? -1));
  return [...new Set([...hits, ...children])];
}

const cpuOf = (components: Components): Record<string, number> =>
  Object.fromEntries(Object.entries(components).map(([name, pids]) => [name, pids.reduce((s, pid) => s + (processCpuMs(pid) ?? 0), 0)]));

const diff = (a: Record<string, number>, b: Record<string, number>, per: number): Record<string, number> =>
  Object.fromEntries(Object.keys(b).map((k) => [k, Math.round(((b[k] ?? 0) - (a[k] ?? 0)) / per * 1000) / 1000]));

interface StackFigures {
  readonly acceptPerSecond: number;
  readonly acceptCpuMsPerRequest: Record<string, number>;
  readonly lifecycleMessagesPerSecond: number;
  readonly lifecycleCpuMsPerMessage: Record<string, number>;
}

async function measureStack(urls: readonly string[], natsUrl: string, replicas: number, components: () => Components): Promise<StackFigures> {
  const receiver: WebhookReceiver = await startWebhookReceiver();
  const tenant = await createTenantAt(natsUrl, urls[0] as string, receiver.url, replicas);
  const headers = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
  const one = JSON.stringify({ from: 'Bench', to: '+4915112345600', text: 'accept bench' });
  const c2 = cpuOf(components());
  const t0 = Date.now();
  let next = 0;
  const bulks = Math.ceil(MESSAGES / 100);
  await Promise.all(Array.from({ length: 4 }, async (_, client) => {
    for (let b = next++; b < bulks; b = next++) {
      const items = Array.from({ length: Math.min(100, MESSAGES - b * 100) }, (_, i) => ({ from: 'Bench', to: `+4915112${String(b).padStart(4, '0')}${String(i % 80).padStart(2, '0')}`, text: `lifecycle ${b}/${i}` }));
      const res = await fetch(`${urls[(b + client) % urls.length] as string}/transactional/v1/sms/bulk`, { method: 'POST', headers, body: JSON.stringify(items) });
      if (res.status !== 201) throw new Error(`bulk answered ${res.status}`);
    }
  }));
  await receiver.waitFor((all) => new Set(all.filter((r) => r.body['status'] === 'delivered').map((r) => r.body['id'])).size >= MESSAGES, 900_000);
  const seconds = (Date.now() - t0) / 1000;
  await sleep(1000);
  const c3 = cpuOf(components());
  say(`  lifecycle: ${MESSAGES} messages to their final DLR in ${seconds.toFixed(1)} s (${(MESSAGES / seconds).toFixed(0)}/s)`);
  // accept (after the lifecycle: its backlog is not waited for; workers work on it meanwhile).
  const c0 = cpuOf(components());
  const results = await Promise.all(urls.map((url) => autocannon({ url: `${url}/transactional/v1/sms`, method: 'POST', headers, body: one, connections: Math.round(32 / urls.length), duration: SECONDS })));
  const c1 = cpuOf(components());
  const requests = results.reduce((s, r) => s + r.requests.total, 0);
  const acceptPerSecond = results.reduce((s, r) => s + r.requests.average, 0);
  say(`  accept: ${acceptPerSecond.toFixed(0)} POST /sms per s (${requests} requests, non-2xx ${results.reduce((s, r) => s + r.non2xx, 0)})`);
  await receiver.close();
  return { acceptPerSecond, acceptCpuMsPerRequest: diff(c0, c1, requests), lifecycleMessagesPerSecond: MESSAGES / seconds, lifecycleCpuMsPerMessage: diff(c2, c3, MESSAGES) };
}

async function embedded(): Promise<StackFigures> {
  say('embedded stack (nats-server, Temporal dev server, the product as `npm start` runs it: three processes, chdb in the gateways\' one)');
  const stack = await startStack(SETTINGS, (l) => process.stderr.write(l));
  try {
    const components = (): Components => ({
      'nats-server': pidsMatching(`${stack.info.dataDir}/nats`),
      'temporal (dev server)': pidsMatching('start-dev').filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(stack.info.dataDir)),
      'product (all roles)': stack.pid === undefined ? [] : [stack.pid],
    });
    return await measureStack([stack.info.httpUrl], stack.info.natsUrl, 1, components);
  } finally {
    await stack.stop();
  }
}

async function cluster(): Promise<StackFigures> {
  say(`scale-out topology (3 nats-servers R${TOPOLOGY.natsReplicas}, Temporal server on PostgreSQL with ${TOPOLOGY.historyShards} shards, roles as processes)`);
  process.env['TOPOLOGY_ENV'] = JSON.stringify(SETTINGS);
  await up();
  for (const p of [...productProcesses()].reverse()) await stop(p.name);
  await startProduct();
  const named = (...names: string[]): number[] => names.flatMap((n) => { const pid = pidOf(n); return pid === undefined ? [] : [pid]; });
  const components = (): Components => ({
    'nats-server ×3': named('nats-1', 'nats-2', 'nats-3'),
    'temporal-server': named('temporal-server'),
    postgresql: pidsMatching('data/topology/postgres'),
    'gateway-http ×2': named('gateway-http-1', 'gateway-http-2'),
    'worker ×2': named('worker-1', 'worker-2'),
    carrier: named('carrier'),
    simulator: named('simulator'),
    'writer (chdb)': named('writer'),
  });
  try {
    return await measureStack(HTTP_URLS, NATS_URL, TOPOLOGY.natsReplicas, components);
  } finally {
    // Measured, the topology goes: sixteen idle processes would skew whatever runs next.
    await down();
  }
}

async function main(): Promise<void> {
  const only = new Set(values.only.split(','));
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  const results: Record<string, StackFigures> = {};
  if (only.has('embedded')) results['embedded'] = await embedded();
  if (only.has('cluster')) results['cluster'] = await cluster();
  const out = { at: new Date().toISOString(), loadBefore: load, loadAfter: loadavg().map((l) => l.toFixed(2)).join(' '), messages: MESSAGES, acceptSeconds: SECONDS, conditions: '2 shared cores, load generator and webhook receiver in this process; SIMULATOR_LATENCY_MS=0', results };
  writeResult('topology.json', out);
  for (const [name, r] of Object.entries(results)) {
    process.stdout.write(`\n${name}: accept ${r.acceptPerSecond.toFixed(0)} req/s, lifecycle ${r.lifecycleMessagesPerSecond.toFixed(0)} msg/s\n  CPU ms per accepted request: ${JSON.stringify(r.acceptCpuMsPerRequest)}\n  CPU ms per message (lifecycle): ${JSON.stringify(r.lifecycleCpuMsPerMessage)}\n`);
  }
  process.stdout.write(`load average before ${out.loadBefore}, after ${out.loadAfter}; written to bench/results/topology.json\n`);
  process.exit(0);
}

main().catch((err: unknown) => { process.stderr.write(`bench:topology failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
