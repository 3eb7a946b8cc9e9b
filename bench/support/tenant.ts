// A benchmark tenant: an organization with a balance large enough for any run, prices, an
// api_sms token and no rate-limit ceiling that a run could reach.
import { toMicros } from '../../core/money';
import { createLogger } from '../../infra/logger';
import { connectNats } from '../../infra/nats';
import { AccountStore } from '../../stores/account-store';
import { BalanceLedger } from '../../stores/balance-ledger';
import { DatasourceStore } from '../../stores/datasource-store';

export async function createTenantAt(natsUrl: string, httpUrl: string, webhookUrl?: string, replicas = 1): Promise<{ orgId: string; tokenId: string; token: string }> {
  // replicas: as the product's NATS_REPLICAS (connecting updates the streams to it).
  const nats = await connectNats({ servers: natsUrl, replicas, messageStateTtlHours: 168, name: 'bench' }, createLogger('warn'));
  try {
    const accounts = new AccountStore(nats.kv.accounts);
    const org = await accounts.createOrg({ name: 'Bench Org', currency: 'EUR' });
    const project = await accounts.createProject(org.id, 'bench');
    await accounts.setPrice(org.id, 'sms', 'DE', { country: 'DE', currency: 'EUR', priceMicros: toMicros(0.01) });
    await new BalanceLedger(nats.kv.balances).set(org.id, { currency: 'EUR', availableMicros: toMicros(1e9) });
    const { token, value } = await accounts.createToken({ kind: 'api_sms', orgId: org.id, projectId: project.id });
    if (webhookUrl) await accounts.setWebhook(token.id, webhookUrl);
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${httpUrl}/transactional/v1/organization/account`, { headers: { authorization: `Bearer ${value}` } });
      if (res.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { orgId: org.id, tokenId: token.id, token: value };
  } finally {
    await nats.close();
  }
}

/**
 * An organization with a project, a datasource and its datasource token, for the ingestion
 * benchmarks; waits until the product accepts the token. Returns the datasource's stream URL.
 */
export async function createDatasourceAt(natsUrl: string, httpUrl: string, name: string): Promise<{ projectId: string; datasourceId: string; token: string; stream: string }> {
  const nats = await connectNats({ servers: natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'bench' }, createLogger('warn'));
  try {
    const accounts = new AccountStore(nats.kv.accounts);
    const org = await accounts.createOrg({ name: `${name} org` });
    const project = await accounts.createProject(org.id, name);
    const ds = await new DatasourceStore(nats.kv.accounts, accounts).create(project.id, name);
    const { value: token } = await accounts.createToken({ kind: 'datasource', orgId: org.id, projectId: project.id, datasourceId: ds.id });
    const stream = `${httpUrl}/ingest/v1/project/${project.id}/datasource/${ds.id}/stream`;
    for (let i = 0; i < 600; i++) {
      if ((await fetch(stream, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status, () => 0)) === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { projectId: project.id, datasourceId: ds.id, token, stream };
  } finally {
    await nats.close();
  }
}
