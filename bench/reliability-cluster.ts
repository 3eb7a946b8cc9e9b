// `npm run reliability -- --topology cluster`: the faults of the scale-out topology
// (scripts/topology), one phase each. In every phase clients send bulks through both HTTP
// gateways (a failed request is sent again, same clientIds, on the other gateway) while one
// process is killed with SIGKILL and brought back; then every message accepted with a 201 must
// reach a final status and each of its recorded transitions must reach the webhook.
// Prints lost / duplicated / missing per fault; writes bench/results/reliability-cluster.json.
import { sleep } from '../infra/supervisor';
import { HTTP_URLS, NATS_URL, PORTS } from '../scripts/topology/plan';
import { kill, start, startProduct, up } from '../scripts/topology/topology';
import { stop as stopProcess } from '../scripts/topology/processes';
import { productProcesses } from '../scripts/topology/plan';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { createTenantAt } from './support/tenant';
import { writeResult } from './support/results';

const say = (line: string): void => { process.stderr.write(`[reliability cluster ${new Date().toISOString().slice(11, 19)}] ${line}\n`); };
const FINAL = ['delivered', 'failed', 'expired', 'canceled', 'rejected', 'error', 'unknown'];

/** Product settings of the run: a fast simulator, no rate-limit ceiling, short webhook retries. */
export const RELIABILITY_ENV = {
  SIMULATOR_LATENCY_MS: '20', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_BULK_PER_MINUTE: '100000000', WEBHOOK_RETRY_MAX_MS: '5000',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};

interface Fault {
  readonly name: string;
  readonly target: () => Promise<string>;
  /** How long the process stays down (ms). */
  readonly downMs: number;
}

/** The JetStream meta leader: killing it is the harder case (a new leader is elected). */
async function natsMetaLeader(): Promise<string> {
  for (const port of PORTS.natsMonitor) {
    try {
      const jsz = (await (await fetch(`http://127.0.0.1:${port}/jsz`)).json()) as { meta_cluster?: { leader?: string } };
      if (jsz.meta_cluster?.leader) return jsz.meta_cluster.leader;
    } catch { /* node down: ask the next */ }
  }
  return 'nats-1';
}

const FAULTS: readonly Fault[] = [
  { name: 'kill -9 one NATS node (the JetStream meta leader), then restart it', target: natsMetaLeader, downMs: 8000 },
  { name: 'kill -9 the Temporal server, then restart it', target: () => Promise.resolve('temporal-server'), downMs: 8000 },
  { name: 'kill -9 one of two workers (back after 15 s)', target: () => Promise.resolve('worker-1'), downMs: 15000 },
  { name: 'kill -9 one of two HTTP gateways (clients retry on the other)', target: () => Promise.resolve('gateway-http-1'), downMs: 8000 },
];

interface PhaseResult {
  readonly fault: string;
  readonly killed: string;
  readonly accepted: number;
  readonly lost: number;
  readonly duplicatedDlrs: number;
  readonly missingTransitions: number;
  readonly requestRetries: number;
  readonly sendSeconds: number;
  readonly settleSeconds: number;
  readonly examples: string[];
}

/** Bulks of BULK messages, paced over SEND_SECONDS so that the fault (at 3 s) hits requests in flight. */
const BULK = 10;
const SEND_SECONDS = 15;
const SENDERS = 4;

async function send(phase: number, total: number, token: string, accepted: Map<string, string>): Promise<number> {
  const bulks = Math.ceil(total / BULK);
  const pauseMs = (SEND_SECONDS * 1000 * SENDERS) / bulks;
  let next = 0;
  let retries = 0;
  const refused: string[] = [];
  const sender = async (client: number): Promise<void> => {
    for (;;) {
      const b = next++;
      if (b >= bulks) return;
      const items = Array.from({ length: Math.min(BULK, total - b * BULK) }, (_, i) => ({
        from: 'Reliable', to: `+491511${phase}${String(b).padStart(4, '0')}${String(i % 80).padStart(2, '0')}`, text: `cluster ${phase}/${b}/${i}`, clientId: `c${phase}-${b}-${i}`,
      }));
      // Each client starts on its own gateway and moves to the other one when a request fails.
      for (let attempt = client; ; attempt++) {
        const base = HTTP_URLS[attempt % HTTP_URLS.length] as string;
        try {
          const res = await fetch(`${base}/transactional/v1/sms/bulk`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(items), signal: AbortSignal.timeout(20000) });
          if (res.status === 201) {
            const body = (await res.json()) as { entities: Array<{ id: string; clientId: string }> };
            for (const e of body.entities) accepted.set(e.clientId, e.id);
            if (body.entities.length !== items.length) refused.push(`bulk ${b}: ${items.length - body.entities.length} items refused: ${JSON.stringify(body).slice(0, 300)}`);
            break;
          }
        } catch { /* gateway or an engine down: the other gateway */ }
        retries += 1;
        await sleep(300);
      }
      await sleep(pauseMs);
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, (_, i) => sender(i)));
  // A refused item is a broken run (bad destinations), not a fault result.
  if (refused.length > 0) throw new Error(refused.slice(0, 3).join('\n'));
  return retries;
}

