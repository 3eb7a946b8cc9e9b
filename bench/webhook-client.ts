// The CPU a DLR webhook's HTTP request costs its sender: the product's HttpWebhookSender
// (infra/webhook-sender.ts, undici's dispatcher) against node:http's request with a keep-alive
// agent (the sender's former shape: flat header list, a timer per request), in the same run.
// The receiver runs in a process of its own (answers 200 "ok" to every POST), so this process's
// CPU is the sender's alone. Each round sends --requests POSTs of a DLR body with the headers
// of a signed DLR from --concurrency lanes, one client after the other, in alternating order.
// Reports per client: requests/s and CPU µs per request (user + system, process.cpuUsage),
// the median over the rounds; writes them to a result file.
// Usage: npm run bench:webhook-client [-- --requests 30000] [--concurrency 100] [--rounds 4] [--out <file>]
import { spawn } from 'node:child_process';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { benchArgs } from './cli-args';
import { freePort } from '../infra/local-engines';
import { HttpWebhookSender } from '../infra/webhook-sender';
import { loadAverage, writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    requests: { type: 'string', default: '30000' },
    concurrency: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '4' },
    out: { type: 'string' },
  },
});
const say = (line: string): void => { process.stderr.write(`[bench:webhook-client] ${line}\n`); };

const RECEIVER = `
const s = require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end('ok')); });
s.keepAliveTimeout = 60000;
s.listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));`;

const body = JSON.stringify({ id: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', clientId: 'order-1234', status: 'delivered', code: 0, eventAt: new Date().toISOString() });
const headers: Record<string, string> = {
  'content-type': 'application/json', 'user-agent': 'sms-platform-dlr/1', 'webhook-id': '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.3',
  'webhook-timestamp': '1795000000', 'webhook-signature': `v1,${'a'.repeat(43)}=`, 'X-Webhook-Attempt': '1',
  'X-Webhook-Timestamp': '1795000000', 'X-Webhook-Signature': `v1=${'b'.repeat(64)}`, 'X-Webhook-Id': '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.3',
};

type Post = () => Promise<number>;

/** node:http with a keep-alive agent, as the sender was written before undici. */
function nodeHttpClient(port: number): { post: Post; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  const post: Post = () => new Promise((resolve, reject) => {
    const list: string[] = ['host', `127.0.0.1:${port}`, 'content-length', String(Buffer.byteLength(body))];
    for (const name in headers) list.push(name, headers[name] as string);
    const req = http.request({ host: '127.0.0.1', port, path: '/dlr', method: 'POST', agent, setHost: false, headers: list }, (res) => {
      res.on('end', () => { clearTimeout(timer); resolve(res.statusCode ?? 0); });
      res.resume();
    });
    const timer = setTimeout(() => req.destroy(new Error('timeout')), 5_000);
    req.on('error', (err) => { clearTimeout(timer); reject(err); });
    req.end(body);
  });
  return { post, close: () => agent.destroy() };
}

function productClient(port: number): { post: Post; close(): void } {
  const sender = new HttpWebhookSender({ allowPrivateTargets: true });
  return { post: () => sender.post({ url: `http://127.0.0.1:${port}/dlr`, body, headers, timeoutMs: 5_000 }), close: () => sender.close() };
}

async function round(post: Post, requests: number, concurrency: number): Promise<{ perSecond: number; cpuUsPerRequest: number }> {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < requests) {
      const status = await post();
      if (status !== 200) throw new Error(`the receiver answered ${status}`);
    }
  }));
  const used = process.cpuUsage(cpu);
  return { perSecond: requests / ((performance.now() - started) / 1000), cpuUsPerRequest: (used.user + used.system) / requests };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const port = await freePort();
  const receiver = spawn(process.execPath, ['-e', RECEIVER, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    receiver.stdout.once('data', () => resolve());
    receiver.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
  });
  const requests = Number(values.requests);
  const concurrency = Number(values.concurrency);
  const clients = { 'node:http': nodeHttpClient(port), product: productClient(port) };
  const runs: Record<string, Array<{ perSecond: number; cpuUsPerRequest: number }>> = { 'node:http': [], product: [] };
  try {
    const loadBefore = loadAverage();
    for (const client of Object.values(clients)) for (let i = 0; i < 2_000; i++) await client.post();
    for (let r = 0; r < Number(values.rounds); r++) {
      const order = r % 2 === 0 ? (['node:http', 'product'] as const) : (['product', 'node:http'] as const);
      for (const name of order) {
        const result = await round(clients[name].post, requests, concurrency);
        runs[name]?.push(result);
        say(`round ${r + 1} ${name}: ${result.perSecond.toFixed(0)} req/s, ${result.cpuUsPerRequest.toFixed(1)} µs CPU per request; load ${loadavg()[0]?.toFixed(2)}`);
      }
    }
    const summary = Object.fromEntries(Object.entries(runs).map(([name, rs]) => [name, { perSecondMedian: Math.round(median(rs.map((x) => x.perSecond))), cpuUsPerRequestMedian: Number(median(rs.map((x) => x.cpuUsPerRequest)).toFixed(1)), rounds: rs }]));
    const result = {
      bench: 'webhook-client', at: new Date().toISOString(), node: process.version, cpus: cpus().length, requests, concurrency,
      loadBefore, loadAfter: loadAverage(), summary,
    };
    const date = new Date().toISOString().slice(0, 10);
    const file = writeResult(values.out ?? `webhook-client-${date}.json`, result);
    process.stdout.write(`${JSON.stringify(summary, (k, v: unknown) => (k === 'rounds' ? undefined : v), 2)}\nwritten to ${file}\n`);
  } finally {
    for (const client of Object.values(clients)) client.close();
    receiver.kill();
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
