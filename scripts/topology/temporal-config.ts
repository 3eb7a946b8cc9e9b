// Static config of the Temporal server of the topology: PostgreSQL persistence and
// visibility, every service in one process on loopback, TOPOLOGY.historyShards shards, and
// the same dynamic config file as compose (compose/temporal/dynamicconfig/sms-platform.yaml).
import { join } from 'node:path';
import { PORTS, ROOT, TOPOLOGY } from './plan';

export const DYNAMIC_CONFIG = join(ROOT, 'compose', 'temporal', 'dynamicconfig', 'sms-platform.yaml');

export function temporalConfig(db: { postgresPort: number; user: string; password: string }): string {
  const t = PORTS.temporal;
  const store = (name: string, conns: number): string => `    ${name}:
      sql:
        pluginName: "postgres12"
        databaseName: "${name === 'default' ? 'temporal' : 'temporal_visibility'}"
        connectAddr: "127.0.0.1:${db.postgresPort}"
        connectProtocol: "tcp"
        user: "${db.user}"
        password: "${db.password}"
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: "1h"`;
  const service = (grpc: number, membership: number, http?: number): string => `    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `# Written by scripts/topology (npm run topology -- up); regenerated on every up.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${TOPOLOGY.historyShards}
  datastores:
${store('default', 20)}
${store('visibility', 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
services:
  frontend:
${service(t.frontend, t.membership, t.frontendHttp)}
  history:
${service(t.history, t.membership + 1)}
  matching:
${service(t.matching, t.membership + 2)}
  worker:
${service(t.worker, t.membership + 6)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${t.frontend}"
      httpAddress: "127.0.0.1:${t.frontendHttp}"
dcRedirectionPolicy:
  policy: "noop"
archival:
  history:
    state: "disabled"
  visibility:
    state: "disabled"
namespaceDefaults:
  archival:
    history:
      state: "disabled"
    visibility:
      state: "disabled"
dynamicConfigClient:
  filepath: "${DYNAMIC_CONFIG}"
  pollInterval: "10s"
`;
}
