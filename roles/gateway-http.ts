// The gateway-http role: the Express app (SMS API v1, legacy API, ops endpoints) on HTTP_PORT.
import { createServer, type Server } from 'node:http';
import type { Config } from '../config';
import type { Logger } from '../infra/logger';
import { createHttpApp } from '../gateways/http/app';
import type { Engines } from './engines';

export interface HttpRole {
  readonly server: Server;
  stop(): Promise<void>;
}

export async function startHttpGateway(config: Config, engines: Engines, log: Logger): Promise<HttpRole> {
  const app = createHttpApp({ config, engines, log });
  const server = createServer({ keepAliveTimeout: 65_000 }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.http.port, config.http.host, () => resolve());
  });
  log.info({ port: config.http.port }, 'http gateway listening');
  return {
    server,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
