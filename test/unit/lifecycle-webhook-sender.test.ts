// The DLR webhook sender (infra/webhook-sender.ts) against a server on loopback: the answer's
// status, the headers and body as given, a timeout named TimeoutError, a refused connection.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpWebhookSender } from '../../infra/webhook-sender';

let server: Server;
let url: string;
const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
const sender = new HttpWebhookSender();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      if (req.url === '/slow') return; // never answers
      res.statusCode = req.url === '/down' ? 503 : 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  sender.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('HttpWebhookSender', () => {
  test('posts the body with the given headers and answers the status', async () => {
    expect(await sender.post({ url: `${url}/dlr`, body: '{"id":"m1"}', headers: { 'content-type': 'application/json', 'webhook-id': 'm1.1' }, timeoutMs: 2000 })).toBe(200);
    expect(seen.at(-1)).toMatchObject({ body: '{"id":"m1"}', headers: { 'content-type': 'application/json', 'webhook-id': 'm1.1', 'content-length': '11', host: new URL(url).host } });
    expect(await sender.post({ url: `${url}/down`, body: '{}', headers: {}, timeoutMs: 2000 })).toBe(503);
  });

  test('no answer within the timeout rejects with a TimeoutError', async () => {
    await expect(sender.post({ url: `${url}/slow`, body: '{}', headers: {}, timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  test('a refused connection or a URL that is not http(s) rejects', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(sender.post({ url: `http://127.0.0.1:${port}/`, body: '{}', headers: {}, timeoutMs: 1000 })).rejects.toThrow();
    await expect(sender.post({ url: 'ftp://example.test/', body: '{}', headers: {}, timeoutMs: 1000 })).rejects.toThrow(/not http or https/);
  });
});
