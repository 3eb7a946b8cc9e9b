// The topology of scripts/topology as data: one ClickHouse owner that serves what the gateways
// use, every process on the clustered engines, no port used twice, and a Temporal config with
// the shard count and stores the docs promise.
import { existsSync } from 'node:fs';
import { parse } from 'yaml';
import { CLICKHOUSE_URL, NATS_URL, PORTS, productProcesses, TOPOLOGY } from '../../scripts/topology/plan';
import { DYNAMIC_CONFIG, temporalConfig } from '../../scripts/topology/temporal-config';

const CLICKHOUSE_ROLES = ['gateway-http', 'ingest-writer'];

describe('scripts/topology plan', () => {
  test('exactly one process owns embedded ClickHouse and serves it on the port the others use', () => {
    const users = productProcesses().filter((p) => p.roles.some((r) => CLICKHOUSE_ROLES.includes(r)));
    const owners = users.filter((p) => p.env['CLICKHOUSE_URL'] === undefined);
    expect(owners.map((p) => p.name)).toEqual(['writer']);
    expect(owners[0]?.args).toContain(`--serve-clickhouse=${PORTS.clickhouse}`);
    expect(new URL(CLICKHOUSE_URL).port).toBe(String(PORTS.clickhouse));
    for (const p of users.filter((u) => u !== owners[0])) expect({ name: p.name, url: p.env['CLICKHOUSE_URL'] }).toEqual({ name: p.name, url: CLICKHOUSE_URL });
    // The owner starts first: it runs the migrations before any client connects.
    expect(productProcesses()[0]?.name).toBe('writer');
  });

  test('every product process uses the three NATS nodes with R3, the Temporal server, and its own data dir', () => {
    const processes = productProcesses();
    expect(NATS_URL.split(',')).toHaveLength(3);
    for (const p of processes) {
      expect({ name: p.name, nats: p.env['NATS_URL'], replicas: p.env['NATS_REPLICAS'], temporal: p.env['TEMPORAL_ADDRESS'] })
        .toEqual({ name: p.name, nats: NATS_URL, replicas: String(TOPOLOGY.natsReplicas), temporal: `127.0.0.1:${PORTS.temporal.frontend}` });
    }
    expect(new Set(processes.map((p) => p.env['DATA_DIR'])).size).toBe(processes.length);
    expect(processes.filter((p) => p.env['DEMO_SEED'] === 'true').map((p) => p.name)).toEqual(['gateway-http-1']);
  });

  test('no port is used twice', () => {
    const ports = [...PORTS.nats, ...PORTS.natsCluster, ...PORTS.natsMonitor, PORTS.postgres, ...Object.values(PORTS.temporal), ...PORTS.http, PORTS.smpp, PORTS.simulator, PORTS.clickhouse,
      PORTS.temporal.membership + 1, PORTS.temporal.membership + 2, PORTS.temporal.membership + 6];
    expect(new Set(ports).size).toBe(ports.length);
  });

  test('the Temporal server config: PostgreSQL persistence and visibility, the shard count, the compose dynamic config', () => {
    const config = parse(temporalConfig({ postgresPort: PORTS.postgres, user: 'temporal', password: 'secret' })) as {
      persistence: { numHistoryShards: number; defaultStore: string; visibilityStore: string; datastores: Record<string, { sql: { pluginName: string; databaseName: string; connectAddr: string } }> };
      services: Record<string, { rpc: { grpcPort: number } }>;
      dynamicConfigClient: { filepath: string };
    };
    expect(config.persistence.numHistoryShards).toBe(TOPOLOGY.historyShards);
    expect(TOPOLOGY.historyShards).toBeGreaterThanOrEqual(8);
    const stores = config.persistence.datastores;
    expect(stores[config.persistence.defaultStore]?.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal', connectAddr: `127.0.0.1:${PORTS.postgres}` });
    expect(stores[config.persistence.visibilityStore]?.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal_visibility' });
    expect(Object.keys(config.services).sort()).toEqual(['frontend', 'history', 'matching', 'worker']);
    expect(config.services['frontend']?.rpc.grpcPort).toBe(PORTS.temporal.frontend);
    expect(config.dynamicConfigClient.filepath).toBe(DYNAMIC_CONFIG);
    expect(existsSync(DYNAMIC_CONFIG)).toBe(true);
  });
});
