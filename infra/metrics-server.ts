// /metrics for a process that runs no HTTP gateway (worker, SMPP gateway, carrier, ingest
// writer on their own): `--metrics-port=<port>` serves this process's registry, the same
// exposition the HTTP gateway's /metrics gives, so every process can be scraped.
import { createServer, type Server } from 'node:http';
import type { Logger } from './logger';
import { registry } from './metrics';

export interface MetricsServer {
  readonly port: number;
  stop(): Promise<void>;
}

export async function serveMetrics(port: number, host: string, log: Logger): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        log.error({ err }, 'metrics: exposition failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  log.info({ port: bound }, 'metrics endpoint listening');
  return {
    port: bound,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
