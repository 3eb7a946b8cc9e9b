// Free loopback ports, for the engines started on this machine (infra/local-engines.ts) and the
// Temporal SDK's metrics exporter (infra/temporal.ts). Its own module: local-engines imports
// temporal, so temporal cannot import it from there.
import { createServer } from 'node:net';

/** A port nothing listens on at the moment of asking (the kernel's pick on 127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
