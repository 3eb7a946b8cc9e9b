// Start-up on a busy machine (docs/configuration.md, BACKGROUND_NICE): a role process's first
// connection to Temporal keeps trying (infra/temporal.ts untilConnected) instead of failing the
// start at the first attempt's deadline. The frontend here is the stack's own, reached through a
// loopback proxy that answers only after a delay longer than one attempt.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { NativeConnection } from '@temporalio/worker';
import { connectTemporal, temporalRtt, untilConnected } from '../../infra/temporal';
import { freePort } from '../../infra/ports';
import { stack } from '../../support/stack';

/** A TCP proxy to `target` on `port` that starts listening `delayMs` from now. */
function delayedProxy(port: number, target: string, delayMs: number): { opened: Promise<Server>; close(): void } {
  const [host, targetPort] = target.split(':') as [string, string];
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const opened = new Promise<Server>((resolve) => {
    setTimeout(() => {
      server = createServer((client) => {
        const upstream = connect(Number(targetPort), host);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      });
      server.listen(port, '127.0.0.1', () => resolve(server as Server));
    }, delayMs);
  });
  return { opened, close: () => { for (const s of sockets) s.destroy(); server?.close(); } };
}

describe('infra/temporal.ts: the first connection waits for a frontend that answers late', () => {
  test('connectTemporal: attempts of 1 s fail while nothing listens, the one after the proxy opens (2.5 s) answers the namespace', async () => {
    const port = await freePort();
    const proxy = delayedProxy(port, stack().temporalAddress, 2_500);
    const retries: number[] = [];
    const started = Date.now();
    try {
      const temporal = await connectTemporal({ address: `127.0.0.1:${port}`, namespace: stack().namespace }, { waitMs: 20_000, attemptMs: 1_000, onRetry: (_err, attempt) => retries.push(attempt) });
      try {
        expect(await temporalRtt(temporal)).toBeGreaterThan(0);
      } finally {
        await temporal.close();
      }
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
      expect(retries.length).toBeGreaterThanOrEqual(1);
    } finally {
      proxy.close();
    }
  }, 30_000);

  test('the worker\'s native connection is retried the same way', async () => {
    const port = await freePort();
    const proxy = delayedProxy(port, stack().temporalAddress, 2_500);
    const retries: number[] = [];
    try {
      const connection = await untilConnected(() => NativeConnection.connect({ address: `127.0.0.1:${port}` }), { waitMs: 20_000, onRetry: (_err, attempt) => retries.push(attempt) });
      await connection.close();
      expect(retries.length).toBeGreaterThanOrEqual(1);
    } finally {
      proxy.close();
    }
  }, 30_000);

  test('with no wait (the CLI\'s default) one failed attempt is the answer, and the error is the SDK\'s', async () => {
    const port = await freePort();
    const started = Date.now();
    await expect(connectTemporal({ address: `127.0.0.1:${port}`, namespace: stack().namespace }, { waitMs: 0, attemptMs: 1_000 })).rejects.toThrow(/deadline|connect|ECONNREFUSED/i);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 15_000);

  test('a wait that ends throws the last attempt\'s error, after trying for the wait', async () => {
    const port = await freePort();
    const started = Date.now();
    let attempts = 0;
    await expect(untilConnected(async (attemptMs) => {
      attempts += 1;
      return connectTemporal({ address: `127.0.0.1:${port}`, namespace: stack().namespace }, { waitMs: 0, attemptMs: Math.min(attemptMs, 500) });
    }, { waitMs: 2_000, attemptMs: 500 })).rejects.toThrow(/deadline|connect|ECONNREFUSED/i);
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
  }, 15_000);
});
