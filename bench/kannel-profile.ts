// Where the gateway process of `npm start` spends its CPU while it accepts single sends, the
// shape of bench:kannel's singles phase (POST /transactional/v1/sms from 64 connections, as fast
// as accepted). The stack as bench:kannel starts it (every role, the lifecycle consuming, the
// webhook to a receiver here); after a warm-up the gateway process's inspector is opened with
// SIGUSR1 (on the port --inspect-port gave it) and the V8 CPU profiler runs only during the
// burst. Prints the top functions by self time with their share of the samples, and writes the
// .cpuprofile (open it in Chrome DevTools or speedscope).
// Usage: node_modules/.bin/node --import tsx bench/kannel-profile.ts [--process gateway|worker|carrier,simulator] [--seconds 10]
//   [--connections 64] [--top 25] [--interval-us 500] [--out /tmp/gateway-accept.cpuprofile]
// Run it on the product's Node (the `node` devDependency, the one npm scripts put first on PATH):
// the product process is started with this process's Node. On an older system Node (20 needs
// --experimental-websocket) AsyncLocalStorage runs on async hooks, and the Temporal client's
// (every namespaced call runs in one) adds async_hooks trackPromise to every promise, a cost
// `npm start` on Node 24 does not have. PRODUCT_NODE_FLAGS given by the caller are kept.
import autocannon from 'autocannon';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { benchArgs } from './cli-args';
import { freePort } from '../infra/local-engines';
import { startStack } from '../support/stack';
import { PIPELINE_STACK_ENV } from './support/pipeline-stack';
import { createTenantAt } from './support/tenant';
import { roleProcessName, roleProcessPids } from './support/cpu';

const { values } = benchArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    warmup: { type: 'string', default: '1000' },
    top: { type: 'string', default: '25' },
    'interval-us': { type: 'string', default: '500' },
    // Which process of the stack to profile: the gateway (main) process, or a role process by the
    // roles it runs (`worker`: the lifecycle; `carrier,simulator`).
    process: { type: 'string', default: 'gateway' },
    out: { type: 'string', default: '/tmp/gateway-accept.cpuprofile' },
  },
});
const say = (line: string): void => { process.stderr.write(`[bench:kannel-profile] ${line}\n`); };

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; hitCount?: number; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
async function inspector(port: number): Promise<{ send(method: string, params?: object): Promise<Record<string, unknown>>; close(): void }> {
  let url: string | undefined;
  for (let i = 0; i < 100 && !url; i++) {
    try {
      const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
      url = list[0]?.webSocketDebuggerUrl;
    } catch { await new Promise((resolve) => setTimeout(resolve, 100)); }
  }
  if (!url) throw new Error(`no inspector on port ${port}`);
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let next = 1;
  const pending = new Map<number, (r: Record<string, unknown>) => void>();
  ws.onmessage = (event: MessageEvent): void => {
    const msg = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, unknown>; error?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result ?? { error: msg.error });
  };
  return {
    send: (method, params = {}) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); ws.send(JSON.stringify({ id, method, params })); }),
    close: () => ws.close(),
  };
}

function selfTimes(profile: Profile): Array<{ name: string; ms: number; share: number }> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const ms = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i] ?? -1);
    const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
    if (!node) continue;
    const f = node.callFrame;
    const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    ms.set(key, (ms.get(key) ?? 0) + dt);
    total += dt;
  }
  return [...ms].map(([name, t]) => ({ name, ms: t, share: t / total })).sort((a, b) => b.ms - a.ms);
}

/** The pid of the process to profile: the gateway's, or the role process whose roles are `name`. */
function profiledPid(gatewayPid: number, name: string): number {
  if (name === 'gateway') return gatewayPid;
  const children = roleProcessPids(gatewayPid);
  const found = children.find((pid) => roleProcessName(pid) === name);
  if (found === undefined) throw new Error(`--process ${name}: no such role process (running: gateway, ${children.map(roleProcessName).join(', ')})`);
  return found;
}

async function main(): Promise<void> {
  const inspectPort = await freePort();
  // Flags given by the caller (e.g. PRODUCT_NODE_FLAGS="--import /tmp/probe.mjs") are kept.
  process.env['PRODUCT_NODE_FLAGS'] = `${process.env['PRODUCT_NODE_FLAGS'] ?? ''} --inspect-port=127.0.0.1:${inspectPort}`.trim();
  const receiver = createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end('ok')); });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const port = (receiver.address() as { port: number }).port;
  const stack = await startStack({ ...PIPELINE_STACK_ENV }, (l) => process.stderr.write(l));
  try {
    const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl, `http://127.0.0.1:${port}/product`);
    const opts = {
      url: `${stack.info.httpUrl}/transactional/v1/sms`, method: 'POST' as const, connections: Number(values.connections),
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'Bench', to: '+4915112345678', text: 'Benchmark message, GSM-7 only, one segment.' }),
    };
    say(`warm-up: ${String(values.warmup)} sends; load ${loadavg()[0]?.toFixed(2)}`);
    await autocannon({ ...opts, connections: 16, amount: Number(values.warmup) });
    const target = profiledPid(stack.pid ?? 0, values.process);
    process.kill(target, 'SIGUSR1');
    const cdp = await inspector(inspectPort);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: Number(values['interval-us']) });
    await cdp.send('Profiler.start');
    say(`profiling the ${values.process} process (pid ${target}, Node ${process.version}) during ${String(values.seconds)} s of POST /sms from ${opts.connections} connections; load ${loadavg()[0]?.toFixed(2)}`);
    const r = await autocannon({ ...opts, duration: Number(values.seconds) });
    const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
    cdp.close();
    writeFileSync(values.out, JSON.stringify(profile));
    const top = selfTimes(profile);
    const busy = top.filter((t) => t.name !== '(idle)').reduce((s, t) => s + t.ms, 0);
    process.stdout.write(`\nPOST /sms ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx + r.errors}; load ${loadavg()[0]?.toFixed(2)}\n`);
    process.stdout.write(`self time of the ${values.process} process's JavaScript thread over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s: ${busy.toFixed(0)} ms busy\n`);
    process.stdout.write('| # | Function (file:line) | Self ms | Share of samples | Share of busy |\n|---|---|---|---|---|\n');
    top.slice(0, Number(values.top)).forEach((t, i) => process.stdout.write(`| ${i + 1} | \`${t.name}\` | ${t.ms.toFixed(0)} | ${(t.share * 100).toFixed(1)} % | ${t.name === '(idle)' ? '' : `${((t.ms / busy) * 100).toFixed(1)} %`} |\n`));
    process.stdout.write(`profile written to ${values.out}\n`);
  } finally {
    await stack.stop();
    receiver.close();
  }
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
