// What Express costs a JSON POST depending on how its requests are shaped (docs/acceptance.md,
// "Express without re-shaping"): the same endpoint (read the body, two pass-through steps, answer 201 with JSON)
// served five ways, each from a process of its own, loaded by autocannon from this one:
//   as-mounted     the product's structure: four app-level middlewares, a router at
//                  /transactional/v1 with three other routes before the POST route;
//   one-middleware the route matched by one app-level middleware;
//   prototypes     node:http, each request and response given Express's prototypes with
//                  Object.setPrototypeOf (what app.handle does), nothing else of Express;
//   app-classes    as-mounted, requests and responses constructed with the app's prototypes
//                  (gateways/http/server.ts appMessageClasses);
//   node-http      node:http alone.
// Medians of RUNS runs, printed and written to bench/results/express-shapes.json.
// Usage: node --import tsx bench/express-shapes.ts [--runs 3 --seconds 6 --out express-shapes.json]
import autocannon from 'autocannon';
import { cpus, loadavg } from 'node:os';
import { benchArgs } from './cli-args';
import { writeResult } from './support/results';
import { SHAPES, startExpressServer, type Shape } from './support/express-server';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '6' },
    out: { type: 'string', default: 'express-shapes.json' },
  },
});

async function measure(shape: Shape): Promise<number> {
  const { process: child, port } = await startExpressServer(shape);
  try {
    const options = {
      url: `http://127.0.0.1:${port}/transactional/v1/sms`, method: 'POST' as const, connections: 64,
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ to: '+4915112345678', text: 'hello' }),
    };
    await autocannon({ ...options, duration: 2 });
    const result = await autocannon({ ...options, duration: Number(values.seconds) });
    if (result.non2xx + result.errors > 0) throw new Error(`${shape}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    return result.requests.average;
  } finally {
    child.kill('SIGTERM');
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const runs = new Map<Shape, number[]>(SHAPES.map((s) => [s, []]));
  for (let round = 1; round <= Number(values.runs); round++) {
    // Interleaved, so a change of the machine's load falls on every shape alike.
    for (const shape of SHAPES) {
      const rps = await measure(shape);
      runs.get(shape)?.push(rps);
      process.stderr.write(`  round ${round} ${shape}: ${rps.toFixed(0)} req/s\n`);
    }
  }
  const figures = SHAPES.map((shape) => ({ shape, rps: median(runs.get(shape) ?? []), runs: runs.get(shape) ?? [] }));
  const results = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    conditions: `each shape in a process of its own, autocannon (64 connections) in this one; ${values.runs} interleaved rounds of ${values.seconds} s; medians`,
    at: new Date().toISOString(),
    loadAverageAfter: loadavg().map((l) => Number(l.toFixed(2))),
    figures,
  };
  const out = writeResult(values.out, results);
  process.stdout.write(['', `Express request shapes (${results.conditions})`, ...figures.map((f) => `${f.shape.padEnd(16)} ${f.rps.toFixed(0).padStart(7)} req/s`), `written to ${out}`, ''].join('\n'));
}

main().catch((err: unknown) => { process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
