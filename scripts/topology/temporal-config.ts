// Static config of the Temporal server of the topology: the template the container's entrypoint
// renders too (compose/temporal/server-config.yaml: PostgreSQL persistence and visibility, every
// service in one process), here on the topology's loopback ports, TOPOLOGY.historyShards shards
// and the same dynamic config file as compose (compose/temporal/dynamicconfig/sms-platform.yaml).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PORTS, ROOT, TOPOLOGY } from './plan';

export const DYNAMIC_CONFIG = join(ROOT, 'compose', 'temporal', 'dynamicconfig', 'sms-platform.yaml');
export const SERVER_CONFIG_TEMPLATE = join(ROOT, 'compose', 'temporal', 'server-config.yaml');

const PLACEHOLDER = /\$\{([A-Z_]+)\}/g;

/**
 * The template with each `${NAME}` replaced by `values[NAME]`, once (a value is never read as a
 * template); a name without a value throws. The same rule as the entrypoint's awk
 * (compose/temporal/server-entrypoint.sh render).
 */
export function renderServerConfig(values: Readonly<Record<string, string | number>>, template = readFileSync(SERVER_CONFIG_TEMPLATE, 'utf8')): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`server-config.yaml: no value for ${name}`);
    return String(value);
  });
}

export function temporalConfig(db: { postgresPort: number; user: string; password: string }): string {
  const t = PORTS.temporal;
  return renderServerConfig({
    SHARDS: TOPOLOGY.historyShards,
    DB_ADDRESS: `127.0.0.1:${db.postgresPort}`,
    DB_USER: db.user,
    DB_PASSWORD: db.password,
    BIND_IP: '127.0.0.1',
    BROADCAST_ADDRESS: '127.0.0.1',
    FRONTEND_PORT: t.frontend,
    FRONTEND_MEMBERSHIP_PORT: t.membership,
    FRONTEND_HTTP_PORT: t.frontendHttp,
    HISTORY_PORT: t.history,
    HISTORY_MEMBERSHIP_PORT: t.membership + 1,
    MATCHING_PORT: t.matching,
    MATCHING_MEMBERSHIP_PORT: t.membership + 2,
    WORKER_PORT: t.worker,
    WORKER_MEMBERSHIP_PORT: t.membership + 6,
    DYNAMIC_CONFIG,
  });
}
