// The engines a reliability run drives from outside: a nats-server it can restart and a
// Temporal dev server, from .tools/bin, on free loopback ports, with data under `dir`.
import { join } from 'node:path';
import type { Logger } from '../../infra/logger';
import { Supervisor, portOpen } from '../../infra/supervisor';
import { connectTemporal, devServerSpec, temporalRtt } from '../../infra/temporal';
import { freePort } from '../../test/support/global-setup';

const TOOLS = join(__dirname, '..', '..', '.tools', 'bin');

export interface BenchEngines {
  readonly natsUrl: string;
  readonly temporalAddress: string;
  /** Stops nats-server, waits `pauseMs`, starts it again on the same port and store. */
  restartNats(pauseMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startBenchEngines(dir: string, log: Logger): Promise<BenchEngines> {
  const nats = new Supervisor(dir, log);
  const natsPort = await freePort();
  const natsSpec = { name: 'nats-server', command: join(TOOLS, 'nats-server'), args: ['-js', '-sd', join(dir, 'nats'), '-a', '127.0.0.1', '-p', String(natsPort)], ready: () => portOpen(natsPort) };
  await nats.start(natsSpec);
  const temporalPort = await freePort();
  const temporalAddress = `127.0.0.1:${temporalPort}`;
  const temporal = new Supervisor(join(dir, 't'), log);
  await temporal.start(devServerSpec({ binary: join(TOOLS, 'temporal'), dataDir: dir, port: temporalPort, uiPort: await freePort(), namespace: 'default' }, async () => {
    if (!(await portOpen(temporalPort))) return false;
    const probe = await connectTemporal({ address: temporalAddress, namespace: 'default' });
    try { await temporalRtt(probe); return true; } finally { await probe.close(); }
  }));
  return {
    natsUrl: `nats://127.0.0.1:${natsPort}`,
    temporalAddress,
    restartNats: async (pauseMs = 1000) => {
      await nats.stopAll();
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      await nats.start(natsSpec);
    },
    stop: async () => { await temporal.stopAll(); await nats.stopAll(); },
  };
}
