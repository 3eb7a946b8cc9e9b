// What Express costs a JSON POST depending on how its requests are shaped (docs/acceptance.md,
// session 9): the same endpoint (read the body, two pass-through steps, answer 201 with JSON)
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
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '6' },
    out: { type: 'string', default: 'express-shapes.json' },
  },
});

const SHAPES = ['as-mounted', 'one-middleware', 'prototypes', 'app-classes', 'node-http'] as const;
type Shape = (typeof SHAPES)[number];

const SERVER = `const http = require('node:http');
const express = require('express');
const shape = process.argv[1];
const app = express();
const body = JSON.stringify({ entity: { id: '0190a0b0-0000-7000-8000-000000000001', to: '+4915112345678', status: 'queued' } });
const send = (_req, res) => { res.statusCode = 201; res.setHeader('Content-Type', 'application/json; charset=utf-8'); res.setHeader('Content-Length', String(Buffer.byteLength(body))); res.end(body); };
const parse = (req, _res, next) => { const chunks = []; req.on('data', (c) => chunks.push(c)); req.on('end', () => { req.body = JSON.parse(Buffer.concat(chunks).toString()); next(); }); };
const pass = (_req, _res, next) => next();
const whole = (req, res) => pass(req, res, () => pass(req, res, () => parse(req, res, () => pass(req, res, () => pass(req, res, () => send(req, res))))));
if (shape === 'one-middleware') app.use((req, res) => whole(req, res));
else {
  app.use(pass); app.use(pass); app.use(pass); app.use(parse);
  const router = express.Router();
  router.get('/organization/account', pass); router.get('/sms/price-profile/me/countries', pass); router.get('/lookup/price-profile/me/countries', pass);
  router.post('/sms', pass, pass, send);
  app.use('/transactional/v1', router);
}
function AppRequest(socket) { http.IncomingMessage.call(this, socket); }
AppRequest.prototype = app.request;
function AppResponse(req, options) { http.ServerResponse.call(this, req, options); }
AppResponse.prototype = app.response;
const server = shape === 'app-classes' ? http.createServer({ IncomingMessage: AppRequest, ServerResponse: AppResponse }, app)
  : shape === 'prototypes' ? http.createServer((req, res) => { Object.setPrototypeOf(req, app.request); Object.setPrototypeOf(res, app.response); whole(req, res); })
  : shape === 'node-http' ? http.createServer(whole)
  : http.createServer(app);
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));`;

async function serve(shape: Shape): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', SERVER, shape], { cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString('utf8').trim())));
    child.once('exit', (code) => reject(new Error(`the ${shape} server exited with ${code}`)));
  });
  return { child, port };
}

async function measure(shape: Shape): Promise<number> {
  const { child, port } = await serve(shape);
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
