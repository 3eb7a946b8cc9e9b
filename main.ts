// Entry point of every process: `npm start` runs every role on the embedded engines (the
// gateways here, the lifecycle worker and the carrier in two role processes it starts:
// PROCESS_LAYOUT, roles/process-plan.ts); `--role=<name>` (repeatable, or comma-separated) runs
// some roles alone, in this process.
// First: an older Node.js stops here with what to do, before a dependency fails on it.
import './infra/node-version';
import { Command, InvalidArgumentError, Option } from 'commander';
import { join } from 'node:path';
import { ConfigError, loadConfig, type Config } from './config';
import { createLogger, type Logger } from './infra/logger';
import { registry } from './infra/metrics';
import { serveMetrics } from './infra/metrics-server';
import { ROLE_PROCESS_OPTION, connectToParent, startRoleProcesses, type RoleProcesses } from './infra/role-processes';
import { DEFAULT_RESTART_POLICY } from './infra/restart-policy';
import { reapStale } from './infra/supervisor';
import { enableTemporalMetrics } from './infra/temporal';
import { demoBanner, ensureDemo, ensureDemoIngest } from './pipelines/demo-seed';
import { OperatorStore } from './stores/operator-store';
import { assertRolePortsFree, simulatorRoute, startEngines, type Engines } from './roles/engines';
import { ROLES, planProcesses, roleProcessEnv, type ProcessPlan, type Role } from './roles/process-plan';
import { startHttpGateway } from './roles/gateway-http';
import { startSmppGateway } from './roles/gateway-smpp';
import { buildAcceptanceCore, type AcceptanceCore } from './roles/acceptance';
import { startCarrierConnector } from './roles/carrier-connector';
import { startCarrierSimulator } from './roles/carrier-simulator';
import { startDeploymentJobs, startHistory, startWorkerBridge } from './roles/pipelines';
import { lifecyclePorts, startWorker } from './roles/worker';
import { serveClickHouse, serveSecret } from './infra/clickhouse-remote';
import { lowerChdbBackgroundThreads } from './infra/chdb-background';
import { localUrl, writeStackFile } from './infra/stack-file';
import { acceptanceHelpReplies } from './pipelines/help-replies';

/** Roles whose process owns ClickHouse (embedded chdb allows one process per data dir). */
const CLICKHOUSE_ROLES: readonly Role[] = ['gateway-http', 'ingest-writer'];

interface Stoppable {
  stop(): Promise<void>;
}

/** `--serve-clickhouse=<port>`: this process owns embedded chdb and serves it on loopback to the others (infra/clickhouse-remote.ts). */
let serveClickHousePort: number | undefined;

/** `--metrics-port=<port>`: this process serves /metrics on its own port (roles without the HTTP gateway; docs/metrics.md). */
let metricsPort: number | undefined;

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidArgumentError('a port number (1-65535)');
  return port;
}

function parseRoles(argv: string[]): { roles: Role[]; every: boolean; roleProcess: boolean } {
  const program = new Command()
    .name('sms-platform')
    .addOption(new Option('--role <roles...>', `roles to run: all, ${ROLES.join(', ')}`).default(['all']))
    .addOption(new Option('--serve-clickhouse <port>', 'serve this process\'s embedded ClickHouse to the other processes of this machine (CLICKHOUSE_URL=chdb+http://127.0.0.1:<port>)').argParser(Number))
    .addOption(new Option(`${ROLE_PROCESS_OPTION} <name>`, 'set by `npm start` on the role processes it starts').hideHelp())
    .addOption(new Option('--metrics-port <port>', 'serve /metrics on this port too (for processes without the HTTP gateway)').argParser(parsePort))
    .allowExcessArguments(false)
    .parse(argv);
  metricsPort = program.opts<{ metricsPort?: number }>().metricsPort;
  serveClickHousePort = program.opts<{ serveClickhouse?: number }>().serveClickhouse;
  const requested = (program.opts<{ role: string[] }>().role).flatMap((r) => r.split(',')).map((r) => r.trim()).filter(Boolean);
  const roleProcess = program.opts<{ roleProcess?: string }>().roleProcess !== undefined;
  if (requested.includes('all')) return { roles: [...ROLES], every: true, roleProcess };
  for (const role of requested) {
    if (!(ROLES as readonly string[]).includes(role)) program.error(`unknown role "${role}"; known roles: all, ${ROLES.join(', ')}`);
  }
  return { roles: requested as Role[], every: false, roleProcess };
}

