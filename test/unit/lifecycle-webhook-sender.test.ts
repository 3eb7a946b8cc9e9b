// The DLR webhook sender (infra/webhook-sender.ts) against a server on loopback: the answer's
// status, the headers and body as given, a timeout named TimeoutError, a refused connection;
// and its target checks (spec 1 §6 rule 1): by default a loopback, private or http:// target
// is refused before any connection, also when a host name resolves to one.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { WebhookTargetRefusedError } from '../../core/sms/webhook-target';
import { HttpWebhookSender, postOnce } from '../../infra/webhook-sender';
import type { Resolver } from '../../infra/webhook-target';

let server: Server;
let url: string;
const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
// The receiver is on loopback: this sender allows private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS=true).
const sender = new HttpWebhookSender({ allowPrivateTargets: true });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      if (req.url === '/slow') return; // never answers
      if (req.url === '/redirect') { res.writeHead(307, { location: '/dlr' }).end(); return; }
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

  test('credentials in the URL are sent as basic authorization, never in the request line', async () => {
    const withUser = url.replace('http://', 'http://dlr%20user:p%40ss@');
    expect(await sender.post({ url: `${withUser}/dlr?x=1`, body: '{}', headers: {}, timeoutMs: 2000 })).toBe(200);
    expect(seen.at(-1)?.headers.authorization).toBe(`Basic ${Buffer.from('dlr user:p@ss').toString('base64')}`);
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
    await expect(sender.post({ url: 'ftp://example.test/', body: '{}', headers: {}, timeoutMs: 1000 })).rejects.toBeInstanceOf(WebhookTargetRefusedError);
  });
});

/** A resolver answering from a table (no DNS), counting its calls. */
function fakeResolver(table: Record<string, readonly string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve: Resolver = async (hostname) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('spec 1 §6 rule 1: webhook targets are public HTTPS (HttpWebhookSender, default policy)', () => {
  const port = (): string => new URL(url).port;
  const post = (s: HttpWebhookSender, target: string): Promise<number> => s.post({ url: target, body: '{}', headers: {}, timeoutMs: 1000 });

  test('http://, loopback, private, link-local, CGNAT, metadata, ULA and IPv4-mapped targets are refused before any connection', async () => {
    const strict = new HttpWebhookSender();
    const before = seen.length;
    try {
      for (const target of [
        `${url}/dlr`, `https://127.0.0.1:${port()}/dlr`, 'https://10.1.2.3/dlr', 'https://192.168.0.10/dlr', 'https://172.16.5.4/dlr', 'https://169.254.169.254/latest/meta-data/',
        'https://100.64.0.1/dlr', 'https://[::1]/dlr', 'https://[fd00:ec2::254]/dlr', 'https://[fe80::1]/dlr', 'https://[::ffff:127.0.0.1]/dlr', 'https://0.0.0.0/dlr',
        'https://224.0.0.1/dlr', 'https://2130706433/dlr', 'https://[fc00::5]/dlr',
      ]) {
        await expect(post(strict, target)).rejects.toBeInstanceOf(WebhookTargetRefusedError);
      }
    } finally {
      strict.close();
    }
    expect(seen.length).toBe(before);
  });

  test('a host name is resolved (all addresses) and refused when any of them is not public; the attempt fails with the reason', async () => {
    const resolver = fakeResolver({ 'internal.test': ['10.0.0.7'], 'mixed.test': ['93.184.216.34', '127.0.0.1'], 'loop.test': ['127.0.0.1'] });
    const strict = new HttpWebhookSender({ resolver });
    const before = seen.length;
    try {
      await expect(post(strict, 'https://internal.test/dlr')).rejects.toThrow('webhook target refused: internal.test resolves to a non-public address (private)');
      await expect(post(strict, 'https://mixed.test/dlr')).rejects.toThrow(/mixed\.test resolves to a non-public address \(loopback\)/);
      await expect(post(strict, `https://loop.test:${port()}/dlr`)).rejects.toBeInstanceOf(WebhookTargetRefusedError);
    } finally {
      strict.close();
    }
    expect(resolver.calls).toEqual(['internal.test', 'mixed.test', 'loop.test']);
    expect(seen.length).toBe(before);
  });

  test('the connection goes to the address that was resolved and checked (the lookup is pinned), never redirected', async () => {
    // With private targets allowed, a name only the fake resolver knows reaches the loopback receiver:
    // the socket used the checked answer, not a second resolution.
    const resolver = fakeResolver({ 'receiver.test': ['127.0.0.1'] });
    const local = new HttpWebhookSender({ allowPrivateTargets: true, resolver });
    try {
      expect(await post(local, `http://receiver.test:${port()}/dlr`)).toBe(200);
      expect(seen.at(-1)?.headers.host).toBe(`receiver.test:${port()}`);
      expect(resolver.calls).toEqual(['receiver.test']);
      const before = seen.length;
      expect(await post(local, `http://receiver.test:${port()}/redirect`)).toBe(307);
      expect(seen.length).toBe(before + 1);
    } finally {
      local.close();
    }
  });

  test('the metadata endpoints stay refused with private targets allowed', async () => {
    const resolver = fakeResolver({ 'metadata.test': ['169.254.169.254'] });
    const local = new HttpWebhookSender({ allowPrivateTargets: true, resolver });
    try {
      await expect(post(local, 'http://169.254.169.254/latest/')).rejects.toThrow(/cloud metadata endpoint/);
      await expect(post(local, 'http://[fd00:ec2::254]/latest/')).rejects.toThrow(/cloud metadata endpoint/);
      await expect(post(local, 'http://metadata.test/latest/')).rejects.toThrow(/cloud metadata endpoint/);
    } finally {
      local.close();
    }
  });

  test('postOnce (the console\'s test DLR) applies the same checks and reads the start of the answer', async () => {
    const before = seen.length;
    await expect(postOnce({ url: `${url}/dlr`, body: '{}', headers: {}, timeoutMs: 1000 }, { allowPrivateTargets: false })).rejects.toBeInstanceOf(WebhookTargetRefusedError);
    expect(seen.length).toBe(before);
    expect(await postOnce({ url: `${url}/down`, body: '{}', headers: {}, timeoutMs: 1000 }, { allowPrivateTargets: true })).toEqual({ status: 503, body: 'ok' });
  });
});
