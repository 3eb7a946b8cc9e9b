// A nats-server of a test's own, configured as an operator might with a smaller max_payload
// than the stack's (64 KiB instead of 1 MiB), in a temp dir, and a client connected to it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { Supervisor } from '../../infra/supervisor';
import { freePort, natsServerSpec } from '../../infra/local-engines';

export interface SmallPayloadNats {
  readonly nats: Nats;
  /** Closes the client, stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** `name` names the temp dir and the connection. */
export async function startSmallPayloadNats(name: string, maxPayload = 65536): Promise<SmallPayloadNats> {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  writeFileSync(join(dir, 'nats.conf'), `max_payload: ${maxPayload}\n`);
  const port = await freePort();
  const supervisor = new Supervisor(dir, createLogger('error'));
  const stopServer = async (): Promise<void> => {
    await supervisor.stopAll();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await supervisor.start(natsServerSpec({ configFile: join(dir, 'nats.conf'), storeDir: join(dir, 'js'), port }));
    const nats = await connectNats({ servers: `nats://127.0.0.1:${port}`, replicas: 1, messageStateTtlHours: 1, name }, createLogger('error'));
    return {
      nats,
      stop: async () => {
        await nats.close();
        await stopServer();
      },
    };
  } catch (err) {
    await stopServer();
    throw err;
  }
}