async function run(config: Config, plan: ProcessPlan, roleProcess: boolean, log: Logger): Promise<void> {
  const started = performance.now();
  const roles = plan.own;
  // First what an earlier run killed with -9 left behind (engines, role processes): they hold
  // the ports checked next (infra/supervisor.ts reapStale).
  const runDir = join(config.dataDir, 'run');
  await reapStale(runDir, log);
  await assertRolePortsFree(config, [...roles, ...plan.children.flatMap((c) => c.roles)]);
  // An embedded engine or role process that keeps exiting after its restarts stops the stack,
  // exit code 1 (docs/operations.md, "Restarts"); through shutdown once it is defined below.
  const fault = { stop: (err: Error): void => { process.stderr.write(`${err.message}\n`); process.exit(1); } };
  const restart = { ...DEFAULT_RESTART_POLICY, giveUpAfter: config.restartGiveUpAfter };
  const engines: Engines = await startEngines(config, log, {
    clickhouse: roles.some((r) => CLICKHOUSE_ROLES.includes(r)),
    processName: `sms-platform:${roles.join('+')}`,
    restart,
    onGiveUp: (err) => fault.stop(err),
  });
  const children: RoleProcesses | undefined = plan.children.length === 0 ? undefined : startRoleProcesses(
    plan.children.map((child) => ({ name: child.name, roles: child.roles, env: roleProcessEnv(child, { ...engines, dataDir: config.dataDir }), nice: child.background ? config.backgroundNice : 0 })),
    { script: __filename, execArgv: process.execArgv, runDir },
    log,
    { restart, onGiveUp: (err) => fault.stop(err) },
  );
  // Awaited before the gateways open; a failure is seen there, not as an unhandled rejection.
  children?.ready.catch(() => undefined);
  const running: Stoppable[] = [];
  const shutdown = stopOnSignals(running, children, engines, log);
  fault.stop = (err) => {
    process.stderr.write(`${err.message}\n`);
    void shutdown('restart-give-up', 1);
  };

  // One acceptance core per process (roles/acceptance.ts), built by the first role that needs it;
  // pushed before its users, so it stops after them.
  let core: Promise<AcceptanceCore> | undefined;
  const acceptanceCore = (): Promise<AcceptanceCore> => {
    core ??= buildAcceptanceCore(engines).then((built) => {
      running.push({ stop: () => Promise.resolve(built.close()) });
      return built;
    });
    return core;
  };

  // A role process stops with its parent, even one killed with -9 (the IPC channel closes).
  const parent = connectToParent(roleProcess, () => registry.ownMetrics(), () => void shutdown('parent exited'));

  try {
    if (metricsPort !== undefined) running.push(await serveMetrics(metricsPort, config.http.host, log));
    if (roles.includes('worker')) {
      // Before the worker installs the SDK runtime: its metrics exporter is part of the install.
      await enableTemporalMetrics();
      const { nats, directory, balances } = engines;
      const ports = lifecyclePorts(nats, directory, balances, config.lifecycle.webhook.attemptTimeoutMs, log, config.lifecycle.webhook);
      const worker = await startWorker(
        { address: engines.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue },
        { identity: `worker-${process.pid}`, lifecycle: ports },
        log,
      );
      running.push(worker);
      const core = await acceptanceCore();
      running.push(await startWorkerBridge(engines, config, worker, { optOuts: core.optOuts, owners: ports.owners, helpReplies: acceptanceHelpReplies(core.acceptance, engines.directory) }, log));
    }
    // The simulator runs only where a route named `simulator` points at it: the default routes
    // do; production CARRIER_ROUTES do not (DESIGN §3: never enabled in production configs).
    const simulator = simulatorRoute(config);
    if (roles.includes('simulator') && simulator) {
      running.push(await startCarrierSimulator({ port: config.simulator.port, latencyMs: config.carrier.simulatorLatencyMs, systemId: simulator.systemId, password: simulator.password, nats: engines.nats.nc, log }));
    }
    if (roles.includes('carrier')) running.push(await startCarrierConnector({ routes: config.carrier.routes, nats: engines.nats, log }));
    // The in-process engine's merges and background pools at BACKGROUND_NICE (infra/chdb-background.ts).
    if (engines.clickhouse?.insertRaw && config.backgroundNice > 0) running.push(lowerChdbBackgroundThreads({ nice: config.backgroundNice, log }));
    const history = await startHistory(engines, log, { backgroundNice: config.backgroundNice });
    if (history) running.push(history);
    if (engines.clickhouse && serveClickHousePort !== undefined) {
      const { secret, source } = serveSecret(config.clickhouse.password, config.dataDir);
      running.push(await serveClickHouse(engines.clickhouse.client, serveClickHousePort, secret, log));
      log.info({ port: serveClickHousePort, secret: source }, 'the other processes set CLICKHOUSE_URL=chdb+http://127.0.0.1:<port> and CLICKHOUSE_PASSWORD to this secret');
    }
    // One per deployment: the ingest writer, the pipeline metrics, the charge settler (roles/pipelines.ts).
    if (roles.includes('ingest-writer')) await startDeploymentJobs(engines, config, log, running);
    if (children) {
      await children.ready;
      running.push(children);
      registry.setPeers(() => children.metrics());
    }
    if (roles.includes('gateway-http')) {
      // /health also answers for the role processes (`process:<name>`: up with the IPC round trip, or why not).
      const probed = children ? { ...engines, probes: { ...engines.probes, ...children.probes } } : engines;
      running.push(await startHttpGateway(config, probed, await acceptanceCore(), log));
    }
    if (roles.includes('gateway-smpp')) {
      const core = await acceptanceCore();
      const services = { acceptance: core.acceptance, states: core.states, ...(core.scheduledCancel ? { scheduled: core.scheduledCancel } : {}) };
      running.push(await startSmppGateway({ port: config.smpp.port, engines, services, log, options: smppGatewayOptions(config.smpp) }));
    }

    const base = config.demoSeed
      ? await ensureDemo({ accounts: engines.accounts, balances: engines.balances, kv: engines.nats.kv.accounts, dataDir: config.dataDir })
      : undefined;
    const seeded = base ? { ...base, demo: await ensureDemoIngest({ accounts: engines.accounts, kv: engines.nats.kv.accounts, dataDir: config.dataDir, operators: await OperatorStore.open(engines.nats.nc, config.nats.replicas) }, base.demo) } : undefined;
    log.info({ roles, ms: Math.round(performance.now() - started), processes: children?.pids }, 'ready');
    if (parent) {
      parent.ready();
      return;
    }
    // $DATA_DIR/run/stack.json: how the admin CLI of this DATA_DIR finds this stack (removed on exit).
    writeStackFile({ dataDir: config.dataDir, roles, natsUrl: engines.natsUrl, temporalAddress: engines.temporalAddress, webhookAllowPrivateTargets: config.lifecycle.webhook.allowPrivateTargets, ...(config.temporal.address ? {} : { temporalUi: localUrl('http', '127.0.0.1', config.temporal.uiPort) }), ...(roles.includes('gateway-http') ? { httpUrl: localUrl('http', config.http.host, config.http.port) } : {}) });
    const demo = seeded ? demoBanner(seeded.demo, config.http.port, join(config.dataDir, 'demo.json'), config.ingest.basePath, config.audience.basePath) : '';
    process.stderr.write(readyBanner(config, { roles, plan, pids: children?.pids ?? [], clickhouse: Boolean(engines.clickhouse), seconds: (performance.now() - started) / 1000, demo }));
  } catch (err) {
    // Said before the shutdown, which exits.
    reportStartupFailure(log, err);
    await shutdown('startup-failure', 1);
  }
}

