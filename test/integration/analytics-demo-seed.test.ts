// The demo's product token carries analytics:read (docs/analytics.md): a new demo gets every
// product scope, and a demo created before the scope existed gets it on its next start
// (pipelines/demo-seed.ts ensureDemoIngest, the "added later" step with its own KV marker).
import { Kvm } from '@nats-io/kv';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDemoIngest, type DemoCredentials } from '../../pipelines/demo-seed';
import { AccountStore } from '../../stores/account-store';
import { withAccounts } from '../../support/tenants';

test('a demo product token created before analytics:read gets it on the next start, once', async () => {
  await withAccounts(async (_accounts, _balances, nats) => {
    // A bucket of its own: the stack's demo has claimed the markers of the shared one.
    const kv = await new Kvm(nats.nc).create(`demo_seed_${Date.now()}`, { history: 1 });
    const accounts = new AccountStore(kv);
    const dir = mkdtempSync(join(tmpdir(), 'demo-seed-'));
    try {
      const org = await accounts.createOrg({ name: 'Old demo' });
      const project = await accounts.createProject(org.id, 'Demo project');
      const old = await accounts.createToken({ kind: 'product', orgId: org.id, projectId: project.id, scopes: ['ingest:write', 'ingest:read', 'audience:search', 'PROJECT_AGGREGATIONS'] });
      const demo: DemoCredentials = {
        organization: org.id, project: project.id, token: 'unused', tokenId: 'unused', legacyToken: 'unused', smpp: { systemId: 'x', password: 'y' },
        currency: 'EUR', createdAt: new Date().toISOString(), ingest: { project: project.id, datasource: 'ds', token: 'unused' }, audience: { token: old.value },
      };
      await ensureDemoIngest({ accounts, kv, dataDir: dir }, demo);
      expect((await accounts.getToken(old.token.id)).scopes).toEqual(['ingest:write', 'ingest:read', 'audience:search', 'PROJECT_AGGREGATIONS', 'analytics:read']);
      await ensureDemoIngest({ accounts, kv, dataDir: dir }, demo);
      expect((await accounts.getToken(old.token.id)).scopes.filter((s) => s === 'analytics:read')).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await kv.destroy();
    }
  });
});
