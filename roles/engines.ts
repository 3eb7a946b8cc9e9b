// Brings up what the roles of this process need: the embedded engines (unless external
// ones are configured), connections to NATS, Temporal and ClickHouse, the migrations, and
// the stores built on them. One `stop()` closes everything in reverse order.
import { join } from 'node:path';
import type { CarrierRoute, Config } from '../config';
import { clickhouseRtt, migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import type { Logger } from '../infra/logger';
import { connectNats, natsRtt, type Nats } from '../infra/nats';
import { natsServerSpec, temporalDevSpec } from '../infra/local-engines';
import type { RestartPolicy } from '../infra/restart-policy';
import { Supervisor, portOpen } from '../infra/supervisor';
import { connectTemporal, TEMPORAL_CONNECT_WAIT_MS, temporalRtt, type Temporal } from '../infra/temporal';
import { AccountDirectory } from '../stores/account-directory';
import { AccountStore } from '../stores/account-store';
import { BalanceLedger } from '../stores/balance-ledger';
import { RateLimiter } from '../stores/rate-limiter';

export interface Engines {
  readonly nats: Nats;
  readonly temporal: Temporal;
  readonly temporalAddress: string;
  /** The NATS server(s) this process connected to (the embedded one, or NATS_URL). */
  readonly natsUrl: string;
  readonly clickhouse: ClickHouse | undefined;
  readonly accounts: AccountStore;
  readonly directory: AccountDirectory;
  readonly balances: BalanceLedger;
  readonly rateLimiter: RateLimiter;
  readonly probes: Record<string, () => Promise<number>>;
  stop(): Promise<void>;
}

export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
}

/** The route to the embedded carrier simulator; none in production CARRIER_ROUTES (DESIGN §3). */
export function simulatorRoute(config: Config): CarrierRoute | undefined {
  return config.carrier.routes.find((r) => r.name === 'simulator');
}

/**
 * Before anything starts: a port the given roles listen on, taken by another process, fails with
 * a message naming its variable (the engines' ports are checked where they are spawned).
 */
export async function assertRolePortsFree(config: Config, roles: readonly string[]): Promise<void> {
  if (roles.includes('gateway-http')) await assertFree(config.http.port, 'HTTP', 'HTTP_PORT');
  if (roles.includes('gateway-smpp')) await assertFree(config.smpp.port, 'SMPP', 'SMPP_PORT');
  if (roles.includes('simulator') && simulatorRoute(config)) await assertFree(config.simulator.port, 'carrier simulator', 'SIMULATOR_PORT');
}

/** Fails with a message naming the variable to change when something already listens on `port`. */
async function assertFree(port: number, what: string, variable: string): Promise<void> {
  if (await portOpen(port)) {
    throw new PortInUseError(`port ${port} (${what}) is already in use: stop the other process (another \`npm start\`?) or set ${variable}`);
  }
}

/**
 * `restart`: an embedded engine that exited after it was ready is started again (docs/operations.md,
 * "Restarts"); `onGiveUp`: when it keeps exiting, the supervisor stops the others and calls this (main.ts stops the stack).
 */
export async function startEngines(config: Config, log: Logger, options: { clickhouse: boolean; processName: string; restart?: RestartPolicy; onGiveUp?: (err: Error) => void }): Promise<Engines> {
  const supervisor = new Supervisor(config.dataDir, log, { ...(options.restart ? { restart: options.restart } : {}), ...(options.onGiveUp ? { onGiveUp: options.onGiveUp } : {}) });
  const closers: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const close of closers.reverse()) {
      await close().catch((err: unknown) => log.warn({ err }, 'error while stopping'));
    }
    await supervisor.stopAll();
  };

  try {
    // What an earlier run killed with -9 left in $DATA_DIR/run was reaped by main.ts (reapStale) before its port checks.
    const natsUrl = config.nats.url ?? `nats://127.0.0.1:${config.nats.port}`;
    if (!config.nats.url) {
      await assertFree(config.nats.port, 'NATS', 'NATS_PORT');
      await supervisor.start(natsServerSpec({ storeDir: join(config.dataDir, 'nats'), port: config.nats.port, serverName: 'sms-embedded' }));
    }
    const temporalAddress = config.temporal.address ?? `127.0.0.1:${config.temporal.port}`;
    if (!config.temporal.address) {
      await assertFree(config.temporal.port, 'Temporal', 'TEMPORAL_PORT');
      await assertFree(config.temporal.uiPort, 'Temporal UI', 'TEMPORAL_UI_PORT');
      await supervisor.start(temporalDevSpec({ dataDir: config.dataDir, port: config.temporal.port, uiPort: config.temporal.uiPort, namespace: config.temporal.namespace, nice: config.backgroundNice }));
    }

    const nats = await connectNats({ servers: natsUrl, replicas: config.nats.replicas, messageStateTtlHours: config.messageStateTtlHours, name: options.processName }, log);
    closers.push(() => nats.close());
    const temporal = await connectTemporal({ address: temporalAddress, namespace: config.temporal.namespace }, {
      waitMs: TEMPORAL_CONNECT_WAIT_MS,
      onRetry: (err, attempt) => log.warn({ err, attempt, temporalAddress }, 'Temporal does not answer yet (a busy machine or a server still starting); trying again'),
    });
    closers.push(() => temporal.close());

    let clickhouse: ClickHouse | undefined;
    if (options.clickhouse) {
      clickhouse = await openClickHouse({ ...config.clickhouse, embeddedPath: join(config.dataDir, 'clickhouse') });
      closers.push(() => (clickhouse as ClickHouse).close());
      await migrate(clickhouse, log);
    }

    const directory = await AccountDirectory.open(nats.kv.accounts);
    closers.push(async () => directory.stop());

    // An embedded engine being started again is down with why (supervisor.whyDown), not a timeout.
    const unlessDown = (child: string, probe: () => Promise<number>) => (): Promise<number> => {
      const why = supervisor.whyDown(child);
      return why ? Promise.reject(new Error(why)) : probe();
    };
    const probes: Record<string, () => Promise<number>> = {
      nats: unlessDown('nats-server', () => natsRtt(nats)),
      temporal: unlessDown('temporal', () => temporalRtt(temporal)),
    };
    if (clickhouse) probes['clickhouse'] = () => clickhouseRtt(clickhouse as ClickHouse);

    return {
      nats,
      temporal,
      temporalAddress,
      natsUrl,
      clickhouse,
      accounts: new AccountStore(nats.kv.accounts),
      directory,
      balances: new BalanceLedger(nats.kv.balances, nats.pipeline),
      rateLimiter: new RateLimiter(nats.kv.ratelimits, Date.now, nats.pipeline),
      probes,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
