// Bare Express servers for the benchmarks' ceilings, each in a process of its own (this file run
// by startExpressServer). The requests and responses of the `-classes` / `app-classes` shapes are
// made by the product's own gateways/http/server.ts appMessageClasses, so a ceiling measures
// what the product does.
//   echo, echo-classes: POST /echo, express.json(), 201 with a small JSON body (bench:http);
//   the SHAPES below: POST /transactional/v1/sms read, passed through two steps and answered 201
//   (bench:express-shapes, docs/acceptance.md "Express without re-shaping").
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { appMessageClasses } from '../../gateways/http/server';

export const SHAPES = ['as-mounted', 'one-middleware', 'prototypes', 'app-classes', 'node-http'] as const;
export type Shape = (typeof SHAPES)[number];
export type ServerKind = 'echo' | 'echo-classes' | Shape;

type Next = () => void;
type Step = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: Next) => void;

const ANSWER = JSON.stringify({ entity: { id: '0190a0b0-0000-7000-8000-000000000001', to: '+4915112345678', status: 'queued' } });
const send = (_req: IncomingMessage, res: ServerResponse): void => {
  res.statusCode = 201;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(ANSWER)));
  res.end(ANSWER);
};
const parse: Step = (req, _res, next) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    req.body = JSON.parse(Buffer.concat(chunks).toString());
    next();
  });
};
const pass: Step = (_req, _res, next) => next();
/** The steps of one request without Express: two passes, the body, two passes, the answer. */
const whole: RequestListener = (req, res) => pass(req, res, () => pass(req, res, () => parse(req, res, () => pass(req, res, () => pass(req, res, () => send(req, res))))));

/** The ceiling's endpoint (bench:http serves it beside the load generator too). */
export function echoApp(): Express {
  const app = express();
  app.post('/echo', express.json(), (_req, res) => { res.status(201).json({ entity: { ok: true } }); });
  return app;
}

/** The product's structure: four app-level middlewares, a router at /transactional/v1 with three other routes first. */
function mountedApp(): Express {
  const app = express();
  app.use(pass, pass, pass, parse);
  const router = express.Router();
  router.get('/organization/account', pass);
  router.get('/sms/price-profile/me/countries', pass);
  router.get('/lookup/price-profile/me/countries', pass);
  router.post('/sms', pass, pass, send);
  app.use('/transactional/v1', router);
  return app;
}

function server(kind: ServerKind): ReturnType<typeof createServer> {
  switch (kind) {
    case 'echo': return createServer(echoApp());
    case 'echo-classes': {
      const app = echoApp();
      return createServer(appMessageClasses(app), app);
    }
    case 'as-mounted': return createServer(mountedApp());
    case 'app-classes': {
      const app = mountedApp();
      return createServer(appMessageClasses(app), app);
    }
    case 'one-middleware': {
      const app = express();
      app.use((req, res) => whole(req, res));
      return createServer(app);
    }
    case 'prototypes': {
      const app = express();
      return createServer((req, res) => {
        Object.setPrototypeOf(req, app.request);
        Object.setPrototypeOf(res, app.response);
        whole(req, res);
      });
    }
    case 'node-http': return createServer(whole);
  }
}

/** Starts a server of `kind` in a process of its own; its pid is the one to measure. */
export async function startExpressServer(kind: ServerKind): Promise<{ process: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString('utf8').trim())));
    child.once('exit', (code) => reject(new Error(`the ${kind} server exited with ${code}`)));
  });
  return { process: child, port };
}

if (require.main === module) {
  const kind = process.argv[2] as ServerKind;
  const s = server(kind);
  s.listen(0, '127.0.0.1', () => process.stdout.write(`${(s.address() as AddressInfo).port}\n`));
}
