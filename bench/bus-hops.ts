// What one SMS costs the bus: stream messages and bytes stored per accepted message, per stream
// (the KV buckets are streams too: KV_messages holds the states, KV_balances the balance's
// compare-and-sets), from the first request to the last `delivered` DLR. The stack as bench:kannel
// starts it (every role, the lifecycle consuming, the webhook to a receiver here); single sends
// from --connections connections for --seconds s, then --bulk-messages by POST /sms/bulk of 100.
// Each stream's last sequence and bytes are read before and after each phase (JetStream's stream
// info), so what the product did with other streams is named too. Prints a table per phase and
// writes bench/results/bus-hops-<date>-<commit>.json.
// Usage: npm run bench:bus-hops [-- --seconds 5] [--connections 64] [--bulk-messages 5000] [--timeout 120] [--out <file>]
import autocannon from 'autocannon';
import { createServer } from 'node:http';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { benchArgs } from './cli-args';
import { startStack } from '../support/stack';
import { PIPELINE_STACK_ENV } from './support/pipeline-stack';
import { createTenantAt } from './support/tenant';
import { benchCommit, loadAverage, writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '64' },
    'bulk-messages': { type: 'string', default: '5000' },
    timeout: { type: 'string', default: '120' },
    out: { type: 'string' },
  },
});

const say = (line: string): void => { process.stderr.write(`[bench:bus-hops] ${line}\n`); };

type Snapshot = Map<string, { seq: number; bytes: number }>;

async function snapshot(natsUrl: string): Promise<Snapshot> {
  const nc = await connect({ servers: natsUrl, name: 'bench-bus-hops' });
  try {
    const jsm = await jetstreamManager(nc);
    const out: Snapshot = new Map();
    for await (const si of jsm.streams.list()) out.set(si.config.name, { seq: si.state.last_seq, bytes: si.state.bytes });
    return out;
  } finally {
    await nc.close();
  }
}

const total = (s: Snapshot): number => [...s.values()].reduce((sum, v) => sum + v.seq, 0);

/** The streams once nothing is stored for a second (the lifecycle's last writes and acks come after the last DLR); at most 30 s. */
async function quiet(natsUrl: string): Promise<Snapshot> {
  let last = await snapshot(natsUrl);
  for (let still = 0, polls = 0; still < 2 && polls < 60; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await snapshot(natsUrl);
    still = total(now) === total(last) ? still + 1 : 0;
    last = now;
  }
  return last;
}

interface StreamCost { readonly stream: string; readonly messages: number; readonly perSms: number; readonly bytesPerSms: number }

function costs(before: Snapshot, after: Snapshot, sms: number): StreamCost[] {
  const rows: StreamCost[] = [];
  for (const [stream, a] of after) {
    const b = before.get(stream) ?? { seq: 0, bytes: 0 };
    const messages = a.seq - b.seq;
    if (messages === 0) continue;
    // Bytes held now minus before: a stream that dropped old messages (limits, TTL) shows less.
    rows.push({ stream, messages, perSms: messages / sms, bytesPerSms: Math.max(0, a.bytes - b.bytes) / sms });
  }
  return rows.sort((x, y) => y.messages - x.messages);
}

function table(title: string, rows: readonly StreamCost[], sms: number): string {
  const stored = rows.reduce((s, r) => s + r.messages, 0);
  const lines = [`\n${title}: ${sms} messages accepted, ${stored} stream messages stored (${(stored / sms).toFixed(2)} per SMS)`,
    '| Stream | Stream messages | Per SMS | Bytes stored per SMS |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.stream} | ${r.messages} | ${r.perSms.toFixed(3)} | ${r.bytesPerSms.toFixed(0)} |`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  let delivered = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try { if ((JSON.parse(Buffer.concat(chunks).toString()) as { status?: string }).status === 'delivered') delivered += 1; } catch { /* not a DLR */ }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const port = (receiver.address() as { port: number }).port;
  const stack = await startStack({ ...PIPELINE_STACK_ENV }, (l) => process.stderr.write(l));
  const results: Array<{ phase: string; accepted: number; streams: StreamCost[] }> = [];
  try {
    const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl, `http://127.0.0.1:${port}/product`);
    const headers = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
    const item = { from: 'Bench', to: '+4915112345678', text: 'Benchmark message, GSM-7 only, one segment.' };
    const untilDelivered = async (expected: number): Promise<void> => {
      const deadline = Date.now() + Number(values.timeout) * 1000;
      while (delivered < expected) {
        if (Date.now() > deadline) throw new Error(`${delivered} of ${expected} delivered DLRs after ${String(values.timeout)} s: raise --timeout or look at the stack's log`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    say(`warm-up: 500 sends; load ${loadAverage()}`);
    const warm = await autocannon({ url: `${stack.info.httpUrl}/transactional/v1/sms`, method: 'POST', headers, body: JSON.stringify(item), connections: 16, amount: 500 });
    await untilDelivered(warm['2xx']);

    const phases: Array<{ name: string; run: () => Promise<number> }> = [
      { name: `singles: POST /sms from ${String(values.connections)} connections for ${String(values.seconds)} s`, run: async () => {
        const r = await autocannon({ url: `${stack.info.httpUrl}/transactional/v1/sms`, method: 'POST', headers, body: JSON.stringify(item), connections: Number(values.connections), duration: Number(values.seconds) });
        return r['2xx'];
      } },
      { name: `bulk: ${String(values['bulk-messages'])} messages by POST /sms/bulk of 100, 4 connections`, run: async () => {
        const r = await autocannon({ url: `${stack.info.httpUrl}/transactional/v1/sms/bulk`, method: 'POST', headers, body: JSON.stringify(Array.from({ length: 100 }, () => item)), connections: 4, amount: Math.ceil(Number(values['bulk-messages']) / 100) });
        return r['2xx'] * 100;
      } },
    ];
    for (const phase of phases) {
      const before = await snapshot(stack.info.natsUrl);
      const start = delivered;
      say(`${phase.name}; load ${loadAverage()}`);
      const accepted = await phase.run();
      await untilDelivered(start + accepted);
      const rows = costs(before, await quiet(stack.info.natsUrl), accepted);
      results.push({ phase: phase.name, accepted, streams: rows });
      process.stdout.write(`${table(phase.name, rows, accepted)}\n`);
    }
  } finally {
    await stack.stop();
    receiver.close();
  }
  const commit = benchCommit();
  const out = values.out ?? `bus-hops-${new Date().toISOString().slice(0, 10)}-${commit}.json`;
  say(`written to ${writeResult(out, { at: new Date().toISOString(), commit, load: loadAverage(), phases: results })}`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
