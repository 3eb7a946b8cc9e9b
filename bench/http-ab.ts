// Side-by-side HTTP acceptance benchmark of two revisions at once: this checkout (B) and
// another one (A, e.g. a git worktree of an older commit), each on its own embedded stack,
// driven by identical autocannon loads at the same time. On a shared, loaded machine both
// see the same contention, so the throughput ratio B/A and each product process's CPU per
// request compare like with like (bench:http's runs one after the other do not).
// Usage: node --import tsx bench/http-ab.ts --base /tmp/wt-old [--rounds 3] [--seconds 8]
//   [--only send,bulk,read] [--rate 0 (req/s per side; 0 = as fast as it goes)] [--roles gateway-http]
import autocannon from 'autocannon';
import { loadavg } from 'node:os';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { benchArgs } from './cli-args';
import { processCpuMs, threadCpuDelta, threadCpuMs } from './support/cpu';
import { writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '8' },
    only: { type: 'string', default: 'send,bulk,read' },
    rate: { type: 'string', default: '0' },
    roles: { type: 'string', default: 'gateway-http' },
    out: { type: 'string', default: 'http-ab.json' },
  },
});
if (!values.base) throw new Error('--base <checkout of the other revision> is required');
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);

interface Side {
  readonly name: string;
  readonly pid: number | undefined;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly id: string;
  stop(): Promise<void>;
}

interface StackModule {
  startStack(env: Record<string, string>, log: (l: string) => void, roles: readonly string[]): Promise<{ info: { httpUrl: string; natsUrl: string }; pid: number | undefined; stop(): Promise<void> }>;
}
interface TenantModule {
  createTenantAt(natsUrl: string, httpUrl: string): Promise<{ token: string }>;
}

const ONE = JSON.stringify({ from: 'Bench', to: '+4915112345678', text: 'Benchmark message, GSM-7 only, one segment.' });
const BULK = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ from: 'Bench', to: `+49151123456${String(i).padStart(2, '0')}`, text: `Bulk benchmark item ${i}` })));

async function startSide(name: string, root: string): Promise<Side> {
  // Each revision starts its own product with its own stack and tenant code.
  // support/stack.ts since 2026-11-26; an older revision starts its stack from test/support/global-setup.ts.
  const stackModule = existsSync(join(root, 'support', 'stack.ts')) ? join(root, 'support', 'stack.ts') : join(root, 'test', 'support', 'global-setup.ts');
  const { startStack } = (await import(stackModule)) as StackModule;
  const { createTenantAt } = (await import(join(root, 'bench', 'support', 'tenant.ts'))) as TenantModule;
  const roles = values.roles === 'all' ? [] : values.roles.split(',');
  const stack = await startStack({ LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BULK_PER_MINUTE: '1000000000', SIMULATOR_LATENCY_MS: '0', MESSAGE_VALIDITY_SECONDS: '172800' }, (l) => process.stderr.write(`[${name}] ${l}`), roles);
  const tenant = await createTenantAt(stack.info.natsUrl, stack.info.httpUrl);
  const headers = { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' };
  const created = await fetch(`${stack.info.httpUrl}/transactional/v1/sms`, { method: 'POST', headers, body: ONE });
  const id = ((await created.json()) as { entity: { id: string } }).entity.id;
  return { name, pid: stack.pid, url: `${stack.info.httpUrl}/transactional/v1`, headers, id, stop: () => stack.stop() };
}

/** cpuUs: the product process's CPU per request; threads: the same per thread name (`node` is the JavaScript thread). */
interface Figure { rps: number; p99: number; non2xx: number; cpuUs: number; threads: Record<string, number> }

const PHASES: Record<string, (s: Side) => autocannon.Options> = {
  send: (s) => ({ url: `${s.url}/sms`, method: 'POST', headers: s.headers, body: ONE, connections: 64 }),
  bulk: (s) => ({ url: `${s.url}/sms/bulk`, method: 'POST', headers: s.headers, body: BULK, connections: 16 }),
  read: (s) => ({ url: `${s.url}/sms/${s.id}`, headers: s.headers, connections: 64 }),
};

async function load(side: Side, opts: autocannon.Options): Promise<Figure> {
  const cpu0 = processCpuMs(side.pid) ?? 0;
  const threads0 = threadCpuMs(side.pid);
  const r = await autocannon({ duration: SECONDS, ...(RATE > 0 ? { overallRate: RATE } : {}), ...opts });
  const cpuMs = (processCpuMs(side.pid) ?? 0) - cpu0;
  const n = Math.max(1, r.requests.total);
  const threads = Object.fromEntries(threadCpuDelta(threads0, threadCpuMs(side.pid)).map(([name, ms]) => [name, Math.round((ms * 1000) / n)]));
  return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx + r.errors, cpuUs: (cpuMs * 1000) / n, threads };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const a = await startSide('A', resolve(values.base as string));
  const b = await startSide('B', resolve(__dirname, '..'));
  const results: Record<string, { a: Figure[]; b: Figure[]; load: number[] }> = {};
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const phase of values.only.split(',')) {
        const opts = PHASES[phase];
        if (!opts) throw new Error(`unknown phase ${phase}`);
        const [fa, fb] = await Promise.all([load(a, opts(a)), load(b, opts(b))]);
        const entry = results[phase] ?? { a: [], b: [], load: [] };
        results[phase] = entry;
        entry.a.push(fa);
        entry.b.push(fb);
        entry.load.push(Number(loadavg()[0]?.toFixed(2)));
        process.stderr.write(`round ${round} ${phase}: A ${fa.rps.toFixed(0)} req/s ${fa.cpuUs.toFixed(0)} µs/req p99 ${fa.p99} | B ${fb.rps.toFixed(0)} req/s ${fb.cpuUs.toFixed(0)} µs/req p99 ${fb.p99} | B/A ${(fb.rps / fa.rps).toFixed(2)} | load ${loadavg()[0]?.toFixed(1)}\n  A threads µs/req ${JSON.stringify(fa.threads)}\n  B threads µs/req ${JSON.stringify(fb.threads)}\n`);
      }
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  const lines = ['', `A = ${values.base}, B = this checkout; ${ROUNDS} rounds of ${SECONDS} s, both loaded at once${RATE > 0 ? ` at ${RATE} req/s each` : ''}; medians`];
  for (const [phase, r] of Object.entries(results)) {
    const ratio = median(r.a.map((fa, i) => (r.b[i]?.rps ?? 0) / fa.rps));
    lines.push(`${phase.padEnd(5)} A ${median(r.a.map((f) => f.rps)).toFixed(0).padStart(6)} req/s ${median(r.a.map((f) => f.cpuUs)).toFixed(0).padStart(5)} µs/req | B ${median(r.b.map((f) => f.rps)).toFixed(0).padStart(6)} req/s ${median(r.b.map((f) => f.cpuUs)).toFixed(0).padStart(5)} µs/req | B/A throughput ${ratio.toFixed(2)} | load ${r.load.join(' ')}`);
  }
  writeResult(values.out, { at: new Date().toISOString(), base: values.base, seconds: SECONDS, rate: RATE, roles: values.roles, results });
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
