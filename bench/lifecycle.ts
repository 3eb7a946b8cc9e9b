// End-to-end lifecycle benchmark (issue: message lifecycle): N messages via POST /sms/bulk
// through the simulator (latency 0) to a webhook on loopback; messages/s and DLRs/s sustained,
// p50/p99 from the 201 to the `delivered` DLR. In the same run, the embedded Temporal dev
// server's ceiling for a trivial workflow of the same shape (benchCeiling: the same number of
// workflow tasks, local activities, timers and signals), and our ratio to it.
// Usage: npm run bench:lifecycle [-- --messages 10000] [--only lifecycle|ceiling] [--rate 15]
// (--rate: offered messages/s, for latency below saturation; without it the whole batch is sent at once)
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectTemporal } from '../infra/temporal';
import { startStack, type RunningStack } from '../test/support/global-setup';
import { startWebhookReceiver } from '../test/support/webhook-receiver';
import { bundleCeilingWorkflow, measureCeiling, type CeilingResult } from './support/ceiling';
import { createTenantAt } from './support/tenant';

const { values } = parseArgs({ options: { messages: { type: 'string', default: '10000' }, timeout: { type: 'string', default: '1200' }, only: { type: 'string' }, rate: { type: 'string' } } });
const N = Number(values.messages);
/** Offered load in messages/s (bulks of up to 100 sent on a schedule); unset: as fast as accepted. */
const RATE = values.rate ? Number(values.rate) : null;
const BULK = RATE ? Math.max(1, Math.min(100, Math.round(RATE))) : 100;
const say = (line: string): void => { process.stderr.write(`[bench:lifecycle] ${line}\n`); };
const pct = (xs: number[], p: number): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0; };

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
type Temporal = Awaited<ReturnType<typeof connectTemporal>>;

async function runLifecycle(stack: RunningStack, receiver: Receiver, temporal: Temporal): Promise<Record<string, number>> {
  const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl, receiver.url);
  const acceptedAt = new Map<string, number>();
  const started = Date.now();
  say(`sending ${N} messages in bulks of ${BULK}${RATE ? ` at ${RATE} messages/s` : ''}`);
  let next = 0;
  const bulks = Math.ceil(N / BULK);
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (;;) {
      const b = next++;
      if (b >= bulks) return;
      if (RATE) {
        const due = started + ((b * BULK) / RATE) * 1000;
        if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      }
      const items = Array.from({ length: Math.min(BULK, N - b * BULK) }, (_, i) => ({ from: 'Bench', to: `+4915113${String(b).padStart(4, '0')}${String(i % 80).padStart(2, '0')}`, text: `lifecycle bench ${b}/${i}` }));
      const res = await fetch(`${stack.info.httpUrl}/transactional/v1/sms/bulk`, { method: 'POST', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, body: JSON.stringify(items) });
      const at = Date.now();
      const body = (await res.json()) as { entities: Array<{ id: string }> };
      for (const e of body.entities) acceptedAt.set(e.id, at);
    }
  }));
  const sentSeconds = (Date.now() - started) / 1000;
  say(`${acceptedAt.size} accepted in ${sentSeconds.toFixed(1)} s; waiting for delivered DLRs`);
  const deadline = Date.now() + Number(values.timeout) * 1000;
  const delivered = (): Map<string, number> => new Map(receiver.received.filter((r) => r.body['status'] === 'delivered' && r.answered === 200).map((r) => [String(r.body['id']), r.at]));
  let done = delivered();
  while (done.size < acceptedAt.size && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    done = delivered();
    say(`${done.size}/${acceptedAt.size} delivered DLRs`);
  }
  const last = Math.max(...done.values());
  const seconds = (last - started) / 1000;
  const latencies = [...done.entries()].map(([id, at]) => at - (acceptedAt.get(id) ?? at));
  const dlrs = receiver.received.filter((r) => r.answered === 200).length;
  // History shape from a sample of messages: events and signals per message (the ceiling copies it).
  const sample = [...done.keys()].slice(0, 20);
  const histories = await Promise.all(sample.map(async (id) => (await temporal.client.workflow.getHandle(`sms-${id}`).fetchHistory()).events ?? []));
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const historyEventsPerMessage = mean(histories.map((h) => h.length));
  const signalsPerMessage = mean(histories.map((h) => h.filter((e) => e.workflowExecutionSignaledEventAttributes).length));
  const ours = { offeredRate: RATE ?? 0, messages: done.size, seconds, messagesPerSecond: done.size / seconds, dlrsPerSecond: dlrs / seconds, p50Ms: pct(latencies, 50), p99Ms: pct(latencies, 99), historyEventsPerMessage, signalsPerMessage };
  say(`lifecycle: ${ours.messagesPerSecond.toFixed(0)} messages/s, ${ours.dlrsPerSecond.toFixed(0)} DLRs/s, p50 ${ours.p50Ms} ms, p99 ${ours.p99Ms} ms, ${historyEventsPerMessage.toFixed(1)} events and ${signalsPerMessage.toFixed(1)} signals per message`);
  return ours;
}

async function runCeiling(address: string, signals: number): Promise<CeilingResult> {
  say(`ceiling: ${N} benchCeiling workflows with ${signals} signal(s) each, worker in this process`);
  const ceiling = await measureCeiling(address, await bundleCeilingWorkflow(), N, signals, say);
  say(`ceiling: ${ceiling.workflowsPerSecond.toFixed(0)} workflows/s (${ceiling.historyEvents} history events each)`);
  return ceiling;
}

async function main(): Promise<void> {
  const receiver = await startWebhookReceiver();
  const stack = await startStack({ LOG_LEVEL: 'error', SIMULATOR_LATENCY_MS: '0', MESSAGE_VALIDITY_SECONDS: '172800', RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_BULK_PER_MINUTE: '100000000' });
  const temporal = await connectTemporal({ address: stack.info.temporalAddress, namespace: 'default' });
  try {
    const lifecycle = values.only === 'ceiling' ? null : await runLifecycle(stack, receiver, temporal);
    const ceiling = values.only === 'lifecycle' ? null : await runCeiling(stack.info.temporalAddress, Math.max(1, Math.round(lifecycle?.['signalsPerMessage'] ?? 1)));
    const ratio = lifecycle && ceiling ? (lifecycle['messagesPerSecond'] ?? 0) / ceiling.workflowsPerSecond : null;
    const results = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
      conditions: 'embedded stack, every role in one process, simulator latency 0, webhook receiver on loopback in the bench process; one run',
      at: new Date().toISOString(),
      lifecycle,
      ceiling,
      ratio,
    };
    const file = `lifecycle${values.only ? `-${values.only}` : ''}${RATE ? `-rate${RATE}` : ''}.json`;
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    writeFileSync(join(__dirname, 'results', file), `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`\n${JSON.stringify({ lifecycle, ceiling, ratio })}\nwritten to bench/results/${file}\n`);
  } finally {
    await temporal.close();
    await stack.stop();
    await receiver.close();
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