async function audit(ids: readonly string[], token: string, receiver: WebhookReceiver): Promise<{ lost: number; duplicated: number; missing: number; examples: string[] }> {
  const byId = new Map<string, string[]>();
  for (const r of receiver.received) if (r.answered === 200) byId.set(String(r.body['id']), [...(byId.get(String(r.body['id'])) ?? []), String(r.body['status'])]);
  const headers = { authorization: `Bearer ${token}` };
  let lost = 0;
  let duplicated = 0;
  let missing = 0;
  const examples: string[] = [];
  for (const [n, id] of ids.entries()) {
    const base = HTTP_URLS[n % HTTP_URLS.length] as string;
    const statuses = byId.get(id) ?? [];
    const current = (await (await fetch(`${base}/transactional/v1/sms/${id}`, { headers })).json()) as { entity?: { status: string } };
    const recorded = ((await (await fetch(`${base}/transactional/v1/sms/${id}/dlrs`, { headers })).json()) as { entities?: Array<{ status: string }> }).entities ?? [];
    if (!FINAL.includes(current.entity?.status ?? '') || !statuses.some((s) => FINAL.includes(s))) {
      lost += 1;
      if (examples.length < 5) examples.push(`lost ${id}: status ${current.entity?.status ?? 'none'}, DLRs ${statuses.join('>') || 'none'}`);
    }
    const gaps = recorded.map((t) => t.status).filter((s) => !statuses.includes(s));
    missing += gaps.length;
    if (gaps.length > 0 && examples.length < 5) examples.push(`missing ${id}: recorded ${recorded.map((t) => t.status).join('>')}, received ${statuses.join('>')}`);
    duplicated += statuses.length - new Set(statuses).size;
  }
  return { lost, duplicated, missing, examples };
}

async function settle(ids: readonly string[], receiver: WebhookReceiver, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const finals = new Set(receiver.received.filter((r) => r.answered === 200 && FINAL.includes(String(r.body['status']))).map((r) => String(r.body['id'])));
    const done = ids.filter((id) => finals.has(id)).length;
    if (done === ids.length || Date.now() > deadline) return;
    say(`  ${done}/${ids.length} messages have their final DLR`);
    await sleep(5000);
  }
}

async function phase(n: number, fault: Fault, perPhase: number, token: string, receiver: WebhookReceiver, timeoutMs: number): Promise<PhaseResult> {
  const accepted = new Map<string, string>();
  const t0 = Date.now();
  let killed = '';
  const chaos = (async () => {
    await sleep(3000);
    killed = await fault.target();
    say(`  ${fault.name}: kill -9 ${killed}`);
    await kill(killed);
    await sleep(fault.downMs);
    await start(killed);
    say(`  ${killed} is back`);
  })();
  const retries = await send(n, perPhase, token, accepted);
  const sendSeconds = (Date.now() - t0) / 1000;
  await chaos;
  const t1 = Date.now();
  const ids = [...accepted.values()];
  await settle(ids, receiver, timeoutMs);
  const { lost, duplicated, missing, examples } = await audit(ids, token, receiver);
  for (const line of examples) say(`  ${line}`);
  return { fault: fault.name, killed, accepted: ids.length, lost, duplicatedDlrs: duplicated, missingTransitions: missing, requestRetries: retries, sendSeconds, settleSeconds: (Date.now() - t1) / 1000, examples };
}

export async function runCluster(options: { messages: number; timeoutSeconds: number }): Promise<boolean> {
  process.env['TOPOLOGY_ENV'] = JSON.stringify(RELIABILITY_ENV);
  await up();
  // The product processes get the run's settings: restart them (the engines stay up).
  for (const p of [...productProcesses()].reverse()) await stopProcess(p.name);
  await startProduct();
  const receiver = await startWebhookReceiver();
  const tenant = await createTenantAt(NATS_URL, HTTP_URLS[0] as string, receiver.url, 3);
  const perPhase = Math.max(100, Math.round(options.messages / FAULTS.length));
  const results: PhaseResult[] = [];
  for (const [i, fault] of FAULTS.entries()) {
    say(`phase ${i + 1}/${FAULTS.length}: ${fault.name} (${perPhase} messages)`);
    const result = await phase(i + 1, fault, perPhase, tenant.token, receiver, options.timeoutSeconds * 1000);
    results.push(result);
    say(`  accepted ${result.accepted}, lost ${result.lost}, duplicated DLRs ${result.duplicatedDlrs}, missing transitions ${result.missingTransitions} (${result.requestRetries} request retries; sent in ${result.sendSeconds.toFixed(0)} s, settled in ${result.settleSeconds.toFixed(0)} s)`);
  }
  // The killed worker comes back after its phase; so does everything else.
  await receiver.close();
  writeResult('reliability-cluster.json', { at: new Date().toISOString(), topology: 'cluster', perPhase, phases: results });
  process.stdout.write('\nfault | accepted | lost | duplicated DLRs | missing transitions\n');
  for (const r of results) process.stdout.write(`${r.fault} | ${r.accepted} | ${r.lost} | ${r.duplicatedDlrs} | ${r.missingTransitions}\n`);
  process.stdout.write('(written to bench/results/reliability-cluster.json; the topology stays up: npm run topology -- down)\n');
  return results.every((r) => r.lost === 0 && r.missingTransitions === 0);
}
