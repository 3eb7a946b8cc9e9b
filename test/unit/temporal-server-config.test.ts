// The Temporal server's config has one source, compose/temporal/server-config.yaml: the
// container's entrypoint (compose/temporal/server-entrypoint.sh) and the topology
// (scripts/topology/temporal-config.ts) both render it. These tests render it both ways and fail
// when the two drift (until 2026-11-26 each wrote its own YAML, and only the topology's had the
// frontend's httpAddress).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PORTS } from '../../scripts/topology/plan';
import { renderServerConfig, temporalConfig } from '../../scripts/topology/temporal-config';

const ENTRYPOINT = join(__dirname, '..', '..', 'compose', 'temporal', 'server-entrypoint.sh');

/** What the entrypoint renders with `env` (its --print-config). */
function entrypointConfig(env: Record<string, string>): string {
  return execFileSync('sh', [ENTRYPOINT, '--print-config'], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env }, encoding: 'utf8' });
}

const CONTAINER_ENV = { POSTGRES_SEEDS: 'postgres', POSTGRES_PWD: 'pw', BROADCAST_ADDRESS: '10.1.2.3' };

/** The dotted path of every leaf of a parsed YAML document. */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [prefix];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) => keyPaths(inner, prefix ? `${prefix}.${key}` : key)).sort();
}

describe('the Temporal server config (compose/temporal/server-config.yaml)', () => {
  test('the entrypoint renders the template as scripts/topology does, with the container\'s values', () => {
    expect(entrypointConfig(CONTAINER_ENV)).toBe(renderServerConfig({
      SHARDS: 8, DB_ADDRESS: 'postgres:5432', DB_USER: 'temporal', DB_PASSWORD: 'pw', BIND_IP: '0.0.0.0', BROADCAST_ADDRESS: '10.1.2.3',
      FRONTEND_PORT: 7233, FRONTEND_MEMBERSHIP_PORT: 6933, FRONTEND_HTTP_PORT: 7243, HISTORY_PORT: 7234, HISTORY_MEMBERSHIP_PORT: 6934,
      MATCHING_PORT: 7235, MATCHING_MEMBERSHIP_PORT: 6935, WORKER_PORT: 7239, WORKER_MEMBERSHIP_PORT: 6939,
      DYNAMIC_CONFIG: '/etc/temporal/config/dynamicconfig/sms-platform.yaml',
    }));
  });

  test('the container\'s config and the topology\'s have the same settings, httpAddress included; only the values differ', () => {
    const container = parse(entrypointConfig(CONTAINER_ENV)) as { clusterMetadata: { clusterInformation: { active: { httpAddress: string } } } };
    const topology = parse(temporalConfig({ postgresPort: PORTS.postgres, user: 'temporal', password: 'pw' })) as typeof container;
    expect(keyPaths(container)).toEqual(keyPaths(topology));
    expect(container.clusterMetadata.clusterInformation.active.httpAddress).toBe('10.1.2.3:7243');
    expect(topology.clusterMetadata.clusterInformation.active.httpAddress).toBe(`127.0.0.1:${PORTS.temporal.frontendHttp}`);
  });

  test('a value is put in as it is, never read as a template, by both renderers', () => {
    const password = 'a&b|c/d$e${SHARDS}';
    const fromShell = parse(entrypointConfig({ ...CONTAINER_ENV, POSTGRES_PWD: password })) as { persistence: { datastores: { default: { sql: { password: string } } } } };
    expect(fromShell.persistence.datastores.default.sql.password).toBe(password);
    expect(renderServerConfig({ X: password }, 'p: ${X}')).toBe(`p: ${password}`);
  });

  test('a placeholder without a value stops both renderers', () => {
    expect(() => renderServerConfig({}, 'p: ${MISSING}')).toThrow('no value for MISSING');
    const dir = mkdtempSync(join(tmpdir(), 'temporal-config-'));
    try {
      copyFileSync(ENTRYPOINT, join(dir, 'server-entrypoint.sh'));
      writeFileSync(join(dir, 'server-config.yaml'), 'p: ${MISSING}\n');
      const run = spawnSync('sh', [join(dir, 'server-entrypoint.sh'), '--print-config'], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...CONTAINER_ENV }, encoding: 'utf8' });
      expect({ status: run.status, stderr: run.stderr.trim() }).toEqual({ status: 1, stderr: 'server-config.yaml: no value for MISSING' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
