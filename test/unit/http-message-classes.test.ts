// The HTTP server constructs its requests and responses with the Express app's prototypes
// (gateways/http/server.ts appMessageClasses), so that Express's per-request
// Object.setPrototypeOf changes nothing; Express's request and response API works on them as on
// the objects it re-shapes itself (the API suites run through this server: test/integration).
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import express from 'express';
import { createHttpServer } from '../../gateways/http/server';

test('requests and responses have the app prototypes from the start, and Express reads and answers through them', async () => {
  const app = express();
  app.set('trust proxy', 'loopback');
  app.get('/things/:id', (req, res) => {
    res.status(202).set('X-Seen', req.get('x-probe') ?? '').json({ id: req.params['id'], ip: req.ip, path: req.path, query: req.query });
  });
  const server = createHttpServer(app);
  const seen: boolean[] = [];
  server.prependListener('request', (req: IncomingMessage, res) => {
    seen.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/things/42?a=1`, { headers: { 'x-probe': 'yes' } });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-seen')).toBe('yes');
    expect(res.headers.get('etag')).toMatch(/^W\//);
    expect(await res.json()).toEqual({ id: '42', ip: '127.0.0.1', path: '/things/42', query: { a: '1' } });
    expect(seen).toEqual([true]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
