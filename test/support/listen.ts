// An in-process HTTP app served on a free port of 127.0.0.1 for a suite, and closed with its
// open connections (keep-alive sockets would hold the server open).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly server: Server;
  /** `http://127.0.0.1:<port>`. */
  readonly base: string;
  close(): Promise<void>;
}

/** Serves `app` (an Express app, or anything with its listen) until close(). */
export async function listenLocal(app: { listen(port: number, host: string): Server }): Promise<Listening> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
