// The one place engines are started from .tools/bin: nats-server with JetStream and the Temporal
// dev server, as child specs of the Supervisor (./supervisor.ts), each ready once it serves.
// `npm start` starts them on its configured ports (roles/engines.ts); the test stack and the
// benchmarks start them on free loopback ports with startLocalEngines. The scale-out topology's
// clustered engines are scripts/topology/engines.ts (detached processes that outlive the script).
import { join } from 'node:path';
import type { Logger } from './logger';
import { projectPath } from './paths';
import { freePort } from './ports';
import { Supervisor, portOpen, type ChildSpec } from './supervisor';
import { connectTemporal, devServerSpec, temporalRtt, type DevServerTuning } from './temporal';

export const TOOLS_BIN = projectPath('.tools', 'bin');

/** A port nothing listens on at the moment of asking (infra/ports.ts; re-exported for the engines' callers). */
export { freePort };

/** nats-server with JetStream on 127.0.0.1:`port`, its store in `storeDir` (`configFile`: a server config to read first). */
export function natsServerSpec(options: { readonly storeDir: string; readonly port: number; readonly serverName?: string; readonly configFile?: string }): ChildSpec {
  return {
    name: 'nats-server',
    command: join(TOOLS_BIN, 'nats-server'),
    args: [...(options.configFile ? ['-c', options.configFile] : []), '-js', '-sd', options.storeDir, '-a', '127.0.0.1', '-p', String(options.port),
      ...(options.serverName ? ['--server_name', options.serverName] : [])],
    ready: () => portOpen(options.port),
    ports: [options.port],
    hint: `that port ${options.port} is free (NATS_PORT), and that its JetStream store ${options.storeDir} is readable and its disk not full`,
  };
}

/**
 * The Temporal dev server (infra/temporal.ts devServerSpec; `tuning`: other than the product's,
 * bench/temporal-tuning.ts), ready once a client's round trip answers in `namespace`; `nice`:
 * a background process's lower CPU priority (BACKGROUND_NICE; 0 or unset: not lowered).
 */
export function temporalDevSpec(options: { readonly dataDir: string; readonly port: number; readonly uiPort: number; readonly namespace: string; readonly tuning?: DevServerTuning; readonly nice?: number }): ChildSpec {
  const address = `127.0.0.1:${options.port}`;
  const { tuning, nice, ...server } = options;
  const spec = devServerSpec({ binary: join(TOOLS_BIN, 'temporal'), ...server }, async () => {
    if (!(await portOpen(options.port))) return false;
    const probe = await connectTemporal({ address, namespace: options.namespace });
    try {
      await temporalRtt(probe);
      return true;
    } finally {
      await probe.close();
    }
  }, tuning);
  const hint = `that ports ${options.port} and ${options.uiPort} are free (TEMPORAL_PORT, TEMPORAL_UI_PORT), that ${join(options.dataDir, 'temporal.db')} is readable and its disk not full, and on a busy machine BACKGROUND_NICE=0`;
  return { ...spec, ports: [options.port, options.uiPort], hint, ...(nice ? { nice } : {}) };
}

export interface LocalEngines {
  readonly natsUrl: string;
  readonly temporalAddress: string;
  /** Stops nats-server, waits `pauseMs`, starts it again on the same port and store. */
  restartNats(pauseMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * nats-server and the Temporal dev server (namespace "default") on free loopback ports, with
 * their data under `dir`: the engines of the test stack and of the benchmarks. `backgroundNice`:
 * the Temporal dev server's nice value, as `npm start` gives it (BACKGROUND_NICE; 0, the
 * default here: not lowered).
 */
export async function startLocalEngines(dir: string, log: Logger, options: { readonly backgroundNice?: number } = {}): Promise<LocalEngines> {
  // Two supervisors: restarting nats-server stops only it.
  const nats = new Supervisor(dir, log);
  const natsPort = await freePort();
  const natsSpec = natsServerSpec({ storeDir: join(dir, 'nats'), port: natsPort });
  await nats.start(natsSpec);
  const temporal = new Supervisor(join(dir, 't'), log);
  try {
    const temporalPort = await freePort();
    await temporal.start(temporalDevSpec({ dataDir: dir, port: temporalPort, uiPort: await freePort(), namespace: 'default', nice: options.backgroundNice ?? 0 }));
    return {
      natsUrl: `nats://127.0.0.1:${natsPort}`,
      temporalAddress: `127.0.0.1:${temporalPort}`,
      restartNats: async (pauseMs = 1000) => {
        await nats.stopAll();
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        await nats.start(natsSpec);
      },
      stop: async () => { await temporal.stopAll(); await nats.stopAll(); },
    };
  } catch (err) {
    await nats.stopAll();
    throw err;
  }
}