/**
 * Stops the process on SIGINT, SIGTERM and an uncaught fault (a fault must not leave the engine
 * children orphaned): the running roles in reverse order, the role processes, then the engines;
 * exits with the code given (1 after a fault: process managers restart on it), or 1 when the stop
 * takes longer than 10 s. Returns the stop, for the other reasons to stop.
 */
function stopOnSignals(running: Stoppable[], children: RoleProcesses | undefined, engines: Engines, log: Logger): (signal: string, exitCode?: number) => Promise<void> {
  let stopping = false;
  const shutdown = async (signal: string, exitCode = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const hardStop = setTimeout(() => {
      log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 9_500);
    hardStop.unref();
    children?.beginStop();
    for (const role of running.reverse()) await role.stop().catch((err: unknown) => log.warn({ err }, 'role stop failed'));
    // Still starting when this process failed: not among the running roles yet.
    await children?.stop();
    await engines.stop();
    clearTimeout(hardStop);
    log.info('stopped');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception');
    void shutdown('uncaughtException', 1);
  });
  process.on('unhandledRejection', (err) => {
    log.fatal({ err }, 'unhandled rejection');
    void shutdown('unhandledRejection', 1);
  });
  return shutdown;
}

/** The SMPP gateway's session limits from its configuration (seconds as the gateway's milliseconds). */
function smppGatewayOptions(smpp: Config['smpp']): Parameters<typeof startSmppGateway>[0]['options'] {
  return {
    maxSessionsPerSystemId: smpp.maxSessionsPerSystemId, window: smpp.window, maxSubmitsPerSecond: smpp.submitsPerSecond,
    idleTimeoutMs: smpp.idleTimeoutSeconds * 1000, concatTimeoutMs: smpp.concatTimeoutSeconds * 1000,
    bindFailureWindowMs: smpp.bindFailureWindowSeconds * 1000, maxBindFailuresPerSystemId: smpp.maxBindFailuresPerSystemId,
    maxBindFailuresPerAddress: smpp.maxBindFailuresPerAddress, bindLockoutMs: smpp.bindLockoutSeconds * 1000,
  };
}

