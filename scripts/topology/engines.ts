// The engines of the topology: three clustered nats-servers, a PostgreSQL instance of our
// own (initdb + pg_ctl on a loopback port, data in data/topology/postgres: never the system
// service) and the Temporal server on it. Installs what is missing lazily: the Temporal
// server and its SQL tool from the Go module proxy into .tools/bin, PostgreSQL with apt.
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { launch, pidOf, portOpen, say, stop, waitFor } from './processes';
import { NATS_NODES, PORTS, STATE, TEMPORAL_ADDRESS, TOOLS_BIN, TOPOLOGY } from './plan';
import { temporalConfig } from './temporal-config';

const TEMPORAL_MODULE = 'go.temporal.io/server';
const TEMPORAL_BIN = join(TOOLS_BIN, 'temporal-server');
const SQL_TOOL_BIN = join(TOOLS_BIN, 'temporal-sql-tool');
const PG_DATA = join(STATE, 'postgres');
const TEMPORAL_ROOT = join(STATE, 'temporal');
const PG_USER = 'temporal';
const PG_PASSWORD = 'temporal';

function sh(command: string, args: string[], options: { env?: Record<string, string>; quiet?: boolean } = {}): { ok: boolean; out: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, ...options.env }, stdio: options.quiet === false ? 'inherit' : 'pipe' });
  return { ok: result.status === 0, out: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

// ---- installs (lazy: only `npm run topology -- up` needs them) ----

function goInstall(pkg: string, produced: string, target: string): void {
  const stamp = join(dirname(target), `.${basename(target)}.installed`);
  const wanted = `${pkg}@${TOPOLOGY.temporalVersion}`;
  if (existsSync(target) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === wanted) return;
  if (!sh('go', ['version']).ok) throw new Error(`${wanted} is built with Go (>= 1.24), and go is not on PATH: install Go from go.dev or your OS packages, then rerun.`);
  say(`building ${wanted} into .tools/bin (first time only, a few minutes)`);
  const dir = join(STATE, 'gobin');
  mkdirSync(dir, { recursive: true });
  const built = sh('go', ['install', wanted], { env: { GOBIN: dir }, quiet: false });
  if (!built.ok) throw new Error(`go install ${wanted} failed: check that the Go module proxy is reachable (go env GOPROXY).`);
  mkdirSync(TOOLS_BIN, { recursive: true });
  sh('mv', [join(dir, produced), target]);
  writeFileSync(stamp, wanted);
}

export function ensureTemporalBuilds(): void {
  goInstall(`${TEMPORAL_MODULE}/cmd/server`, 'server', TEMPORAL_BIN);
  goInstall(`${TEMPORAL_MODULE}/cmd/tools/sql`, 'sql', SQL_TOOL_BIN);
}

function pgBin(name: string): string {
  const found = sh('sh', ['-c', `ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1`]).out.trim();
  return found ? join(found, name) : name;
}

export function ensurePostgresInstalled(): void {
  if (existsSync(pgBin('pg_ctl'))) return;
  say('PostgreSQL is not installed: apt-get install -y postgresql');
  const ok = sh('sh', ['-c', 'apt-get install -y postgresql >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y postgresql >/dev/null 2>&1)']).ok;
  if (!ok || !existsSync(pgBin('pg_ctl'))) {
    throw new Error('PostgreSQL is needed by the Temporal server and could not be installed with apt-get (not Debian/Ubuntu, or not root). Install PostgreSQL >= 12 so that pg_ctl and initdb are under /usr/lib/postgresql/<version>/bin, then rerun.');
  }
}

// ---- NATS ----

export async function startNats(): Promise<void> {
  const routes = NATS_NODES.map((n) => `nats://127.0.0.1:${n.cluster}`).join(',');
  for (const node of NATS_NODES) {
    const { started } = launch({
      name: node.name,
      command: join(TOOLS_BIN, 'nats-server'),
      args: ['-js', '--server_name', node.name, '--store_dir', join(STATE, node.name), '-a', '127.0.0.1', '-p', String(node.port),
        '--http_port', String(node.monitor), '--cluster_name', 'sms-platform', '--cluster', `nats://127.0.0.1:${node.cluster}`, '--routes', routes],
    });
    say(`${node.name}: ${started ? 'started' : 'running'} on 127.0.0.1:${node.port}`);
  }
  // /healthz answers 200 once JetStream is up and the node sees the meta leader.
  for (const node of NATS_NODES) {
    await waitFor(`${node.name} JetStream`, async () => (await fetch(`http://127.0.0.1:${node.monitor}/healthz`)).ok, 60_000, node.name);
  }
  say('NATS: 3-node JetStream cluster healthy');
}

// ---- PostgreSQL ----

const asRoot = process.getuid?.() === 0;
/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user. */
function pg(name: string, args: string[]): { ok: boolean; out: string } {
  return asRoot ? sh('runuser', ['-u', 'postgres', '--', pgBin(name), ...args]) : sh(pgBin(name), args);
}

export async function startPostgres(): Promise<void> {
  ensurePostgresInstalled();
  if (!existsSync(join(PG_DATA, 'PG_VERSION'))) {
    mkdirSync(PG_DATA, { recursive: true });
    if (asRoot) {
      const ids = sh('id', ['-u', 'postgres']).out.trim();
      const gid = sh('id', ['-g', 'postgres']).out.trim();
      chownSync(PG_DATA, Number(ids), Number(gid));
    }
    say('PostgreSQL: initdb');
    const init = pg('initdb', ['-D', PG_DATA, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    if (!init.ok) throw new Error(`initdb failed:\n${init.out}`);
  }
  if (!(await portOpen(PORTS.postgres))) {
    const started = pg('pg_ctl', ['-D', PG_DATA, '-l', join(PG_DATA, 'server.log'), '-w', '-t', '60', '-o', `-p ${PORTS.postgres} -k ${PG_DATA} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start']);
    if (!started.ok) throw new Error(`PostgreSQL did not start:\n${started.out}`);
    say(`PostgreSQL: started on 127.0.0.1:${PORTS.postgres}`);
  } else say(`PostgreSQL: running on 127.0.0.1:${PORTS.postgres}`);
  const exists = pg('psql', ['-h', '127.0.0.1', '-p', String(PORTS.postgres), '-U', 'postgres', '-tAc', `SELECT 1 FROM pg_roles WHERE rolname='${PG_USER}'`]);
  if (exists.out.trim() !== '1') {
    const created = pg('psql', ['-h', '127.0.0.1', '-p', String(PORTS.postgres), '-U', 'postgres', '-c', `CREATE ROLE ${PG_USER} LOGIN CREATEDB PASSWORD '${PG_PASSWORD}'`]);
    if (!created.ok) throw new Error(`could not create the PostgreSQL role ${PG_USER}:\n${created.out}`);
  }
}

export function stopPostgres(): boolean {
  if (!existsSync(join(PG_DATA, 'postmaster.pid'))) return false;
  pg('pg_ctl', ['-D', PG_DATA, '-m', 'fast', '-w', 'stop']);
  return true;
}

// ---- Temporal ----

/** Creates both databases and brings their schemas to the version of the server module (idempotent). */
function applyTemporalSchema(): void {
  const schemaRoot = join(sh('go', ['env', 'GOMODCACHE']).out.trim(), `${TEMPORAL_MODULE}@${TOPOLOGY.temporalVersion}`, 'schema', 'postgresql', 'v12');
  if (!existsSync(schemaRoot)) throw new Error(`Temporal schema files not found in ${schemaRoot} (the Go module cache)`);
  const tool = (db: string, ...args: string[]): { ok: boolean; out: string } =>
    sh(SQL_TOOL_BIN, ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(PORTS.postgres), '-u', PG_USER, '--pw', PG_PASSWORD, '--db', db, ...args]);
  for (const [db, dir] of [['temporal', 'temporal'], ['temporal_visibility', 'visibility']] as const) {
    tool(db, 'create');
    const setup = tool(db, 'setup-schema', '-v', '0.0');
    const update = tool(db, 'update-schema', '-d', join(schemaRoot, dir, 'versioned'));
    if (!setup.ok || !update.ok) throw new Error(`Temporal schema for ${db} failed:\n${setup.out}\n${update.out}`);
  }
  say('Temporal: schema up to date (temporal, temporal_visibility)');
}

export async function startTemporal(): Promise<void> {
  ensureTemporalBuilds();
  if (pidOf('temporal-server') === undefined) applyTemporalSchema();
  mkdirSync(join(TEMPORAL_ROOT, 'config'), { recursive: true });
  writeFileSync(join(TEMPORAL_ROOT, 'config', 'topology.yaml'), temporalConfig({ postgresPort: PORTS.postgres, user: PG_USER, password: PG_PASSWORD }));
  const { started } = launch({ name: 'temporal-server', command: TEMPORAL_BIN, args: ['--root', TEMPORAL_ROOT, '--config', 'config', '--env', 'topology', '--allow-no-auth', 'start'] });
  say(`Temporal server: ${started ? 'started' : 'running'} (${TOPOLOGY.historyShards} history shards) on ${TEMPORAL_ADDRESS}`);
  const cli = join(TOOLS_BIN, 'temporal');
  await waitFor('Temporal frontend', async () => sh(cli, ['operator', 'cluster', 'health', '--address', TEMPORAL_ADDRESS]).ok, 180_000, 'temporal-server');
  const describe = sh(cli, ['operator', 'namespace', 'describe', '--namespace', TOPOLOGY.namespace, '--address', TEMPORAL_ADDRESS]);
  if (!describe.ok) {
    const created = sh(cli, ['operator', 'namespace', 'create', '--namespace', TOPOLOGY.namespace, '--retention', TOPOLOGY.namespaceRetention, '--address', TEMPORAL_ADDRESS]);
    if (!created.ok && !/already exists/i.test(created.out)) throw new Error(`could not create the Temporal namespace:\n${created.out}`);
    say(`Temporal: namespace "${TOPOLOGY.namespace}" created`);
  }
  // A new namespace takes a moment to reach every service (namespace cache refresh).
  await waitFor('Temporal namespace', async () => sh(cli, ['workflow', 'list', '--namespace', TOPOLOGY.namespace, '--address', TEMPORAL_ADDRESS, '--limit', '1']).ok, 60_000);
  say('Temporal: ready');
}

export const stopTemporal = (): Promise<boolean> => stop('temporal-server');
