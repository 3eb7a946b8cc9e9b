// Ingestion set-up for integration suites: a datasource (optionally strict) in a fresh
// tenant's project, with a datasource token and product tokens, written straight to KV, and
// helpers to call the ingestion API and wait for the ingest writer.
import type { AttributeType } from '../../core/ingest';
import { DatasourceStore } from '../../stores/datasource-store';
import { eventually } from '../../support/eventually';
import { api } from '../../support/stack';
import { createTenant, withAccounts } from '../../support/tenants';

export const INGEST = '/ingest/v1';

export interface IngestTenant {
  readonly orgId: string;
  readonly projectId: string;
  readonly datasourceId: string;
  /** The datasource token. */
  readonly token: string;
  readonly base: string;
}

export function streamBase(projectId: string, datasourceId: string): string {
  return `${INGEST}/project/${projectId}/datasource/${datasourceId}/stream`;
}

/** Polls `GET /stream` until `token` is known to the product (its account mirror caught up). */
export async function waitForIngestToken(base: string, token: string, timeoutMs = 20_000): Promise<void> {
  await eventually(() => api(base, { token }), { what: `the token to be accepted at ${base}`, until: (res) => res.status === 200, timeoutMs, intervalMs: 25 });
}

export async function createIngestTenant(opts: { strict?: boolean; attributes?: Record<string, AttributeType>; events?: Record<string, Record<string, AttributeType>> } = {}): Promise<IngestTenant> {
  const tenant = await createTenant({ name: 'Ingest Org' });
  const created = await withAccounts(async (accounts, _balances, nats) => {
    const store = new DatasourceStore(nats.kv.accounts, accounts);
    const ds = await store.create(tenant.projectId, 'Test datasource', { strict: opts.strict ?? false });
    for (const [name, type] of Object.entries(opts.attributes ?? {})) await store.declareAttribute(ds.id, name, type);
    for (const [eventType, params] of Object.entries(opts.events ?? {})) await store.declareEventType(ds.id, eventType, params);
    const { value } = await accounts.createToken({ kind: 'datasource', orgId: tenant.orgId, projectId: tenant.projectId, datasourceId: ds.id });
    return { datasourceId: ds.id, token: value };
  });
  const base = streamBase(tenant.projectId, created.datasourceId);
  await waitForIngestToken(base, created.token);
  return { orgId: tenant.orgId, projectId: tenant.projectId, ...created, base };
}

/** Another datasource of the same project, with its own datasource token. */
export async function addDatasource(t: { orgId: string; projectId: string }): Promise<{ datasourceId: string; token: string; base: string }> {
  const created = await withAccounts(async (accounts, _balances, nats) => {
    const ds = await new DatasourceStore(nats.kv.accounts, accounts).create(t.projectId, 'Second datasource');
    const { value } = await accounts.createToken({ kind: 'datasource', orgId: t.orgId, projectId: t.projectId, datasourceId: ds.id });
    return { datasourceId: ds.id, token: value };
  });
  const base = streamBase(t.projectId, created.datasourceId);
  await waitForIngestToken(base, created.token);
  return { ...created, base };
}

export async function productToken(orgId: string, projectId: string, scopes: string[]): Promise<string> {
  return withAccounts(async (accounts) => (await accounts.createToken({ kind: 'product', orgId, projectId, scopes })).value);
}