/** What `npm start` prints once ready: the roles, the role processes, where each API and engine answers, the demo credentials. */
function readyBanner(config: Config, ready: { roles: readonly Role[]; plan: ProcessPlan; pids: readonly (number | undefined)[]; clickhouse: boolean; seconds: number; demo: string }): string {
  const { roles, plan, pids } = ready;
  const http = roles.includes('gateway-http');
  const lines = [
    `sms-platform ready in ${ready.seconds.toFixed(1)} s (roles: ${roles.join(', ')})`,
    ...plan.children.map((child, i) => `  + process    ${child.name} (roles: ${child.roles.join(', ')}; pid ${pids[i] ?? '?'})`),
    http ? `  HTTP API     http://localhost:${config.http.port}/transactional/v1  (health: /health, metrics: /metrics)` : '',
    http ? `  Ingestion    http://localhost:${config.http.port}${config.ingest.basePath}/project/{project}/datasource/{datasource}/stream` : '',
    http ? `  Audience     http://localhost:${config.http.port}${config.audience.basePath}/project/{project}/audience/search` : '',
    roles.includes('gateway-smpp') ? `  SMPP         localhost:${config.smpp.port} (v3.4 / v5.0)` : '',
    config.temporal.address ? `  Temporal     ${config.temporal.address}` : `  Temporal UI  http://localhost:${config.temporal.uiPort}`,
    `  NATS         ${config.nats.url ?? `nats://127.0.0.1:${config.nats.port}`}`,
    ready.clickhouse ? `  ClickHouse   ${config.clickhouse.url ?? `embedded (chdb) in ${join(config.dataDir, 'clickhouse')}`}` : '',
    ready.demo,
    'Press Ctrl-C to stop.',
  ];
  return `${lines.filter((l) => l !== '').join('\n')}\n`;
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(2);
  }
  const { roles, every, roleProcess } = parseRoles(process.argv);
  const plan = planProcesses(roles, { every, layout: config.processLayout, child: roleProcess });
  const log = createLogger(config.logLevel, { roles: plan.own.join('+') });
  try {
    await run(config, plan, roleProcess, log);
  } catch (err) {
    reportStartupFailure(log, err);
    process.exit(1);
  }
}

function reportStartupFailure(log: Logger, err: unknown): void {
  log.fatal({ err }, 'start-up failed');
  process.stderr.write(`start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
}

void main();
